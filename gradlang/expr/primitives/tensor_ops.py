"""The tensor engine's operations that are no function of the language: their adjoint rules, one record each.

`A @ B`, indexing (`v[k]`, `M[i, j]`, `M[i, :]`, `M[:, j]`), dot, outer,
transpose, sum, diag, trace, det, inv and the constant builders are
builtins or subscripts of the evaluator (core/tensor_values.py,
core/subscripts.py), not primitives of the registry; each `TensorOperation`
below is the one place of its reverse-mode rule at symbolic size. The rules
(`adjoint(node, ybar, k)`, record.TensorRule) as a teacher states them:

    matmul      C = A B        Ā = C̄ Bᵀ,  B̄ = Aᵀ C̄
    dot         c = uᵀv        ū = c̄ v,   v̄ = c̄ u
    outer       C = u vᵀ       ū = C̄ v,   v̄ = C̄ᵀ u
    transpose   C = Aᵀ         Ā = C̄ᵀ
    sum         c = Σ u        ū = c̄ 𝟙
    sum(M, a)   c = M 𝟙 (a=1)  M̄ = c̄ 𝟙ᵀ (rows; columns alike)
    index       c = z_k        z̄ = c̄ e_k
    M[i, :]     c = row i      M̄ = e_i c̄ᵀ;   M[:, j]: M̄ = c̄ e_jᵀ
    diag        C = diag(v)    v̄ = diagonal of C̄ (through the identity: (C̄ ⊙ I) 𝟙)
    trace       c = tr(A)      Ā = c̄ I
    det         c = det(A)     Ā = c̄ c A⁻ᵀ
    inv         C = A⁻¹        Ā = −A⁻ᵀ C̄ A⁻ᵀ

onehot, eye, ones, zeros, argmax and argmin are constants to
differentiation: their records have no rule, so the pass never enters them.
"""

from __future__ import annotations

from gradlang.expr.primitives import TensorOperation, TensorRule, register_operation
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.broadcast import full, spread
from gradlang.expr.tensor.nodes import rank, shape_of


def _matmul(node, ybar, k):
    a, b = node.args
    ybar = full(ybar, node.shape)
    ra, rb = rank(a), rank(b)
    if k == 0:
        if ra == 2 and rb == 2:
            return t.MatMul(ybar, t.Transpose(b))
        if ra == 2:  # A x: Ā = ȳ xᵀ
            return t.Outer(ybar, b)
        return t.MatMul(b, ybar)  # xᵀB as x @ B: x̄ = B ȳ
    if ra == 2 and rb == 2:
        return t.MatMul(t.Transpose(a), ybar)
    if ra == 2:  # A x: x̄ = Aᵀ ȳ
        return t.MatMul(t.Transpose(a), ybar)
    return t.Outer(a, ybar)  # x @ B: B̄ = x ȳᵀ


def _dot(node, ybar, k):
    return ybar * node.args[1 - k]


def _outer(node, ybar, k):
    ybar = full(ybar, node.shape)
    if k == 0:
        return t.MatMul(ybar, node.args[1])
    return t.MatMul(t.Transpose(ybar), node.args[0])


def _transpose(node, ybar, k):
    return t.Transpose(full(ybar, node.shape))


def _total(node, ybar, k):
    return ybar  # a scalar adjoint broadcasts over the summed shape


def _sum_axis(node, ybar, k):
    return None if k else spread(node, ybar)


def _entry(node, ybar, k):
    if k != 0:
        return None
    base = node.args[0]
    shape = shape_of(base)
    if len(shape) == 1:
        return ybar * t.OneHot(node.args[1], shape[0])
    i, j = node.args[1:]
    return ybar * t.Outer(t.OneHot(i, shape[0]), t.OneHot(j, shape[1]))


def _row(node, ybar, k):
    if k:
        return None
    m, n = shape_of(node.args[0])
    return t.Outer(t.OneHot(node.args[1], m), full(ybar, (n,)))


def _column(node, ybar, k):
    if k:
        return None
    m, n = shape_of(node.args[0])
    return t.Outer(full(ybar, (m,)), t.OneHot(node.args[1], n))


def _diag(node, ybar, k):
    n = node.shape[0]
    return t.MatMul(full(ybar, node.shape) * t.Eye(n), t.Ones(n))


def _trace(node, ybar, k):
    return ybar * t.Eye(shape_of(node.args[0])[0])


def _det(node, ybar, k):
    return ybar * node * t.Transpose(t.Inv(node.args[0]))


def _inv(node, ybar, k):
    inverse_t = t.Transpose(node)
    return -t.MatMul(t.MatMul(inverse_t, full(ybar, node.shape)), inverse_t)


def _operation(name: str, *rules: tuple) -> None:
    """Register an operation from (node class, adjoint) pairs; an adjoint None is a constant."""
    register_operation(TensorOperation(name, tuple(TensorRule(node, adjoint) for node, adjoint in rules)))


_operation("matmul", (t.MatMul, _matmul))
_operation("dot", (t.Dot, _dot))
_operation("outer", (t.Outer, _outer))
_operation("transpose", (t.Transpose, _transpose))
_operation("sum", (t.Total, _total), (t.SumAxis, _sum_axis))
_operation("index", (t.Entry, _entry), (t.Row, _row), (t.Column, _column))
_operation("diag", (t.Diag, _diag))
_operation("trace", (t.Trace, _trace))
_operation("det", (t.Det, _det))
_operation("inv", (t.Inv, _inv))
for _name, _node in (("onehot", t.OneHot), ("eye", t.Eye), ("ones", t.Ones), ("zeros", t.Zeros),
                     ("argmax", t.ArgMax), ("argmin", t.ArgMin)):
    _operation(_name, (_node, None))
