"""Forward mode at the tensor level: `diff` by a scalar, `jacobian` and `hessian` as formulas.

The tangent of a node is its derivative by the variable: shaped like the node
for a scalar variable (a directional derivative), and the node's shape
followed by the variable's length for a vector variable (a Jacobian), so
`jacobian(softmax(x), x)` comes out as `diag(s) − s sᵀ`. Each tensor
operation has its tangent rule in `RULES`; an elementwise node combines its
arguments' tangents with the primitive's own partials (diag(f′(u)) J_u).
A rule that would need a tensor of rank three (the derivative of a matrix by
a vector) is refused with a DiffError that names that matrix and suggests
literal sizes. One such matrix is read around: `diag(u) @ b` is `u ⊙ b`, so
its tangent is diag(b) J_u + diag(u) J_b and `jacobian(diag(x) @ x, x)` is
2 diag(x) at any size (`_DiagTangent` carries J_u to the product).
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor import reverse
from gradlang.derive.tensor.rewrite import tidy
from gradlang.errors import DiffError, DiffNeedsComponents
from gradlang.expr.graph import build_dag
from gradlang.expr.primitives.tensor_ops import others
from gradlang.expr.source import operation_name, to_source
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.broadcast import full, spread
from gradlang.expr.tensor.nodes import rank, shape_of

_TOO_HIGH = "this derivative would be a tensor of rank three; declare literal sizes and use components"


class _DiagTangent:
    """The tangent of diag(u) by a vector (rank three, never written): J_u, for the product that reads it."""

    def __init__(self, of_u):
        self.of_u = of_u


def tangent(expr, wrt):
    """d expr / d wrt: shaped like expr (wrt a scalar) or expr's shape + (len(wrt),) (wrt a vector)."""
    if rank(wrt) > 1 or rank(expr) + rank(wrt) > 2:
        raise DiffNeedsComponents(_TOO_HIGH)
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
    result = tidy(tangents[dag.roots[0]])
    return full(result, shape_of(expr) + shape_of(wrt))


def _placed_tangent(node, arg_tangents: list, wrt):
    """The node's tangent; a step that needs rank three names the matrix whose derivative that is."""
    unwritten = [d for d in arg_tangents if isinstance(d, _DiagTangent)]
    if unwritten and not isinstance(node, t.MatMul):
        raise _too_high(next(a for a, d in zip(node.args, arg_tangents) if isinstance(d, _DiagTangent)), wrt)
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
    rule = RULES.get(type(node))
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
    return partial * arg_tangent


def _sum_of(*terms):
    return sp.Add(*[term for term in terms if term is not None])


def _matmul(node, d, vector):
    a, b = node.args
    da, db = d
    if isinstance(da, _DiagTangent) or isinstance(db, _DiagTangent):
        return _diag_product(a, b, da, db)
    if vector:
        if rank(a) == 2 and rank(b) == 1 and da == 0:  # A x: A J_x
            return t.MatMul(a, db)
        if rank(a) == 1 and rank(b) == 2 and db == 0:  # x @ B: Bᵀ J_x
            return t.MatMul(t.Transpose(b), da)
        raise DiffNeedsComponents(_TOO_HIGH)
    return _sum_of(t.MatMul(da, b) if da != 0 else None, t.MatMul(a, db) if db != 0 else None)


def _diag_product(a, b, da, db):
    """diag(u) @ b = u ⊙ b (and a @ diag(u) = a ⊙ u): diag(b) J_u + diag(u) J_b, never the rank-three J of diag(u)."""
    if isinstance(da, _DiagTangent) and isinstance(db, _DiagTangent) or rank(a) + rank(b) != 3:
        raise DiffNeedsComponents(_TOO_HIGH)  # diag(u) @ diag(v), or diag(u) @ M: a matrix by a vector
    if isinstance(da, _DiagTangent):
        return _sum_of(t.MatMul(t.Diag(b), da.of_u), t.MatMul(a, db) if db != 0 else None)
    return _sum_of(t.MatMul(t.Diag(a), db.of_u), t.MatMul(t.Transpose(b), da) if da != 0 else None)


def _dot(node, d, vector):
    a, b = node.args
    da, db = d
    if vector:
        return _sum_of(t.MatMul(b, da) if da != 0 else None, t.MatMul(a, db) if db != 0 else None)
    return _sum_of(t.Dot(da, b) if da != 0 else None, t.Dot(a, db) if db != 0 else None)


def _linear(build_scalar, build_vector):
    def rule(node, d, vector):
        return build_vector(node, d[0]) if vector else build_scalar(node, d[0])

    return rule


def _softmax_vector(node, d):
    return t.MatMul(t.Diag(node) - t.Outer(node, node), d)


