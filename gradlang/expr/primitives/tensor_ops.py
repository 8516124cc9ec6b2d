"""The tensor engine's operations that are no function of the language: their adjoint rules, one record each.

`A @ B`, indexing (`v[k]`, `M[i, j]`, `M[i, :]`, `M[:, j]`), dot, outer,
transpose, sum, diag, trace, det, logdet, inv, lists and the constant builders are
builtins or subscripts of the evaluator (core/tensor_values.py,
core/subscripts.py), not primitives of the registry; each `TensorOperation`
below is the one place of its reverse-mode rule at symbolic size. The rules
(`adjoint(node, ybar, k)`, record.TensorRule) as a teacher states them:

    matmul      C = A B        Ā = C̄ Bᵀ,  B̄ = Aᵀ C̄
    dot         c = uᵀv        ū = c̄ v,   v̄ = c̄ u
    outer       C = u vᵀ       ū = C̄ v,   v̄ = C̄ᵀ u
    transpose   C = Aᵀ         Ā = C̄ᵀ
    sum         c = Σ u        ū = c̄ 𝟙
    prod        c = ∏ u        ū_i = c̄ ∏_{j≠i} u_j (exact at zeros, written with where)
    sum(M, a)   c = M 𝟙 (a=1)  M̄ = c̄ 𝟙ᵀ (rows; columns alike)
    index       c = z_k        z̄ = c̄ e_k
    M[i, :]     c = row i      M̄ = e_i c̄ᵀ;   M[:, j]: M̄ = c̄ e_jᵀ
    diag        C = diag(v)    v̄ = diagonal of C̄ (through the identity: (C̄ ⊙ I) 𝟙)
    diag(A)     c = diagonal   Ā = diag(c̄)
    list        c = [u, v, …]  ū = c̄_0, v̄ = c̄_1, …
    trace       c = tr(A)      Ā = c̄ I
    det         c = det(A)     Ā = c̄ c A⁻ᵀ
    logdet      c = log det(A) Ā = c̄ A⁻ᵀ
    inv         C = A⁻¹        Ā = −A⁻ᵀ C̄ A⁻ᵀ

onehot, eye, ones, zeros, argmax and argmin are constants to
differentiation: their records have no rule, so the pass never enters them.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.functions import Where
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
    if len(node.shape) == 1:  # the diagonal of a matrix: Ā = diag(ȳ)
        return t.Diag(full(ybar, node.shape))
    n = node.shape[0]
    return t.MatMul(full(ybar, node.shape) * t.Eye(n), t.Ones(n))


def _trace(node, ybar, k):
    return ybar * t.Eye(shape_of(node.args[0])[0])


def _det(node, ybar, k):
    return ybar * node * t.Transpose(t.Inv(node.args[0]))


def _logdet(node, ybar, k):
    return ybar * t.Transpose(t.Inv(node.args[0]))


def _inv(node, ybar, k):
    inverse_t = t.Transpose(node)
    return -t.MatMul(t.MatMul(inverse_t, full(ybar, node.shape)), inverse_t)


def _listed(node, ybar, k):
    """A list [u, v, …] of scalars: entry k − 2 receives that entry of the adjoint (a scalar ȳ stands for ȳ 𝟙)."""
    if k < 2 or rank(ybar) == 0:
        return None if k < 2 else ybar
    position = k - 2
    columns = int(node.args[1])
    return t.Entry(ybar, *((position // columns, position % columns) if columns else (position,)))


def others(u):
    """Each component's product of all the others (∂prod(u)/∂u), exact where u has zeros, in the language's where:
    prod(u)/u_i at a non-zero u_i (0 once u has a zero, with the right derivative by that zero), and at a zero
    the product of the non-zeros if it is the only zero, else 0. No condition sits on its boundary at a point
    without zeros (the count is compared with 1.5), so evaluating it warns of no kink there."""
    zero = sp.Eq(u, 0)
    count = t.Total(Where(zero, 1, 0))
    return Where(zero, Where(count < sp.Rational(3, 2), t.ProdOf(Where(zero, 1, u)), 0), t.ProdOf(u) / Where(zero, 1, u))


def _prod(node, ybar, k):
    return ybar * others(node.args[0])


def _operation(name: str, *rules: TensorRule) -> None:
    register_operation(TensorOperation(name, rules))


_operation("matmul", TensorRule(t.MatMul, _matmul, (
    "matmul: Ā = Ȳ Bᵀ, B̄ = Aᵀ Ȳ", r"\bar{A} = \bar{Y} B^{\top},\ \bar{B} = A^{\top} \bar{Y}")))
_operation("dot", TensorRule(t.Dot, _dot, ("dot: ū = ȳ v, v̄ = ȳ u", r"\bar{u} = \bar{y} v,\ \bar{v} = \bar{y} u")))
_operation("outer", TensorRule(t.Outer, _outer, (
    "outer: ū = Ȳ v, v̄ = Ȳᵀ u", r"\bar{u} = \bar{Y} v,\ \bar{v} = \bar{Y}^{\top} u")))
_operation("transpose", TensorRule(t.Transpose, _transpose, ("transpose: Ā = Ȳᵀ", r"\bar{A} = \bar{Y}^{\top}")))
_operation("sum",
           TensorRule(t.Total, _total, ("sum: ū = ȳ 𝟙", r"\bar{u} = \bar{y} \mathbf{1}")),
           TensorRule(t.SumAxis, _sum_axis, ("sum along an axis: M̄ = ȳ 𝟙ᵀ", r"\bar{M} = \bar{y} \mathbf{1}^{\top}")))
_operation("index",
           TensorRule(t.Entry, _entry, ("index: z̄ = ȳ e_k", r"\bar{z} = \bar{y} e_k")),
           TensorRule(t.Row, _row, ("row: M̄ = e_i ȳᵀ", r"\bar{M} = e_i \bar{y}^{\top}")),
           TensorRule(t.Column, _column, ("column: M̄ = ȳ e_jᵀ", r"\bar{M} = \bar{y} e_j^{\top}")))
_operation("diag", TensorRule(t.Diag, _diag))
_operation("list", TensorRule(t.Literal, _listed, ("list: ū_k = ȳ_k", r"\bar{u}_k = \bar{y}_k")))
_operation("prod", TensorRule(t.ProdOf, _prod, ("prod: ū = ȳ ∏_{j≠i} u_j", r"\bar{u}_i = \bar{y} \prod_{j \neq i} u_j")))
_operation("trace", TensorRule(t.Trace, _trace, ("trace: Ā = ȳ I", r"\bar{A} = \bar{y} I")))
_operation("det", TensorRule(t.Det, _det, ("det: Ā = ȳ det(A) A⁻ᵀ", r"\bar{A} = \bar{y} \det(A) A^{-\top}")))
_operation("logdet", TensorRule(t.LogDet, _logdet, ("logdet: Ā = ȳ A⁻ᵀ", r"\bar{A} = \bar{y} A^{-\top}")))
_operation("inv", TensorRule(t.Inv, _inv, ("inv: Ā = −A⁻ᵀ Ȳ A⁻ᵀ", r"\bar{A} = -A^{-\top} \bar{Y} A^{-\top}")))
for _name, _node in (("onehot", t.OneHot), ("eye", t.Eye), ("ones", t.Ones), ("zeros", t.Zeros),
                     ("argmax", t.ArgMax), ("argmin", t.ArgMin)):
    _operation(_name, TensorRule(_node))  # a constant to differentiation: no adjoint
