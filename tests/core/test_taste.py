"""The taste program of LANGUAGE.md section 1 gives the results stated there."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")  # the test extra installs it; without it these tests skip
jnp = pytest.importorskip("jax.numpy")
import sympy as sp

from gradlang import Session

jax.config.update("jax_enable_x64", True)

TASTE = """\
# The numerically stable softmax from the tf.stop_gradient docs
x: R^3
softmax(v)        = exp(v) / sum(exp(v))
stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))

simplify(jacobian(stable_softmax(x), x) - jacobian(softmax(x), x))   # the zero matrix
explain diff(x[0] * stop_gradient(x[1]), x[1])                        # step by step: 0
grad(log(stable_softmax(x)[0]), x) at x = [1, 3, 3]                   # three numbers
"""


@pytest.fixture(scope="module")
def taste():
    """The printed results of the taste program, run once for this module."""
    return Session().run(TASTE)


def test_three_statements_print_in_order(taste):
    results = taste
    assert [(r.line, r.kind) for r in results] == [(6, "value"), (7, "explain"), (8, "value")]


def test_simplify_line_is_the_zero_matrix(taste):
    assert sp.Matrix(taste[0].value) == sp.zeros(3, 3)


def test_explain_line_is_zero_with_steps(taste):
    result = taste[1]
    assert result.value == 0
    assert result.steps, "explain shows a derivation"


def test_last_line_is_exact(taste):
    e2 = sp.exp(2)
    expected = [2 * e2 / (1 + 2 * e2), -e2 / (1 + 2 * e2), -e2 / (1 + 2 * e2)]
    got = list(sp.Array(taste[2].value))
    assert all(isinstance(g, sp.Expr) and not g.is_Float for g in got), got  # exact in, exact out
    assert [sp.simplify(g - e) for g, e in zip(got, expected)] == [0, 0, 0]


def test_last_line_matches_jax(taste):
    def log_stable_softmax0(v):
        e = jnp.exp(v - jax.lax.stop_gradient(jnp.max(v)))
        return jnp.log(e[0] / jnp.sum(e))

    expected = jax.grad(log_stable_softmax0)(jnp.array([1.0, 3.0, 3.0]))
    np.testing.assert_allclose([float(v) for v in taste[2].value], np.asarray(expected), rtol=1e-12)

