"""Subscripts: `v[i]`, `M[i, j]`, `M[i]`, the slices `M[:, j]`, `M[i, :]`, `X[..., k]`, `X[:, :, k]` and the ranges
`v[a:b]`, `M[:, a:b]`, `X[:, :, a:b]`, `X[..., a:b]`.

The Evaluator's methods for the three grammar forms (bound to it as
`_index`, `_column`, `_row`). A vector or matrix of symbolic size is
subscripted by the tensor engine (an entry, a row or a column node); an
array of components is subscripted here, with its indices checked against
its literal shape.
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang.core import tensor_values
from gradlang.core.literal_sizes import as_constant
from gradlang.errors import ShapeError
from gradlang.expr.tensor import nodes as t, shapes
from gradlang.expr.tensor.axes import Pick
from gradlang.expr.tensor.joins import ranged
from gradlang.expr.tensor.lower import lowered
from gradlang.expr.tensor.listed import entry, is_list, refused
from gradlang.expr.values import describe_shape, elements, from_elements, is_scalar, shape_of, to_symbolic


def index(self, node, frame):
    """v[i], M[i, j], and M[i] (row i)."""
    base = to_symbolic(self.evaluate(node.base, frame))
    indices = self._values(node.indices, frame)
    if is_list(base):  # g[0] of grad(L, [W, b]): the first gradient
        return _entry(base, indices, node.indices)
    if tensor_values.involves(base):
        for i, n, arg in zip(indices, t.shape_of(base), node.indices):
            if getattr(i, "is_Integer", False) and getattr(n, "is_Integer", False):
                index_value(i, int(n), arg)  # out of range: placed at the index, as for a list
        return tensor_values.index(base, indices)
    shape = shape_of(base)
    if not shape:
        raise ShapeError("a scalar cannot be indexed")
    if len(indices) > len(shape):
        raise ShapeError(f"{describe_shape(shape)} takes at most {len(shape)} indices, got {len(indices)}")
    positions = [index_value(i, n, arg) for i, n, arg in zip(indices, shape, node.indices)]
    return _part(base, shape, positions)


def _part(base, shape: tuple, positions: list):
    """The entry at these positions (one per axis), or the sub-array they leave (M[i] is row i, X[i] of a
    tensor of rank 3 a matrix), taken from the row-major components."""
    rest = tuple(shape[len(positions):])
    count = math.prod(rest)
    offset = 0
    for position, length in zip(positions, shape):
        offset = offset * length + position
    items = elements(base)[offset * count:(offset + 1) * count]
    return items[0] if not rest else from_elements(rest, items)


def column(self, node, frame):
    """M[:, j]: column j of a matrix, as a vector."""
    return _slice(self, node, frame, lambda base, j: [base[i, j] for i in range(base.rows)], 1, "M[:, j]")


def row(self, node, frame):
    """M[i, :]: row i of a matrix, as a vector (the same as M[i])."""
    return _slice(self, node, frame, lambda base, i: list(base.row(i)), 0, "M[i, :]")


def last(self, node, frame):
    """X[..., k]: index k of the last axis, at any rank (section 3b)."""
    return _slice(self, node, frame, None, -1, "X[..., k]")


def along(self, node, frame):
    """X[:, :, k]: index k of axis 2 or later (section 3b)."""
    return _slice(self, node, frame, None, node.axis, "X[" + ":, " * node.axis + "k]")


def _slice(self, node, frame, take, axis: int, form: str):
    base_node, index_node = node.base, node.index
    base = to_symbolic(self.evaluate(base_node, frame))
    if is_list(base):
        raise refused(f"sliced as {form}").located(base_node.span)
    if tensor_values.involves(base) or (shape_of(base) and (axis < 0 or len(shape_of(base)) > 2)):
        picked = _tensor_slice(as_constant(base), self.evaluate(index_node, frame), axis, form)
        return picked if tensor_values.involves(base) else lowered(picked)
    if len(shape_of(base)) != 2:
        raise ShapeError(f"{form} takes a matrix, not {describe_shape(shape_of(base))}").located(base_node.span)
    position = index_value(self.evaluate(index_node, frame), base.shape[axis], index_node)
    items = take(base, position)
    return from_elements((len(items),), items)


def _tensor_slice(base, position, axis: int, form: str):
    """M[:, j] and M[i, :] of a matrix, a column or a row; of a tensor of rank 3 or more (and X[..., k] of any
    rank) the slice along that axis; of a vector, X[..., k] is its entry."""
    shape = t.shape_of(base)
    if len(shape) < (1 if axis < 0 else axis + 1):
        raise ShapeError(f"{form} takes {'a tensor' if axis < 0 else 'a matrix' if axis == 1 else f'a tensor of rank {axis + 1} or more'}, "
                         f"not {shapes.describe(shape)}")
    axis %= len(shape)
    position = tensor_values.wrapped(position, shape[axis])
    shapes.check_index(position, shape[axis])
    if len(shape) == 1:
        return t.Entry(base, position)
    if len(shape) == 2:
        return t.Column(base, position) if axis == 1 else t.Row(base, position)
    return Pick(base, sp.Integer(axis), position)


def _entry(base, indices: list, nodes):
    """g[k] of a list of tensors: entry k (one index, an integer; negative counts from the end)."""
    if len(indices) != 1:
        raise ShapeError(f"a list of tensors takes one index, got {len(indices)}: index its entry again, as g[0][1]")
    (position,), (node,) = indices, nodes
    if not (isinstance(position, sp.Expr) and position.is_Integer):
        raise ShapeError("an index of a list of tensors must be an integer").located(node.span)
    try:
        return entry(base, int(position))
    except ShapeError as error:
        raise error.located(node.span)


class FreeSubscript(ShapeError):
    """An array of components indexed by a symbol (x[k] by components, k not given yet): at literal sizes an
    `at` that gives k then takes the tensor formula instead (core/evaluate.py), as at a symbolic size."""


def index_value(value, length: int, node) -> int:
    if isinstance(value, sp.Symbol) and not isinstance(value, t.Var):
        raise FreeSubscript("an index must be an integer").located(node.span)
    if not (is_scalar(value) and isinstance(value, sp.Expr) and value.is_Integer):
        raise ShapeError("an index must be an integer").located(node.span)
    position = int(value)
    if not -length <= position < length:
        raise ShapeError(f"index {position} is out of range for length {length}").located(node.span)
    return position % length


def range_of(self, node, frame):
    """v[a:b], M[a:b], M[:, a:b]: the entries a to b - 1 along the axis (bounds integers or size expressions,
    a negative one counting from the end, as Python's), by the tensor engine at every size."""
    base = to_symbolic(self.evaluate(node.base, frame))
    if is_list(base):
        raise refused("sliced by a range").located(node.base.span)
    bounds = [self.evaluate(n, frame) for n in (node.start, node.stop)]
    for value, written in zip(bounds, (node.start, node.stop)):
        if not (isinstance(value, sp.Expr) and value.is_integer):
            raise ShapeError("a range's bounds must be integers or sizes, as v[0:n]").located(written.span)
    value = base if tensor_values.involves(base) else as_constant(base) if shape_of(base) else None
    shape = t.shape_of(value) if value is not None else ()
    if len(shape) <= max(node.axis, 0):
        raise ShapeError(f"a range on axis {node.axis} needs {_needed(node.axis)}, "
                         f"not {describe_shape(shape)}").located(node.base.span)
    axis = node.axis % len(shape)  # X[..., a:b]: the last axis
    start, stop = (tensor_values.wrapped(b, shape[axis]) for b in bounds)
    try:
        shapes.check_range(start, stop, shape[axis])
    except ShapeError as error:
        raise error.located(node.span)
    result = ranged(value, axis, start, stop)
    return result if tensor_values.involves(base) else lowered(result)


def _needed(axis: int) -> str:
    return "a vector" if axis <= 0 else "a matrix" if axis == 1 else f"a tensor of rank {axis + 1} or more"
