"""The rewrite registry: each identity, applied by tidy, gives the right side it states and says so.

Every row is one identity of derive/tensor/rewrite.py's RULES: tidy of the
left side is the right side, and tidy(expr, used) names the identity. A new
identity gets a row here (docs/explain.md, "The rewrites and how to add one").
"""

from __future__ import annotations

import pytest
import sympy as sp

from gradlang.derive.tensor.rewrite import DISTRIBUTED, FORWARD, RULES, Rewrite, normal_form, tidy
from gradlang.expr.functions import Where
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.shapes import size_symbol

n = size_symbol("n")
x, y = t.Var("x", (n,)), t.Var("y", (n,))
s = t.SoftmaxOf(x)
c = sp.Symbol("c", real=True)

ROWS = [
    ("⟨eₖ, v⟩ = vₖ", t.Dot(t.OneHot(1, n), x), t.Entry(x, 1)),
    ("⟨𝟙, v⟩ = Σ v", t.Dot(t.Ones(n), x), t.Total(x)),
    ("⟨u, u⟩ = ‖u‖²", t.Dot(x, x) / t.NormOf(x), t.NormOf(x)),
    ("Σₖ sₖ = 1", t.Total(s), sp.S.One),
    ("Σ 𝟙 = n", t.Total(t.Ones(n)), n),
    ("Σ of a list of numbers is their sum", t.Total(t.Literal(sp.Integer(3), sp.Integer(0), 1, 2, 3)), sp.Integer(6)),
    ("⟨u ⊘ s, s⟩ = Σ u", t.Dot(y / s, s), t.Total(y)),
    ("⟨a + b, v⟩ = ⟨a, v⟩ + ⟨b, v⟩", t.Dot(t.OneHot(0, n) / t.Entry(s, 0) - 1, s), sp.S.Zero),
    ("eₖ ⊙ v = vₖ eₖ", t.OneHot(1, n) * x, t.Entry(x, 1) * t.OneHot(1, n)),
    ("exp(u) ⊘ Σ exp(u) = softmax(u)", sp.exp(x) / t.Total(sp.exp(x)), s),
    ("Σ(u ⊙ v) = ⟨u, v⟩", t.Total(x * y), t.Dot(x, y)),
    ("(A B)ᵀ = Bᵀ Aᵀ", t.Transpose(t.MatMul(t.Var("A", (n, n)), t.Var("B", (n, n)))),
     t.MatMul(t.Transpose(t.Var("B", (n, n))), t.Transpose(t.Var("A", (n, n))))),
    ("a ⊙ where(c, 1, 0) + b ⊙ where(c, 0, 1) = where(c, a, b)",
     x * Where(x > 0, 1, 0) + y * Where(x > 0, 0, 1), Where(x > 0, x, y)),
]


@pytest.mark.parametrize("identity, left, right", ROWS, ids=[row[0] for row in ROWS])
def test_each_identity_gives_its_right_side_and_names_itself(identity, left, right):
    used: list = []
    assert tidy(left, used) == right
    assert identity in used


def test_the_registry_is_one_signature_with_both_spellings():
    assert all(isinstance(r, Rewrite) and callable(r.rule) and r.identity and r.latex for r in RULES)
    assert len({r.identity for r in RULES}) == len(RULES)
    assert all(r.rule.__doc__ for r in RULES), "every identity says what it states"
    assert DISTRIBUTED.algebra and set(FORWARD) <= set(RULES)


def test_the_forward_rewrite_names_a_spelled_out_softmax():
    used: list = []
    assert normal_form(sp.log(t.Entry(sp.exp(x - c) / t.Total(sp.exp(x - c)), 0)), used) == sp.log(
        t.Entry(t.SoftmaxOf(x - c), 0))
    assert [r.identity for r in used] == ["exp(u) ⊘ Σ exp(u) = softmax(u)"]


def test_tidy_is_bounded_and_the_same_on_every_run():
    deep = x
    for _ in range(40):
        deep = t.SoftmaxOf(deep) * 2 + x
    assert tidy(t.Total(deep)) == tidy(t.Total(deep))
