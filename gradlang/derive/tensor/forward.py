"""Forward mode at the tensor level: `diff` by a scalar, `jacobian` and `hessian` as formulas.

The tangent of a node is its derivative by the variable: shaped like the node
for a scalar variable (a directional derivative), and the node's shape
followed by the variable's length for a vector variable (a Jacobian), so
`jacobian(softmax(x), x)` comes out as `diag(s) − s sᵀ`. Each tensor
operation's tangent rule is in its record (expr/primitives/, beside its
adjoint: `TensorRule.tangent`); this module only walks the formula and looks
them up (`rules()`). An elementwise node combines its arguments' tangents
with the primitive's own partials (diag(f′(u)) J_u).
A rule that would need a tensor of rank three (the derivative of a matrix by
a vector) is refused with a DiffError that names that matrix and suggests
literal sizes. One such matrix is read around: `diag(u) @ b` is `u ⊙ b`, so
its tangent is diag(b) J_u + diag(u) J_b and `jacobian(diag(x) @ x, x)` is
2 diag(x) at any size (`DiagTangent` carries J_u to the product).
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor import reverse
from gradlang.derive.tensor.rewrite import tidy
from gradlang.errors import DiffError, DiffNeedsComponents
from gradlang.expr import primitives
from gradlang.expr.graph import build_dag
from gradlang.expr.primitives.tangents import TOO_HIGH, DiagTangent
from gradlang.expr.source import operation_name, to_source
from gradlang.expr.tensor import axes, nodes as t
from gradlang.expr.tensor.broadcast import full
from gradlang.expr.tensor.nodes import rank, shape_of

def tangent(expr, wrt, tidied: bool = True):
    """d expr / d wrt: shaped like expr (wrt a scalar) or expr's shape + (len(wrt),) (wrt a vector). Untidied,
    the rules' own form: the ledger shows the identity that makes a stop's arriving Jacobian 0 (Σₖ sₖ = 1)."""
    if rank(wrt) > 1 or rank(expr) + rank(wrt) > 2:
        raise DiffNeedsComponents(TOO_HIGH)
    dag = build_dag([expr])
    depends = reverse._depends(dag, {wrt})
    tangents: list = []
    for i, node in enumerate(dag.nodes):
        if not depends[i]:
            tangents.append(sp.S.Zero)
        elif node == wrt:
            tangents.append(t.Eye(shape_of(wrt)[0]) if rank(wrt) else sp.S.One)
        else:
            tangents.append(_placed_tangent(node, [tangents[k] for k in dag.children[i]], wrt))
    result = tidy(tangents[dag.roots[0]]) if tidied else tangents[dag.roots[0]]
    return full(result, shape_of(expr) + shape_of(wrt))


def _placed_tangent(node, arg_tangents: list, wrt):
    """The node's tangent; a step that needs rank three names the matrix whose derivative that is."""
    unwritten = [d for d in arg_tangents if isinstance(d, DiagTangent)]
    if unwritten and not isinstance(node, t.MatMul):
        raise _too_high(next(a for a, d in zip(node.args, arg_tangents) if isinstance(d, DiagTangent)), wrt)
    try:
        return _tangent(node, arg_tangents, wrt)
    except DiffNeedsComponents:
        raise _too_high(node, wrt) from None


def _too_high(node, wrt) -> DiffNeedsComponents:
    return DiffNeedsComponents(
        f"the derivative of {to_source(node)} by {to_source(wrt)} would be a tensor of rank three "
        "(a matrix by a vector) on the way to the result; declare literal sizes and use components")


def _tangent(node, arg_tangents: list, wrt):
    vector = rank(wrt) == 1
    rule = rules().get(type(node))
    if rule is not None:
        return rule(node, arg_tangents, vector)
    if isinstance(node, t.TensorOp):
        raise DiffError(f"{operation_name(node)} has no tangent rule at the tensor level yet; declare literal sizes")
    return sp.Add(*[_elementwise(node, k, d, vector) for k, d in enumerate(arg_tangents) if d != 0])


def _elementwise(node, k: int, arg_tangent, vector: bool):
    partial = reverse._local(node, sp.S.One, k)
    if partial is None or partial == 0:
        return sp.S.Zero
    if not vector:  # d(x − c) = −dc: a scalar tangent beside a vector stands for −dc 𝟙, made explicit
        product = partial * arg_tangent
        return product if product == 0 else full(product, shape_of(node))
    arg = node.args[k]
    if rank(arg) == 1:
        return t.MatMul(t.Diag(partial), arg_tangent) if rank(partial) else partial * arg_tangent
    if rank(node) == 1:
        return t.Outer(full(partial, shape_of(node)), arg_tangent)
    if rank(partial) and rank(arg_tangent) == rank(partial) + 1:
        return _along_variable(partial, arg_tangent) * arg_tangent
    return partial * arg_tangent


def _along_variable(partial, arg_tangent):
    """f′(U) of a matrix or higher U, repeated along the Jacobian's last axis (the vector variable's): the
    tangent of exp(U) is f′(U)[..., None] ⊙ J_U, which `*` alone would read as two unequal shapes."""
    shape = shape_of(arg_tangent)
    return axes.broadcast_to(axes.ExpandDims(partial, len(shape) - 1), shape)


_RULES: dict = {}


def rules() -> dict:
    """Tensor node class -> its tangent rule, from the records (a constant has none: forward mode never enters it)."""
    if not _RULES:
        _RULES.update({cls: rule.tangent for cls, rule in primitives.tensor_rules().items() if rule.tangent is not None})
    return _RULES
