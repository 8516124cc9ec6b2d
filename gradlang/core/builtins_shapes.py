"""`broadcast_to`, `expand_dims`, `squeeze` and `transpose` with a permutation (section 3b), at every size.

With a tensor among the arguments the result is one node of the tensor engine
(expr/tensor/axes.py); of a list of numbers or scalars, the same node's
components (expr/tensor/lower.py), so a list and a declared tensor of one
shape give one answer.
"""

from __future__ import annotations

import sympy as sp

from gradlang.core.builtin_table import Call, builtin
from gradlang.core.builtins_vectors import placed
from gradlang.core.literal_sizes import as_constant
from gradlang.errors import ShapeError
from gradlang.expr.engine import axes, lower, nodes as t, rank, shape_of, shapes

# The engine's, imported by the first call: registering these builtins loads none of it (issue #41).
BroadcastTo, ExpandDims, Permute, Squeeze = axes.BroadcastTo, axes.ExpandDims, axes.Permute, axes.Squeeze
broadcast_to = axes.broadcast_to
components = lower.components


def _sizes(value, what: str) -> tuple:
    """A shape written as a tuple (or one size): each a whole number of at least 1, or a size."""
    items = tuple(value) if isinstance(value, sp.Tuple) else (value,)
    for item in items:
        if not (isinstance(item, sp.Expr) and item.is_integer and item.is_positive):
            raise ShapeError(f"{what} takes a shape of sizes, as {what}(v, (m, n)), not {item}")
    return items


def _broadcast(args):
    """The builtin stretches a scalar too (`broadcast_to(1.0, (4, 4, 4))` has 64 entries, as NumPy's); the
    engine's own `broadcast_to` leaves a scalar alone, since arithmetic broadcasts it by itself."""
    u, shape = args
    sizes = _sizes(shape, "broadcast_to")
    return BroadcastTo(u, *sizes) if not shape_of(u) else broadcast_to(u, sizes)


def _expand(args):
    u, axis = args
    count = len(axis) if isinstance(axis, sp.Tuple) else 1
    return ExpandDims(u, *shapes.axes_of(axis, rank(u) + count, "expand_dims"))


def _squeeze(args):
    u, *axis = args
    shape = shape_of(u)
    axes = shapes.axes_of(axis[0], len(shape), "squeeze") if axis else tuple(
        k for k, n in enumerate(shape) if n == 1)
    for k in axes:
        if shape[k] != 1:
            raise ShapeError(f"squeeze can only drop an axis of size 1; axis {k} of {shapes.describe(shape)} is not")
    return Squeeze(u, *axes) if axes else u


def _transpose(args):
    """transpose(A): Aᵀ of a matrix, the axes reversed at any rank (as NumPy); transpose(X, perm) permuted."""
    u = args[0]
    r = rank(u)
    perm = tuple(range(r))[::-1] if len(args) == 1 else _permutation(args[1], r)
    if perm == tuple(range(r)):
        return u
    return t.Transpose(u) if r == 2 else Permute(u, *perm)


def _permutation(value, r: int) -> tuple:
    items = tuple(value) if isinstance(value, sp.Tuple) else (value,)
    if len(items) != r or not all(getattr(i, "is_Integer", False) for i in items) or \
            sorted(int(i) % r if -r <= int(i) < r else -1 for i in items) != list(range(r)):
        raise ShapeError(f"transpose of a tensor of rank {r} takes a permutation of its {r} axes, as (0, 2, 1)")
    return tuple(int(i) % r for i in items)


TABLE = {"broadcast_to": _broadcast, "expand_dims": _expand, "squeeze": _squeeze, "transpose": _transpose}


def _components(name: str):
    """Of a list of numbers or scalars (no tensor): the node's components, as the component engine holds them."""

    def apply(call: Call):
        value = as_constant(call.args[0])  # a list as the tensor engine's constant; a scalar stays itself
        return components(placed(call, 0, TABLE[name], [value, *call.args[1:]]), {})

    return apply


builtin("broadcast_to", 2, 2, "a tensor stretched to a shape, as NumPy broadcasts: broadcast_to(v, (m, n))",
        "broadcast_to([1, 2], (3, 2))", "vector")(_components("broadcast_to"))
builtin("expand_dims", 2, 2, "a new axis of size 1 at the given position (or tuple of them): expand_dims(X, 0)",
        "expand_dims([1, 2], 0)", "vector")(_components("expand_dims"))
builtin("squeeze", 1, 2, "axes of size 1 dropped (every one, or those given): squeeze(X, 0)",
        "squeeze([[1, 2]], 0)", "vector")(_components("squeeze"))
builtin("transpose", 1, 2, "matrix transpose; of a tensor, its axes reversed or permuted: transpose(X, (0, 2, 1))",
        "transpose([[1, 2], [3, 4]])", "vector")(_components("transpose"))
