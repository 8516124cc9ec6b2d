"""A float beyond float64's range is ±inf at once, as NumPy gives (found by the grammar fuzzer)."""

import numpy as np
import pytest

from gradlang import Session


@pytest.mark.parametrize(
    "program, expected",
    [
        ("expm1(expm1(1e308))", np.expm1(np.expm1(1e308))),
        ("exp(exp(1e308))", np.exp(np.exp(1e308))),
        ("exp(-exp(1e308))", np.exp(-np.exp(1e308))),
        ("-exp(exp(1e308))", -np.exp(np.exp(1e308))),
    ],
)
def test_overflow_is_ieee(program, expected):
    with np.errstate(over="ignore"):
        assert float(Session().eval(program)) == expected
