"""The records of concat, stack and the ranges concat's adjoint is made of (expr/tensor/joins.py).

As a teacher states them (reverse mode, record.TensorRule):

    concat      C = [A; B]     Ā = C̄[0:m],  B̄ = C̄[m:m+n]   (the slices along the axis)
    stack       C = [uᵀ; vᵀ]   ū = C̄[0],    v̄ = C̄[1]       (the rows; the columns on axis 1)
    range       c = v[a:b]     v̄ = [0; c̄; 0]               (c̄ in its place, zeros elsewhere)

Each is linear, so its tangent is the same operation on the tangents of its
entries (zeros for an entry that does not depend on the variable), as
jax.lax.concatenate's JVP is.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import DiffNeedsComponents
from gradlang.expr.primitives import TensorOperation, TensorRule, register_operation
from gradlang.expr.primitives.record import frameworks
from gradlang.expr.primitives.tangents import TOO_HIGH, no_vector
from gradlang.expr.engine import axes, broadcast, joins, nodes as t, rank, shape_of

# The engine's, imported on first use: the records are made at start-up, the engine is not (issue #41).
Concat, SliceAlong, SliceColumns, SliceRows, Stack, ranged = joins.names(
    "Concat", "SliceAlong", "SliceColumns", "SliceRows", "Stack", "ranged")
Pick = axes.Pick
full = broadcast.full


def _concat(node, ybar, k):
    """Entry k − 1 receives its slice of the adjoint along the axis: from the sizes before it to its own end."""
    if k == 0:
        return None
    axis, parts = node.axis, node.parts
    start = sp.Add(*(shape_of(p)[axis] for p in parts[: k - 1]))
    return ranged(full(ybar, node.shape), axis, start, start + shape_of(parts[k - 1])[axis])


def _stack(node, ybar, k):
    """Entry k − 1 receives its row of the adjoint (its column on axis 1); at a higher rank, its slice along the axis."""
    if k == 0:
        return None
    whole = full(ybar, node.shape)
    if len(node.shape) > 2:
        return Pick(whole, node.args[0], sp.Integer(k - 1))
    return (t.Row if node.axis == 0 else t.Column)(whole, sp.Integer(k - 1))


def _range(node, ybar, k):
    """The base receives the adjoint in the range's place and zeros before and after it."""
    if k:
        return None
    base = shape_of(node.args[0])
    axis = node.axis
    start, stop = node.bounds
    pieces = [(start, None), (None, full(ybar, node.shape)), (sp.expand(base[axis] - stop), None)]
    parts = [piece if size is None else t.Zeros(*_with(base, axis, size))
             for size, piece in pieces if size is None or size != 0]
    return parts[0] if len(parts) == 1 else Concat(sp.Integer(axis), *parts)


def _with(shape: tuple, axis: int, size) -> tuple:
    return shape[:axis] + (size,) + shape[axis + 1:]


def _entries(node, d, extra: tuple) -> list:
    """Each entry's tangent with its shape made explicit (zeros where it does not depend on the variable)."""
    return [full(dk, shape_of(p) + extra) for p, dk in zip(node.parts, d[1:])]


def _variable_length(node, d) -> tuple:
    """The length of the vector variable, read from a tangent that has it (a matrix: the entry's length by it)."""
    for dk in d[1:]:
        if dk != 0 and rank(dk) == 2:
            return (shape_of(dk)[1],)
    raise DiffNeedsComponents(TOO_HIGH)


def _concat_tangent(node, d, vector):
    if not vector:
        return Concat(node.args[0], *_entries(node, d, ()))
    if rank(node) != 1:
        raise DiffNeedsComponents(TOO_HIGH)
    return Concat(node.args[0], *_entries(node, d, _variable_length(node, d)))


_stack_tangent = no_vector(lambda n, d: Stack(n.args[0], *_entries(n, d, ())))


def _rows_tangent(node, d, vector):
    if vector and rank(node) != 1:
        raise DiffNeedsComponents(TOO_HIGH)
    return SliceRows(full(d[0], shape_of(node.args[0]) + (_variable_length(node, [0, d[0]]) if vector else ())),
                     *node.args[1:])


_columns_tangent = no_vector(lambda n, d: SliceColumns(full(d[0], shape_of(n.args[0])), *n.args[1:]))
_along_tangent = no_vector(lambda n, d: SliceAlong(full(d[0], shape_of(n.args[0])), *n.args[1:]))


def _along_export(node) -> str:
    """X[:, :, a:b] in every framework: a colon for each axis before the range's."""
    return "{0}[" + ":, " * node.axis + "{i2}:{i3}]"

register_operation(TensorOperation("concat", (
    TensorRule(Concat, _concat, ("concat: Ā = Ȳ[0:m], B̄ = Ȳ[m:m+n] (slices along the axis)",
                                 r"\bar{A} = \bar{Y}_{0:m},\ \bar{B} = \bar{Y}_{m:m+n}"), _concat_tangent,
               export=frameworks("jnp.concatenate([{rest}], axis={i0})", "torch.cat([{rest}], dim={i0})",
                                 "tf.concat([{rest}], axis={i0})")),)))
register_operation(TensorOperation("stack", (
    TensorRule(Stack, _stack, ("stack: ū = Ȳ[0], v̄ = Ȳ[1] along its axis (rows on axis 0, columns on axis 1)",
                               r"\bar{u} = \bar{Y}_{0},\ \bar{v} = \bar{Y}_{1}"), _stack_tangent,
               export=frameworks("jnp.stack([{rest}], axis={i0})", "torch.stack([{rest}], dim={i0})",
                                 "tf.stack([{rest}], axis={i0})")),)))
register_operation(TensorOperation("range", (
    TensorRule(SliceRows, _range, ("range: v̄ = [0; ȳ; 0] (ȳ in its place)",
                                   r"\bar{v} = \begin{bmatrix} 0 \\ \bar{y} \\ 0 \end{bmatrix}"), _rows_tangent,
               export=frameworks(*3 * ("{0}[{i1}:{i2}]",))),
    TensorRule(SliceColumns, _range, ("range: M̄ = [0, Ȳ, 0] along axis 1 (Ȳ in its place)",
                                      r"\bar{M} = \begin{bmatrix} 0 & \bar{Y} & 0 \end{bmatrix}"), _columns_tangent,
               export=frameworks(*3 * ("{0}[:, {i1}:{i2}]",))),
    TensorRule(SliceAlong, _range, ("range: X̄ = [0, Ȳ, 0] along the axis (Ȳ in its place)",
                                    r"\bar{X} = \begin{bmatrix} 0 & \bar{Y} & 0 \end{bmatrix}_{\text{axis}}"),
               _along_tangent, export=frameworks(*3 * (_along_export,))))))
