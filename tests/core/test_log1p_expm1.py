"""log1p and expm1: accurate where log(1 + u) and exp(u) - 1 lose every digit.

The registry's generic tests cover them too (derivative against finite
differences, NumPy and JAX export called, docs listing); these are the
numbers a careful user expects.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.render.plain import to_plain
from tests.conftest import run_values

POINTS = [1e-20, 1e-8, -0.5, 0.5, 3.0]


@pytest.mark.parametrize("name, reference", [("log1p", np.log1p), ("expm1", np.expm1)])
def test_values_match_numpy_at_tiny_and_ordinary_points(name, reference):
    for point in POINTS:
        assert run_values(f"{name}({point})") == pytest.approx(reference(point), rel=1e-15)
    batch = run_values(f"{name}(t) at t = {POINTS}")
    assert np.allclose(batch, reference(np.array(POINTS)), rtol=1e-15, atol=0)


def test_they_keep_the_digits_their_naive_forms_lose():
    assert run_values("log1p(1e-20)") == 1e-20 and run_values("log(1 + 1e-20)") == 0.0
    assert run_values("expm1(1e-20)") == 1e-20 and run_values("exp(1e-20) - 1") == 0.0


@pytest.mark.parametrize(
    "source, expected",
    [
        ("diff(log1p(x), x)", "1/(x + 1)"),
        ("diff(expm1(x), x)", "exp(x)"),
        ("log1p(0) + expm1(0)", "0"),
        ("expm1(1/3)", "expm1(1/3)"),
        ("log1p(x^2)*expm1(x)", "expm1(x)*log1p(x^2)"),
    ],
)
def test_symbolic_forms(source, expected):
    assert to_plain(Session().eval(source)) == expected


def test_exact_and_ieee_edges():
    assert np.array_equal(run_values("log1p(t) at t = [-1, -2, 1000]"), [-np.inf, np.nan, np.log1p(1000)],
                          equal_nan=True)
    assert run_values("N(expm1(1/3))") == pytest.approx(np.expm1(1 / 3), rel=1e-15)
    with pytest.raises(GradlangError, match="log1p"):
        Session().eval("log1p(-1)")


def test_plain_reads_back():
    value = Session().eval("diff(log1p(sin(x))*expm1(2*x), x)")
    assert Session().eval(to_plain(value)) == value
