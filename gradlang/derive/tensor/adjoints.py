"""One adjoint rule per tensor operation: the vector-level reverse-mode rules a teacher states.

`RULES[cls](node, ybar, k)` is the contribution to the adjoint of the node's
argument k, given the adjoint `ybar` of the node itself (shaped like the
node), or None where the argument is not differentiated (an index, a size).
They are the transpose rules of JAX's `lax` primitives written as formulas:

    matmul      C = A B        Ā = C̄ Bᵀ,  B̄ = Aᵀ C̄
    dot         c = uᵀv        ū = c̄ v,   v̄ = c̄ u
    outer       C = u vᵀ       ū = C̄ v,   v̄ = C̄ᵀ u
    transpose   C = Aᵀ         Ā = C̄ᵀ
    sum         c = Σ u        ū = c̄ 𝟙
    norm        c = ‖u‖        ū = c̄ u/‖u‖
    softmax     s = softmax(z) z̄ = s ⊙ (s̄ − ⟨s̄, s⟩)
    logsumexp   c = lse(z)     z̄ = c̄ softmax(z)
    index       c = z_k        z̄ = c̄ e_k
    trace       c = tr(A)      Ā = c̄ I
    det         c = det(A)     Ā = c̄ c A⁻ᵀ
    inv         C = A⁻¹        Ā = −A⁻ᵀ C̄ A⁻ᵀ
    diag        C = diag(v)    v̄ = diagonal of C̄ (through the identity: (C̄ ⊙ I) 𝟙)
    sum(M, a)   c = M 𝟙 (a=1)  M̄ = c̄ 𝟙ᵀ (rows; columns alike)
    softmax(M, a), logsumexp(M, a): the vector rules, row by row (or column by column)
    M[i, :]     c = row i      M̄ = e_i c̄ᵀ;   M[:, j]: M̄ = c̄ e_jᵀ
    max         c = max(v)     v̄ = c̄ · shares of the maximum (ties split equally)

Elementwise nodes (SymPy's Add, Mul, Pow and the functions of the registry)
need no entry: their rule is ū = ȳ ⊙ ∂f/∂u, with ∂f/∂u from the primitive's
own `partial` rule (reverse.py).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import rank, shape_of


def full(expr, shape: tuple):
    """`expr` with its shape made explicit: a scalar standing for a broadcast becomes c 𝟙."""
    if expr == 0:
        return t.Zeros(*shape) if shape else sp.S.Zero
    if rank(expr) == len(shape):
        return expr
    if len(shape) == 2:
        return expr * t.Outer(t.Ones(shape[0]), t.Ones(shape[1]))
    return expr * t.Ones(*shape)


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


def _norm(node, ybar, k):
    return ybar * node.args[0] / node


def _softmax(node, ybar, k):
    ybar = full(ybar, node.shape)
    return node * (ybar - t.Dot(ybar, node))


def _logsumexp(node, ybar, k):
    return ybar * t.SoftmaxOf(node.args[0])


def _entry(node, ybar, k):
    if k != 0:
        return None
    base = node.args[0]
    shape = shape_of(base)
    if len(shape) == 1:
        return ybar * t.OneHot(node.args[1], shape[0])
    i, j = node.args[1:]
    return ybar * t.Outer(t.OneHot(i, shape[0]), t.OneHot(j, shape[1]))


def _diag(node, ybar, k):
    n = node.shape[0]
    return t.MatMul(full(ybar, node.shape) * t.Eye(n), t.Ones(n))


def _max(node, ybar, k):
    return ybar * t.MaxShares(node.args[0])


def _trace(node, ybar, k):
    return ybar * t.Eye(shape_of(node.args[0])[0])


def _det(node, ybar, k):
    return ybar * node * t.Transpose(t.Inv(node.args[0]))


def _inv(node, ybar, k):
    inverse_t = t.Transpose(node)
    return -t.MatMul(t.MatMul(inverse_t, full(ybar, node.shape)), inverse_t)


def _spread(node, vector):
    """A vector along the reduced axis spread back over the matrix: v 𝟙ᵀ for rows, 𝟙 vᵀ for columns."""
    m, n = shape_of(node.args[0])
    vector = full(vector, node.shape if rank(node) == 1 else shape_of(vector))
    return t.Outer(t.Ones(m), vector) if node.args[1] == 0 else t.Outer(vector, t.Ones(n))


def _sum_axis(node, ybar, k):
    return None if k else _spread(node, ybar)


def _logsumexp_axis(node, ybar, k):
    return None if k else _spread(node, ybar) * t.SoftmaxAxis(*node.args)


def _softmax_axis(node, ybar, k):
    if k:
        return None
    ybar = full(ybar, node.shape)
    return node * (ybar - _spread(t.SumAxis(node.args[0], node.args[1]), t.SumAxis(ybar * node, node.args[1])))


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


def _constant(node, ybar, k):
    return None


RULES = {
    t.MatMul: _matmul,
    t.Dot: _dot,
    t.Outer: _outer,
    t.Transpose: _transpose,
    t.Total: _total,
    t.NormOf: _norm,
    t.SoftmaxOf: _softmax,
    t.LogSumExpOf: _logsumexp,
    t.Entry: _entry,
    t.Diag: _diag,
    t.MaxOf: _max,
    t.Trace: _trace,
    t.SumAxis: _sum_axis,
    t.LogSumExpAxis: _logsumexp_axis,
    t.SoftmaxAxis: _softmax_axis,
    t.Row: _row,
    t.Column: _column,
    t.Det: _det,
    t.Inv: _inv,
    t.OneHot: _constant,
    t.Eye: _constant,
    t.Ones: _constant,
    t.Zeros: _constant,
    t.MaxShares: _constant,
}


def rule_for(node):
    """The adjoint rule of a tensor operation, or None for an elementwise SymPy node."""
    return RULES.get(type(node))