def _inner(u, d, vector: bool):
    """⟨u, du⟩: dot for vectors (u @ J by a vector), for matrices the Frobenius Σ(U ⊙ dU), not U @ dU."""
    if rank(u) == 2:
        if vector:
            raise DiffNeedsComponents(_TOO_HIGH)
        return t.Total(u * d)
    return t.MatMul(u, d) if vector else t.Dot(u, d)


def _norm(node, d, vector: bool):
    """d‖u‖ = ⟨u, du⟩/‖u‖."""
    return _inner(node.args[0], d, vector) / node


def _no_vector(build_scalar):
    def rule(node, d, vector):
        if vector:
            raise DiffNeedsComponents(_TOO_HIGH)
        return build_scalar(node, d)

    return rule


def _softmax_axis(node, d):
    """s ⊙ (ḋ − spread(Σ_axis s ⊙ ḋ)): the vector rule along each row (axis 1) or column (axis 0)."""
    total = t.SumAxis(node * d, node.args[1])
    return node * (d - spread(t.SumAxis(node.args[0], node.args[1]), total))


def _listed(node, d, vector: bool):
    """[u, v, …]: the list of the entries' tangents; by a vector, row i is entry i's gradient (Σ e_i ∂u_iᵀ)."""
    if not vector:
        return t.Literal(*node.args[:2], *d[2:])
    if int(node.args[1]):
        raise DiffNeedsComponents(_TOO_HIGH)
    length = node.args[0]
    return _sum_of(*(t.Outer(t.OneHot(i, length), e) for i, e in enumerate(d[2:]) if e != 0))


def _det(node, d):
    return node * t.Trace(t.MatMul(t.Inv(node.args[0]), d))  # Jacobi: d det(A) = det(A) tr(A⁻¹ dA)


MATRIX_RULES = {  # by a scalar only: by a vector each would be a tensor of rank three
    t.Trace: _no_vector(lambda n, d: t.Trace(d[0])),
    t.Det: _no_vector(lambda n, d: _det(n, d[0])),
    t.LogDet: _no_vector(lambda n, d: t.Trace(t.MatMul(t.Inv(n.args[0]), d[0]))),  # d log det(A) = tr(A⁻¹ dA)
    t.Inv: _no_vector(lambda n, d: -t.MatMul(t.MatMul(n, d[0]), n)),
    t.SumAxis: _no_vector(lambda n, d: t.SumAxis(d[0], n.args[1])),
    t.LogSumExpAxis: _no_vector(lambda n, d: t.SumAxis(t.SoftmaxAxis(*n.args) * d[0], n.args[1])),
    t.MaxAxis: _no_vector(lambda n, d: t.SumAxis(t.MaxSharesAxis(*n.args) * d[0], n.args[1])),
    t.SoftmaxAxis: _no_vector(lambda n, d: _softmax_axis(n, d[0])),
    t.Row: _no_vector(lambda n, d: t.Row(d[0], n.args[1])),
    t.Column: _no_vector(lambda n, d: t.Column(d[0], n.args[1])),
}

RULES = {
    **MATRIX_RULES,
    t.MatMul: _matmul,
    t.Dot: _dot,
    t.ProdOf: lambda n, d, vector: _inner(others(n.args[0]), d[0], vector),
    t.Total: _linear(lambda n, d: t.Total(d), lambda n, d: t.MatMul(t.Ones(shape_of(n.args[0])[0]), d)),
    t.SoftmaxOf: _linear(lambda n, d: n * (d - t.Dot(n, d)), _softmax_vector),
    t.LogSumExpOf: lambda n, d, vector: (_no_vector(lambda m, e: t.Total(sp.exp(m.args[0] - m) * e[0])) if rank(n.args[0]) == 2
                                         else _linear(lambda m, e: t.Dot(t.SoftmaxOf(m.args[0]), e),
                                                      lambda m, e: t.MatMul(t.SoftmaxOf(m.args[0]), e)))(n, d, vector),
    t.Entry: lambda n, d, vector: (t.MatMul(t.OneHot(n.args[1], shape_of(n.args[0])[0]), d[0]) if vector
                                    else t.Entry(d[0], *n.args[1:])),
    t.NormOf: lambda n, d, vector: _norm(n, d[0], vector),
    t.MaxOf: lambda n, d, vector: _inner(t.MaxShares(n.args[0]), d[0], vector),
    t.Transpose: lambda n, d, vector: d[0] if rank(n) == 1 else _no_vector(lambda m, e: t.Transpose(e[0]))(n, d, vector),
    t.Outer: _no_vector(lambda n, d: _sum_of(t.Outer(d[0], n.args[1]) if d[0] != 0 else None,
                                             t.Outer(n.args[0], d[1]) if d[1] != 0 else None)),
    t.Diag: lambda n, d, vector: _DiagTangent(d[0]) if vector and rank(n) == 2 else _no_vector(
        lambda m, e: t.Diag(e[0]))(n, d, vector),
    t.Literal: _listed,
}
