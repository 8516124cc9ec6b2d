"""One adjoint rule per tensor operation, looked up from the records that own them.

`rule_for(node)(node, ybar, k)` is the contribution to the adjoint of the
node's argument k, given the adjoint `ybar` of the node itself (shaped like
the node), or None where the argument is not differentiated (an index, a
size). Each rule lives in the record of its primitive (expr/primitives/:
softmax, logsumexp and norm in vectors.py, max in nonsmooth.py) or, for an
operation that is no function of the language, in tensor_ops.py; this module
only builds the lookup (`primitives.tensor_rules()`). They are the transpose
rules of JAX's `lax` primitives written as formulas, the teacher's summary:

    matmul      C = A B        Ā = C̄ Bᵀ,  B̄ = Aᵀ C̄
    dot         c = uᵀv        ū = c̄ v,   v̄ = c̄ u
    outer       C = u vᵀ       ū = C̄ v,   v̄ = C̄ᵀ u
    transpose   C = Aᵀ         Ā = C̄ᵀ
    sum         c = Σ u        ū = c̄ 𝟙
    prod        c = ∏ u        ū_i = c̄ ∏_{j≠i} u_j (exact at zeros, written with where)
    norm        c = ‖u‖        ū = c̄ u/‖u‖
    softmax     s = softmax(z) z̄ = s ⊙ (s̄ − ⟨s̄, s⟩)
    logsumexp   c = lse(z)     z̄ = c̄ softmax(z)
    index       c = z_k        z̄ = c̄ e_k
    trace       c = tr(A)      Ā = c̄ I
    det         c = det(A)     Ā = c̄ c A⁻ᵀ
    logdet      c = log det(A) Ā = c̄ A⁻ᵀ
    inv         C = A⁻¹        Ā = −A⁻ᵀ C̄ A⁻ᵀ
    diag        C = diag(v)    v̄ = diagonal of C̄ (through the identity: (C̄ ⊙ I) 𝟙)
    diag(A)     c = diagonal   Ā = diag(c̄)
    list        c = [u, v, …]  ū = c̄_0, v̄ = c̄_1, …
    sum(M, a)   c = M 𝟙 (a=1)  M̄ = c̄ 𝟙ᵀ (rows; columns alike)
    softmax(M, a), logsumexp(M, a): the vector rules, row by row (or column by column)
    M[i, :]     c = row i      M̄ = e_i c̄ᵀ;   M[:, j]: M̄ = c̄ e_jᵀ
    max         c = max(v)     v̄ = c̄ · shares of the maximum (ties split equally)

A node whose record declares it a constant (onehot, eye, ones, zeros, the
shares of max, argmax) has no rule: a constant to differentiation
(`constant_nodes`).

Elementwise nodes (SymPy's Add, Mul, Pow and the functions of the registry)
need no entry: their rule is ū = ȳ ⊙ ∂f/∂u, with ∂f/∂u from the primitive's
own `partial` rule (reverse.py).
"""

from __future__ import annotations

from gradlang.expr import primitives

_RULES: dict = {}
_CONSTANT: list = []


def _sends_nothing(node, ybar, k):
    return None


def rules() -> dict:
    """Tensor node class -> its adjoint rule; a constant node's rule sends nothing. Built once, on first use."""
    if not _RULES:
        _RULES.update({cls: rule.adjoint or _sends_nothing for cls, rule in primitives.tensor_rules().items()})
    return _RULES


def rule_for(node):
    """The adjoint rule of a tensor operation, or None for an elementwise SymPy node."""
    return rules().get(type(node))


def constant_nodes() -> tuple:
    """The tensor node classes that are constants to differentiation: their records say so (`constant=True`)."""
    if not _CONSTANT:
        _CONSTANT.extend(cls for cls, rule in primitives.tensor_rules().items() if rule.constant)
    return tuple(_CONSTANT)
