"""expr/operations.count_ops: SymPy's count_ops, the same number, each distinct part counted once (issue #41)."""

from __future__ import annotations

import pytest
import sympy as sp

from gradlang.expr.functions import Where
from gradlang.expr.operations import count_ops
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.shapes import size_symbol

n = size_symbol("n")
x, y = t.Var("x", (n,)), t.Var("y", (n,))
a, b, c = sp.symbols("a b c", real=True)
centred = x - 1.0 * t.Total(x) / n
variance = 1.0e-5 + t.Total(centred ** 2) / n
scaled = t.Dot(centred, y) / sp.sqrt(variance)

FORMULAS = [
    a, sp.S.One, sp.Integer(-3), sp.Rational(-2, 3), sp.Float(0.5), -a, -2 * a, a / b, -a / b, 2 / a, -2 / (a + b),
    a - b, -a - b, -a + b, a + b - c, sp.exp(a), sp.E, sp.exp(-a) / (1 + sp.exp(-a)), sp.sqrt(a + b) ** -3,
    sp.Max(a, b, c), sp.sin(a) ** 2 + sp.cos(a) ** 2, a ** sp.Rational(3, 2) / (2 * b),
    sp.Mul(-1, a + b, evaluate=False), 1.0 * t.Total(x) / n, scaled,
    -0.5 * scaled * t.Total(centred * y) * (2.0 * x - 2.0 * t.Total(x) / n) / (n * variance ** sp.Rational(3, 2)),
    Where(x > 0, x, -y) * t.SoftmaxOf(x - a), t.MatMul(t.Var("W", (n, n)), x) - 2 * y,
]


@pytest.mark.parametrize("formula", FORMULAS, ids=[str(f)[:40] for f in FORMULAS])
def test_the_count_is_sympys(formula):
    assert count_ops(formula) == sp.count_ops(formula)


def test_a_shared_part_is_counted_once_not_at_every_use():
    # e_{k+1} = sin(e_k) + cos(e_k): SymPy walks 2^k copies of e_0; the count is 3 (2^k − 1) either way.
    e = a
    for k in range(1, 61):
        e = sp.sin(e) + sp.cos(e)
        if k == 8:
            assert count_ops(e) == sp.count_ops(e) == 3 * (2 ** 8 - 1)
    assert count_ops(e) == 3 * (2 ** 60 - 1)  # SymPy's walk would visit 2^61 nodes
