"""blocked at literal sizes is the tensor engine's formula, as at a symbolic size (issue #36, one engine).

The value is evaluated once, by the tensor engine; its components are a view
of it. Only where the components of that formula simplify to numbers (the
stable softmax's stop blocks nothing) are those numbers the answer.
"""

import numpy as np
import pytest

from gradlang.core.session import Session

SAME = [
    "blocked(sum(x*sg(x)), x)",
    "blocked(x*sg(x), x)",
    "blocked(logsumexp(x - sg(max(x))), x)",
    "blocked(x*sg(sum(x)), x)",
    "blocked(sum(exp(x)*sg(x^2)), x)",
]


def _shown(size: str, statement: str) -> str:
    return Session().run(f"x: R^{size}\n{statement}")[-1].text


@pytest.mark.parametrize("statement", SAME)
def test_literal_size_prints_the_symbolic_formula(statement):
    assert _shown("3", statement) == _shown("n", statement).replace("(n)", "(3)").replace("n)", "3)")


def test_a_stop_that_blocks_nothing_is_zero_at_literal_sizes():
    text = _shown("3", "stable(v) = exp(v - sg(max(v))) / sum(exp(v - sg(max(v))))\nblocked(stable(x), x)")
    assert text == "[[0, 0, 0], [0, 0, 0], [0, 0, 0]]"


def test_blocked_formula_has_the_component_numbers():
    """The formula's numbers at a point are the true derivative's minus the surrogate's (finite differences)."""
    session = Session()
    session.run("x: R^3\nf = sum(exp(x)*sg(x^2))")
    got = session.run("blocked(f, x) at x = [0.5, -1.0, 2.0]")[-1].value
    point = np.array([0.5, -1.0, 2.0])
    assert np.allclose(np.asarray(got, dtype=float).ravel(), np.exp(point) * 2 * point, rtol=1e-12)
