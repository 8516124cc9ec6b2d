"""IEEE edges found by the grammar fuzzer: overflow is ±inf at once; tan(inf) is NaN, not an interval."""

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


def test_tan_of_inf_in_a_compiled_where_is_nan():
    # SymPy's tan(oo) is AccumulationBounds(-oo, oo); NumPy's tan(inf) is nan, and nan == v is false
    value = Session().eval("x: R\nW: R^(2,2)\nwhere(tan(x) == [W[1,0], x], tan(x), [W[1,0], x]) at x = inf")
    assert str(value) == "[W[1, 0], oo]"
