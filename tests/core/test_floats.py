"""Values holding floats settle in float64 over the DAG (issue 13): each distinct part once, IEEE as NumPy."""

from __future__ import annotations

import sympy as sp

from gradlang.core.session import Session
from gradlang.core.substitute import settle
from gradlang.derive.dag import dag_size
from gradlang.expr.numeric import evaluate


def show(source: str) -> list[str]:
    return [r.text for r in Session().run(source)]


def test_constant_parts_become_machine_floats_and_symbols_stay():
    assert show("0.5*t + 1/3 + sqrt(2)*t^2") == ["1.4142135623730951*t^2 + 0.5*t + 0.3333333333333333"]


def test_exact_programs_stay_exact():
    assert show("diff(x^3, x) at x = 2\nsqrt(2)*t + 1/3") == ["12", "sqrt(2)*t + 1/3"]


def test_ieee_specials_as_numpy_gives_them():
    """A nan beside t keeps t (its derivative is 1, as in JAX: docs/decisions.md)."""
    assert show("sqrt(-4.0) + t\nlog(0.0)*t\n[exp(1000.0), t]") == ["t + nan", "-inf*t", "[inf, t]"]


def test_a_shared_value_settles_without_growing_into_a_tree():
    """A depth-40 self-composition is 40 nodes as a DAG and 2^40 as a tree; evalf would walk the tree."""
    t = sp.Symbol("t", real=True)
    a = t
    for _ in range(40):
        a = sp.Add(sp.Mul(sp.Float(0.5), a, evaluate=False), sp.Mul(a, a, evaluate=False), evaluate=False)
    settled = settle(a + sp.Integer(1) / 3)
    assert dag_size(settled) <= dag_size(a) + 3
    assert float(evaluate([settled], [t], [0.0])[0]) == 1 / 3  # a_k(0) = 0, and 1/3 as a float64
