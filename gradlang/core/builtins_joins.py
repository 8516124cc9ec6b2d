"""`concat([A, B], axis)` and `stack([A, B], axis)` (section 3b): the builtins, at every size.

The first argument is a list written in brackets, read entry by entry (the
evaluator hands it over as a TensorList, core/tensor_lists.py), so entries of
different lengths (`R^m` and `R^n`) can be joined; a value that is itself a
stack of vectors, or a matrix of numbers, gives its rows, as NumPy reads an
array as the sequence of its rows. The axis defaults to 0 and may be
negative, or written `axis=`.

With a tensor among the entries the result is one node of the tensor engine
(expr/tensor/joins.py), at literal sizes as at symbolic ones; of lists of
numbers and scalars, it is the same node's components (expr/tensor/lower.py).
"""

from __future__ import annotations

import sympy as sp

from gradlang.core.builtin_table import Call, builtin
from gradlang.core.builtins_vectors import placed
from gradlang.core.literal_sizes import as_constant
from gradlang.errors import ShapeError, ShapeNeedsComponents
from gradlang.expr.engine import TensorList, joins, lower, nodes

# The engine's, imported by the first call: registering concat and stack loads none of it (issue #41).
Concat, Stack, components = joins.Concat, joins.Stack, lower.components
Literal, Row, Zeros = nodes.Literal, nodes.Row, nodes.Zeros

NAMES = ("concat", "stack")
_NODES = {"concat": Concat, "stack": Stack}


def entries(name: str, value) -> list:
    """The entries a join reads from its first argument: a list's, a stack's, or a matrix's rows."""
    if isinstance(value, TensorList):
        return list(value.entries)
    if isinstance(value, Stack) and value.axis == 0:
        return list(value.parts)
    if isinstance(value, (sp.NDimArray, sp.MatrixBase)) and len(value.shape) == 2:
        return [sp.ImmutableDenseNDimArray(list(row), (value.shape[1],)) for row in value.tolist()]
    if isinstance(value, Literal) and len(value.shape) == 2:
        return [Row(value, sp.Integer(i)) for i in range(int(value.shape[0]))]
    raise ShapeError(f"{name} takes a list of vectors or matrices, as {name}([A, B], 0)")


def _axis(args: list):
    axis = args[1] if len(args) > 1 else sp.S.Zero
    if not getattr(axis, "is_Integer", False):
        raise ShapeError("the axis must be an integer, as in concat([A, B], 1)")
    return axis


def _as_tensor(entry):
    """An entry as a node of the formula: a list of numbers is a constant; a list of components has none."""
    if isinstance(entry, (sp.NDimArray, sp.MatrixBase)):
        if any(not (e.is_Number and e.is_finite) for e in entry):
            raise ShapeNeedsComponents("a list of components beside a tensor takes the components' path")
        if all(e == 0 for e in entry):  # zeros(2) at a literal size: a zero that keeps its shape, as it reads
            return Zeros(*entry.shape)
        return as_constant(entry)
    return entry


def tensor_join(name: str):
    """The tensor engine's concat or stack (core/tensor_values.py's TABLE)."""

    def apply(args):
        parts = [_as_tensor(e) for e in entries(name, args[0])]
        if not parts:
            raise ShapeError(f"{name} needs at least one entry")
        node = _NODES[name](_axis(args), *parts)
        node.shape  # noqa: B018 - its shape is checked now, where the call is written
        return _normal(node)

    return apply


def _normal(node):
    """The node with its axis counted from 0 (`-1` is the last axis), so one value prints one way."""
    return type(node)(sp.Integer(int(node.args[0]) % len(node.shape)), *node.parts)


def _components(name: str):
    """Of lists of numbers and scalars (no tensor): the node's components, as the component engine holds them."""

    def apply(call: Call):
        parts = placed(call, 0, entries, name, call.args[0])
        if not parts or any(not isinstance(p, (sp.NDimArray, sp.MatrixBase)) for p in parts):
            error = ShapeError(f"{name} joins vectors or matrices, as {name}([[1, 2], [3]], 0)")
            raise error.located(call.nodes[0].span)
        node = placed(call, 0, tensor_join(name), [TensorList(*(Literal.of(p) for p in parts)), *call.args[1:]])
        return components(node, {})

    return apply


builtin("concat", 1, 2, "join vectors or matrices along an axis (default 0): concat([A, B], axis)",
        "concat([[1, 2], [3]], 0)", "vector")(_components("concat"))
builtin("stack", 1, 2, "vectors as the rows (axis 0) or columns (axis 1) of a matrix: stack([u, v], axis)",
        "stack([[1, 2], [3, 4]], 1)", "vector")(_components("stack"))

__all__ = ["NAMES", "entries", "tensor_join"]
