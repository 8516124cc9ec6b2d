"""Values that probing found wrong (issue 29, rows 10 to 14), as a user meets them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.render.plain import to_plain


def _error(program: str) -> GradlangError:
    with pytest.raises(GradlangError) as caught:
        Session().run(program)
    return caught.value


@pytest.mark.parametrize("program, shown", [
    ("min(sqrt(-4), 1)", "2*sqrt(-1)"),
    ("max(sqrt(y), 1/2) at y = -3/2", "sqrt(6)*sqrt(-1)/2"),
    ("x: R^2\ngrad(min(sqrt(x)), x) at x = [1, -3/2]", "-sqrt(6)*sqrt(-1)/2"),  # the formula's, as at R^n
    ("min(sqrt(-4), x)", "2*sqrt(-1)"),
    ("max((-8)^(1/3), 1)", "2*(-1)^(1/3)"),
    ("max(asin(2), 0)", "asin(2)"),
    ("max(log(-2), 1)", "log(2) + sqrt(-1)*pi"),
    ("sqrt(-4) > 0", "2*sqrt(-1)"),
    ("where(sqrt(x) > 1, 1, 2) at x = -4", "2*sqrt(-1)"),
    ("a = min(sqrt(-4), x)", "2*sqrt(-1)"),
])
def test_an_exact_non_real_number_inside_a_function_is_an_error_as_alone(program, shown):
    # row 10: sqrt(-4) alone is a ValueError; inside max/min/a share or a comparison it printed
    # `min(2*sqrt(-1), 1)` with JSON null (or decided the comparison false)
    error = _error(program)
    assert error.kind == "ValueError"
    assert error.message == f"{shown} is not a real number (it is met on the way to the result)"


@pytest.mark.parametrize("program, expected", [
    ("max(sqrt(-4), 1.0)", math.nan),
    ("x: R^2\nmin(sqrt(x)) at x = [1, -1.5]", math.nan),
    ("where(sqrt(-1) == y, 1, y) at y = 0.5", 0.5),  # nan == 0.5 is false, as in JAX
])
def test_a_float_makes_the_non_real_number_nan_instead(program, expected):
    np.testing.assert_equal(float(Session().eval(program)), expected)


@pytest.mark.parametrize("program, expected", [
    ("y / (0.0*z) at y = 1.0, z = 2.0", math.inf),
    ("y / (z*0.0) at y = -1.0, z = 3", -math.inf),
    ("log(0.0*z) at z = 2.0", -math.inf),
    ("y / ([0.0, 1]*z)[0] at y = 1.0, z = 2.0", math.inf),
])
def test_a_float_zero_times_a_symbol_divides_as_ieee(program, expected):
    # row 11: SymPy makes 0.0*z the exact 0, so y/(0.0*z) was an exact division by zero
    assert float(Session().eval(program)) == expected


def test_a_float_zero_times_a_symbol_stays_floating():
    assert to_plain(Session().eval("0.0*z")) == "0.0"
    assert to_plain(Session().eval("exp(0.0*z)")) == "1.0"


@pytest.mark.parametrize("program, expected", [
    ("t at t = 5, t = [1, 2, 3]", [1.0, 2.0, 3.0]),
    ("t at t = [1, 2, 3], t = 5", 5.0),
    ("t + s at t = [1, 2], s = 1, t = 10", 11.0),
    ("x: R^2\nx at x = [1, 2], x[0] = 7", [7.0, 2.0]),
    ("x: R^2\nx at x[0] = 7, x = [1, 2]", [1.0, 2.0]),
])
def test_a_name_bound_twice_in_an_at_takes_its_last_value(program, expected):
    # row 12: a number then a list gave [5.0, 5.0, 5.0] while the warning said the last value is used
    results = Session().run(program)
    assert np.asarray(results[-1].value, dtype=float).tolist() == expected
    assert any("last value" in w for w in results[-1].warnings)


def test_a_list_given_to_a_scalar_may_hold_nan():
    # row 13: `at t = nan` and `[inf, 1]` worked, `[nan, 1]` was "must hold numbers"
    value = Session().eval("sin(t) at t = [nan, inf, 1]")
    assert math.isnan(value[0]) and math.isnan(value[1]) and value[2] == math.sin(1.0)
    assert _error("sin(t) at t = [sqrt(-1), 1]").message == "a list given to the scalar 't' must hold numbers"


@pytest.mark.parametrize("program, plain, json_value", [
    ("x == y at x = 0, y = 0", "true", True),
    ("x == y at x = 0, y = 1", "false", False),
    ("x: R^2\ny: R^2\nx == y at x = [1, 2], y = [1, 3]", "[true, false]", [True, False]),
    ("W: R^(2,2)\nW > 0 at W = [[1, -1], [0, 2]]", "[[true, false], [false, true]]",
     [[True, False], [False, True]]),
])
def test_a_decided_condition_prints_true_or_false_and_reads_back(program, plain, json_value):
    # row 14: plain printed `0 == 0` where JSON said true
    from gradlang.render.json import encode_value

    session = Session()
    value = session.eval(program)
    assert to_plain(value) == plain
    assert encode_value(value) == json_value
    assert to_plain(session.eval(plain)) == plain
    assert to_plain(session.eval(f"where({plain}, 1, 2)")) == plain.replace("true", "1").replace("false", "2")
