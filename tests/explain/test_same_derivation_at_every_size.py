"""Issue #36 / #40: `x: R^3` and `x: R^n` derive a program the same way, closing check included.

Each test compares the whole plain derivation at both spellings of the size (the size name the only
difference), and checks the derived result against the engine's numbers where it is about numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.render.plain import to_plain


def _shown(size, body: str) -> tuple:
    """The plain derivation, the size name n written 3 (so the two spellings compare whole), and its steps."""
    result = Session().run(f"x: R^{size}\nW: R^({size}, {size})\nt: R\nu: R\nexplain {body}")[-1]
    return re.sub(r"\bn\b", "3", to_plain(result)), result.steps


@pytest.mark.parametrize("body", [
    "diff(sum(x)*t^2, t)",
    "diff(sum(x)*t^2*u, t, 2, u)",
    "blocked(sum(x)*sg(t)*t, t)",
    "diff(norm(W @ x)*sin(t), t)",
])
def test_a_diff_by_a_scalar_derives_at_a_symbolic_size_as_at_a_literal_size(body):
    literal, steps = _shown(3, body)
    symbolic, at_n = _shown("n", body)
    assert literal == symbolic  # the whole derivation: sum(x) a constant of the rule table at both sizes
    assert len(steps) == len(at_n) == 1 and at_n[0].check.agrees and steps[0].check.agrees
    assert "rule" in at_n[0].summary, symbolic


def test_a_diff_by_a_scalar_at_a_symbolic_size_gives_the_literal_numbers():
    (step,) = _shown("n", "diff(sum(x)*t^2, t)")[1]
    assert str(step.derived) == "2*t*sum(x)"
    literal = Session().run("x: R^3\nt: R\ndiff(sum(x)*t^2, t) at x = [0.3, -1.2, 2.0], t = 1.5")[-1].value
    assert float(literal) == pytest.approx(2 * 1.5 * np.sum([0.3, -1.2, 2.0]))


@pytest.mark.parametrize("size", [3, "n"])
def test_a_variable_listed_twice_has_one_line(size):
    text, (step,) = _shown(size, "grad(sum(tanh(W @ x)), [W, W])")
    assert text.count("∂L/∂W =") == 1, text
    assert step.check.agrees and step.check.kind == "symbolic"
    assert text.splitlines()[-1] == "[t1, t1]"  # the value lists it twice, as jax.grad(argnums=(0, 0)) does


@pytest.mark.parametrize("body", [
    "grad(sum(tanh(W @ x)), W)",
    "grad(sum(x^2) + t*sum(x), [W, x])",
    "jacobian(softmax(W @ x), x)",
    "hessian(sum(exp(x)), x)",
])
def test_the_closing_check_reads_the_same_at_both_sizes(body):
    literal, (at_three,) = _shown(3, body)
    symbolic, (at_n,) = _shown("n", body)
    assert at_three.check.kind == at_n.check.kind == "symbolic"
    assert literal == symbolic


def test_a_grad_by_scalars_at_a_literal_size_is_checked_against_the_engine_components():
    """At R^3 the engine's grad by [a, b] is components; the derivation's formula is checked by its own
    components there (a whole-formula random point would take x[0] apart from x and call them different)."""
    result = Session().run("x: R^3\ny: R^3\na: R\nb: R\nexplain grad(sum((a*x + b - y)^2), [a, b])")[-1]
    (step,) = result.steps
    assert step.check.agrees and step.check.kind in ("symbolic", "numeric") and step.check.sizes == ()
    a, b, x, y = 0.7, -0.4, np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -0.25])
    at = Session().run("x: R^3\ny: R^3\na: R\nb: R\n"
                       "grad(sum((a*x + b - y)^2), [a, b]) at a = 0.7, b = -0.4, x = [0.3, -1.2, 2.0], "
                       "y = [1.0, 0.5, -0.25]")[-1].value
    r = a * x + b - y
    assert np.allclose(np.array([float(v) for v in at]), [np.sum(2 * r * x), np.sum(2 * r)])
