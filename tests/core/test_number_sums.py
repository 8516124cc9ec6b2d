"""A sum of numbers alone is folded by SymPy's own `+`, not built by Add (issue #41: Add.flatten imports
sympy.tensor.tensor and sympy.combinatorics, which `1 + 1` does not need); the value must be Add's to the last
digit and of the same class (Integer, Rational, Float of the same precision), whatever the numbers."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from gradlang import Session
from gradlang.core.scalar_arithmetic import _add

NUMBERS = st.one_of(
    st.integers(-10**30, 10**30).map(sp.Integer),
    st.fractions(max_denominator=10**6).map(lambda f: sp.Rational(f.numerator, f.denominator)),
    st.floats(allow_nan=False, allow_infinity=False).map(sp.Float),
    st.floats(-1e6, 1e6).map(lambda x: sp.Float(x, 30)),
    st.sampled_from([sp.Float(-0.0), sp.Float(0.0), sp.Rational(1, 3), sp.Float("1e-400", 15)]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(NUMBERS, min_size=1, max_size=5))
def test_a_sum_of_numbers_is_adds_to_the_last_digit(terms):
    assert sp.srepr(_add(*terms)) == sp.srepr(sp.Add(*terms))


def test_sums_with_a_symbol_or_an_infinity_are_adds():
    x = sp.Symbol("x")
    assert _add(sp.Integer(1), x) == sp.Add(1, x)
    assert _add(sp.oo, sp.Integer(-1)) is sp.oo and _add(sp.oo, -sp.oo) is sp.nan


def test_the_language_sums_numbers_as_before():
    assert Session().eval("1 + 1") == 2
    assert Session().eval("1 + 2.5 - 1/3") == sp.Float(1) + sp.Float(2.5) - sp.Rational(1, 3)
