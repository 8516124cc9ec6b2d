"""gradcheck: near-zero error for the surrogate; true finite differences differ exactly where blocked is non-zero."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from rich.console import Console

import gradlang.tools.gradcheck as gradcheck_module
from gradlang import Session
from tests.component_session import ComponentSession
from gradlang.expr.tensor.lower import lowered
from gradlang.errors import ValueError as GradlangValueError
from gradlang.tools.gradcheck import GradcheckReport, gradcheck
from gradlang.render import to_json, to_latex, to_plain, to_rich
from tests.conftest import as_floats

PRELUDE = """x: R^3
softmax2(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))
st(t) = t + sg(round(t) - t)
"""

# (expression e, point for x) — use cases of LANGUAGE.md: stable softmax, straight-through,
# target network, x*sg(x), stopped baseline, ties, piecewise-constant parts
CASES = [
    ("log(softmax2(x)[0])", "[1, 3, 3]"),
    ("log(softmax(x)[1])", "[0.5, -1, 2]"),
    ("logsumexp(x)", "[1, 2, 3]"),
    ("st(x[0]) * x[1] + x[2]", "[0.3, 2, 1]"),
    ("(x[0] - sg(x[1] * 0.9 + x[2]))^2", "[1, 2, 3]"),
    ("x[0] * sg(x[0]) + x[1] * sg(x[2])", "[2, -1, 0.5]"),
    ("(x[0] - sg(mean(x))) * log(x[1])", "[1, 2, 3]"),
    ("sum(sg(x) * x)", "[1, -2, 3]"),
    ("max(x) + min(x[0], x[1])", "[1, 2, 3]"),
    ("sin(x[0]) * exp(x[1]) / (1 + x[2]^2)", "[0.1, 0.2, 0.3]"),
    ("sigmoid(x[0] - sg(x[1])) + relu(x[2] - 1)", "[0.5, 0.25, 3]"),
]


def session(components: bool = False) -> Session:
    s = (ComponentSession() if components else Session())
    s.run(PRELUDE)
    return s


def _components_of(s: Session, name: str):
    """A declared vector as the component symbols gradcheck's own API takes (x[0], x[1], …)."""
    return lowered(s.env[name])


@pytest.mark.parametrize("expr, point", CASES)
def test_surrogate_agrees_and_true_differs_where_blocked(expr, point):
    s = session()
    (result,) = s.run(f"gradcheck({expr}, x) at x = {point}")
    (report,) = result.attachments
    assert isinstance(report, GradcheckReport)
    assert result.value == report.value
    assert float(report.value) < 1e-7
    # oracle: gradlang's own surrogate gradient, and blocked() for what the stops removed
    surrogate = as_floats(s.eval(f"grad({expr}, x) at x = {point}"))
    blocked = as_floats(s.eval(f"blocked({expr}, x) at x = {point}"))
    assert np.allclose([r.symbolic for r in report.rows], surrogate, rtol=1e-12, atol=1e-12)
    assert np.allclose([r.frozen_fd for r in report.rows], surrogate, rtol=1e-6, atol=1e-7)
    assert np.allclose([r.true_fd for r in report.rows], surrogate + blocked, rtol=1e-6, atol=1e-7)
    assert [r.stops_changed for r in report.rows] == [abs(b) > 1e-4 for b in blocked]


def test_a_wrong_gradient_is_caught(monkeypatch):
    s = session(components=True)
    monkeypatch.setattr(gradcheck_module, "grad", lambda e, x: sp.ImmutableDenseNDimArray([1, 1, 1]))
    x = _components_of(s, "x")
    report = gradcheck(s.eval("x[0]^2 + x[1]"), x, list(zip(x, [2, 0, 0])))
    assert float(report.value) > 0.5
    assert not report.passed
    assert "DISAGREES" in to_plain(report)


def test_scalar_variable_and_exact_point():
    t = sp.Symbol("t", real=True)
    report = gradcheck(t * sp.exp(t), t, [(t, sp.Integer(1))])
    assert float(report.value) < 1e-8
    assert report.rows[0].symbolic == pytest.approx(2 * np.e)


def test_step_scales_with_the_point():
    t = sp.Symbol("t", real=True)
    small = gradcheck(t**2, t, [(t, sp.Float(0.5))]).rows[0].step
    large = gradcheck(t**2, t, [(t, sp.Float(1e6))]).rows[0].step
    assert large == pytest.approx(small * 1e6)
    assert gradcheck(t**2, t, [(t, sp.Float(1e6))]).value < 1e-7


def test_every_symbol_needs_a_value():
    s = session(components=True)
    x = _components_of(s, "x")
    with pytest.raises(GradlangValueError, match="y"):
        gradcheck(s.eval("x[0] * y"), x, list(zip(x, [1, 2, 3])))


def test_gradcheck_needs_a_point_in_the_language():
    with pytest.raises(Exception):
        Session().run("x: R^2\ngradcheck(x[0], x)")


def renders():
    s = session()
    (result,) = s.run("gradcheck(x[0] * sg(x[0]) + x[1], x) at x = [2, 1, 0]")
    return result.attachments[0]


def test_plain_table():
    lines = to_plain(renders()).splitlines()
    assert lines[1].split()[:2] == ["component", "symbolic"]
    assert "true finite diff." in lines[1]
    x0 = next(line for line in lines if line.startswith("x[0]"))
    assert x0.split()[:4] == ["x[0]", "2", "2", "4"]  # symbolic 2, frozen 2, true 4
    assert "*" in x0
    assert "x[0]" in lines[-1] and "x[1]" not in lines[-1]


def test_json_and_latex_and_rich():
    report = renders()
    data = to_json(report)
    assert data["kind"] == "gradcheck"
    assert [r["component"] for r in data["rows"]] == ["x[0]", "x[1]", "x[2]"]
    assert [r["stops_changed"] for r in data["rows"]] == [True, False, False]
    assert data["rows"][0]["true_fd"] == pytest.approx(4.0)
    assert data["max_relative_error"] < 1e-7
    assert to_latex(report).startswith(r"\begin{array}")
    console = Console(width=120, record=True, color_system=None)
    console.print(to_rich(report))
    text = console.export_text()
    assert "frozen finite diff." in text and "x[2]" in text


def test_finite_differences_of_an_infinity_warn_nothing():
    """inf - inf in the central differences is nan quietly (NumPy's RuntimeWarning reached the user's terminal)."""
    import warnings

    from gradlang import Session

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Session().run("v: R^3\ngradcheck(dot(v, v) - 3/0.0, v) at v = [1.0, 2.0, 3.0]")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_a_check_at_an_infinite_point_lets_no_numpy_warning_through():
    # x + h - (x - h) at x = inf is inf - inf: nan, as IEEE says, but NumPy's RuntimeWarning (with gradcheck.py's
    # path) reached the terminal (grammar fuzzer, typed seed 412)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = Session().eval("x: R\ngradcheck(x*x, x) at x = inf")
    assert np.isnan(float(report))
