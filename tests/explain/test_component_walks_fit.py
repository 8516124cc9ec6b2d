"""The rule table's walks fit a page (issue 40): a step wider than the page puts `= result` below its left
side, broken between its terms; a wide title breaks between its terms or list entries, a long summary
between its words; a component of one step stands on its label's line; simplify's log(u^v) is no
simpler form. Each derivation here was a wall (163, 163, 111 columns; 32 lines) and still equals grad."""

from __future__ import annotations

import sympy as sp

from gradlang import Session
from gradlang.explain.explanation import simpler
from gradlang.render import to_plain

THREE = "x: R\nexplain[depth=all] diff(atan(x)*cosh(x + 2)*log(1 + x^2), x)"
UNFOLD = "x: R^3\nexplain[unfold] jacobian(softmax(x), x)[0, 1]"
MAXES = "x: R^3\nexplain grad(max(max(x[0], x[1]), x[2]), x)"
HESSIAN = "x: R^3\nexplain hessian(x[0] * x[1] * x[2], x)"


def _lines(source: str) -> list[str]:
    result = [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]
    lines = [line for line in to_plain(result).splitlines() if line.startswith("#")]
    assert len(lines) <= 25 and max(len(line) for line in lines) <= 100, lines
    assert lines[-1].startswith("# ✓ equals"), lines[-1]
    return lines


def test_a_wide_step_puts_its_result_below_broken_between_terms():
    lines = _lines(THREE)
    assert lines[3] == "# 1. d/dx (log(x^2 + 1)*cosh(x + 2)*atan(x))                        [product]"
    assert lines[4] == "#    = 2*x*cosh(x + 2)*atan(x)/(x^2 + 1) + log(x^2 + 1)*sinh(x + 2)*atan(x)"
    assert lines[5] == "#      + log(x^2 + 1)*cosh(x + 2)/(x^2 + 1)"
    assert lines[2] == "#    power rule"  # the summary wraps between its words


def test_simplify_combining_logs_into_a_power_is_no_simpler_form():
    x = sp.Symbol("x", real=True)
    result = sp.diff(sp.atan(x) * sp.cosh(x + 2) * sp.log(1 + x**2), x)
    shown = simpler(result)
    assert shown is None or not any(p.exp.free_symbols for p in shown.atoms(sp.Pow))


def test_an_unfolded_title_is_the_call_as_written_and_its_definition_unfolds_it():
    # it was the unfolded softmax, three lines of entries; the title is in the user's names (render/derivation)
    lines = _lines(UNFOLD)
    assert lines[0] == "# jacobian(softmax(x), x)[0, 1]:"
    assert "# definition: softmax(v)[k] = exp(v[k]) / sum(exp(v))" in lines
    assert all(len(line) <= 100 for line in lines)


def test_a_wide_max_step_fits():
    lines = _lines(MAXES)
    assert "#    = ((sign(-x[0] + x[1]) + 1)*(sign(-x[2] + max(x[0], x[1])) + 1))/4" in lines


def test_a_component_of_one_step_stands_on_its_labels_line():
    lines = _lines(HESSIAN)
    assert any(line.startswith("# ∂²/∂x₁∂x₀: 5. ∂/∂x₁ (x[1]*x[2]) = x[2]") for line in lines), lines
    assert "# ∂²/∂x₁∂x₀:" not in lines
