"""Tensor operations of real training code that are not elementwise: torch.stack, masked_fill, bmm, cumsum,
and the values of sort / topk — each written with the language's own stack, where, einsum and products with
constant matrices, so that the gradient is PyTorch's.

A position that depends on values (the order sort and topk find) is fixed at the traced point, as an argmax
is: the values are a gather at those positions, their gradient a scatter back (piecewise constant order).
"""

from __future__ import annotations

import numpy as np

from gradlang.frameworks import ops
from gradlang.frameworks.program import TranslateError, Value, constant, fill, number
from gradlang.frameworks.torch_joins import einsum_text, gradlang_axis


def stack(step):
    """torch.stack(tensors, dim): gradlang's stack along the new axis (the part itself when it has length 1)."""
    shape = step.shape
    axis = step.arg(1, "dim", 0) % len(shape)
    parts = step.arg(0, "tensors", [])
    if not all(isinstance(p, Value) for p in parts):
        raise TranslateError("a stack of a value that is not a tensor")
    if shape[axis] == 1:
        return Value(fill(parts[0]).text, shape, parts[0].prec)
    if not tuple(d for i, d in enumerate(shape) if i != axis and d != 1):  # scalars stacked: a vector
        return Value(f"[{', '.join(fill(p).text for p in parts)}]", shape)
    return Value(f"stack([{', '.join(fill(p).text for p in parts)}], {gradlang_axis(shape, axis)})", shape)


def masked_fill(step):
    """masked_fill(self, mask, value): where(mask, value, self); a mask that compares traced values is written
    as that comparison, a constant one as its numbers."""
    value = step.arg(2, "value", 0.0)
    value = value if isinstance(value, Value) else number(value)
    mask = step.node.args[1]
    condition = step.walker.conditions.get(mask) or step.tensor(1)
    return ops.where(condition, value, step.tensor(0), step.shape)


def bmm(step):
    """torch.bmm / a batched matmul: einsum("bij,bjk->bik")."""
    return einsum_text("bij,bjk->bik", [step.tensor(0), step.tensor(1)], step.shape)


def cumsum(step):
    """cumsum(x, dim): a product with the constant lower-triangular matrix of ones along dim."""
    a = step.tensor(0)
    dim = step.arg(1, "dim", 0) % len(a.shape)
    return along_matrix(a, np.tril(np.ones((a.shape[dim], a.shape[dim]))), dim, step.shape)


def along_matrix(a: Value, matrix: np.ndarray, dim: int, shape: tuple) -> Value:
    """M applied along axis `dim` of `a` (result[..., i, ...] = Σ_k M[i, k] a[..., k, ...]): M @ a on the first
    axis, a @ Mᵀ on the last."""
    if matrix.shape == (1, 1):
        return ops.binary("*", a, number(float(matrix[0, 0])), shape)
    written = constant(matrix, matrix.shape)
    if dim == 0:
        return ops.contract(written, a, (1,), (0,), shape)
    if dim == len(shape) - 1:
        return ops.contract(a, Value(f"transpose({written.text})", matrix.shape[::-1]), (dim,), (0,), shape)
    raise TranslateError("a sum or scatter along an axis other than the first or the last")


def ordered(step):
    """sort / topk: (values, indices); the values are the input at the positions found at the traced point
    (a gather), the indices constants."""
    a = step.tensor(0)
    name = str(step.node.target).split(".")[1]
    dim = step.arg(2 if name == "topk" else 1, "dim", -1) % len(a.shape)
    indices = step.at[step.node][1].numpy()
    grid = list(np.indices(indices.shape))
    grid[dim] = indices
    positions = np.ravel_multi_index(tuple(grid), a.shape)
    return [ops.picked(a, positions, step.shapes[0]), step.constant(1)]
