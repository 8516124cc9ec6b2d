"""Results and messages a hostile-input probe found wrong or misleading (issue 38), as a user meets them.

Numbers are checked against NumPy and JAX in float64; each test fails without its fix.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.render.plain import to_plain
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)


def _error(program: str) -> GradlangError:
    with pytest.raises(GradlangError) as caught:
        Session().run(program)
    return caught.value


# --- 1. logdet is slogdet: a large matrix does not overflow ---------------------------------


def _well_conditioned(n: int) -> np.ndarray:
    return np.random.default_rng(38).standard_normal((n, n))


@pytest.mark.parametrize("declared", ["R^(1000,1000)", "R^(n,n)"])
def test_logdet_of_a_large_matrix_is_slogdet_not_inf(declared):
    # det(W Wᵀ) is about e^5905 here: log(det(·)) of a float det was inf
    W = _well_conditioned(1000)
    session = Session()
    session.run(f"W: {declared}")
    session.bind("V", W)
    got = float(session.eval("logdet(W @ transpose(W)) at W = V"))
    sign, expected = np.linalg.slogdet(W @ W.T)
    assert sign > 0 and expected > 5000
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("program", [
    "logdet(1e70*[[1.0, 0.0], [0.0, 2.0]])",  # the component engine's float matrix
    "W: R^(2,2)\nlogdet(W) at W = 1e70*[[1.0, 0.0], [0.0, 2.0]]",  # a float point at a literal size
    "W: R^(n,n)\nlogdet(W) at W = 1e70*[[1.0, 0.0], [0.0, 2.0]]",  # the whole-array formula
    "W: R^(n,n)\nlog(det(W)) at W = 1e70*[[1.0, 0.0], [0.0, 2.0]]",
])
def test_logdet_never_forms_the_float_determinant(program):
    expected = float(jnp.linalg.slogdet(1e70 * jnp.array([[1.0, 0.0], [0.0, 2.0]]))[1])
    np.testing.assert_allclose(float(Session().eval(program)), expected, rtol=1e-12)


@pytest.mark.parametrize("program", [
    "logdet([[-1.0]])",
    "logdet([[0.0, 0], [0, 0]])",
    "W: R^(2,2)\nlogdet(W) at W = [[1.0, 0.0], [0.0, -1.0]]",
    "W: R^(n,n)\nlogdet(W) at W = [[1.0, 0.0], [0.0, -1.0]]",
])
def test_logdet_of_a_float_det_at_most_zero_is_a_value_error(program):
    error = _error(program)
    assert error.kind == "ValueError" and "det(A) > 0" in error.message and error.span is not None


def test_logdet_of_an_exact_matrix_stays_exact():
    assert to_plain(Session().eval("W: R^(3,3)\nlogdet(W @ transpose(W)) at W = [[1, 2, 0], [0, 1, 3], [1, 0, 1]]")) \
        == "2*log(7)"


# --- 2. max(W, 0) is elementwise; an axis only as axis= -----------------------------------

W23 = np.array([[1.0, 0.0, -2.0], [3.0, -1.0, 0.5]])
W23_TEXT = "[[1.0, 0.0, -2.0], [3.0, -1.0, 0.5]]"


@pytest.mark.parametrize("declared", ["R^(2,3)", "R^(m,n)"])
def test_max_of_a_matrix_and_zero_is_a_relu(declared):
    session = Session()
    session.run(f"W: {declared}")
    value = as_floats(session.eval(f"max(W, 0) at W = {W23_TEXT}"))
    np.testing.assert_array_equal(value, np.maximum(W23, 0.0))


@pytest.mark.parametrize("declared", ["R^(2,3)", "R^(m,n)"])
def test_the_gradient_of_max_with_zero_shares_a_tie(declared):
    # section 5: max(x, 0) at x = 0 has derivative 1/2 (W[0, 1] = 0 here)
    session = Session()
    session.run(f"W, C: {declared}")
    weights = "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"
    got = as_floats(session.eval(f"grad(sum(max(W, 0) * C), W) at W = {W23_TEXT}, C = {weights}"))
    expected = np.where(W23 > 0, 1.0, np.where(W23 == 0, 0.5, 0.0)) * np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("declared", ["R^(2,3)", "R^(m,n)"])
@pytest.mark.parametrize("axis", [0, 1])
def test_max_and_min_take_an_axis_by_keyword(declared, axis):
    session = Session()
    session.run(f"W: {declared}")
    got = as_floats(session.eval(f"max(W, axis={axis}) - min(W, axis={axis}) at W = {W23_TEXT}"))
    np.testing.assert_array_equal(got, np.max(W23, axis) - np.min(W23, axis))
    gradient = as_floats(session.eval(f"grad(sum(max(W, axis={axis})), W) at W = {W23_TEXT}"))
    np.testing.assert_array_equal(gradient, np.asarray(jax.grad(lambda w: jnp.sum(jnp.max(w, axis)))(W23)))


@pytest.mark.parametrize("program, expected", [
    ("sum([[1, 2], [3, 4]], axis=1)", "[3, 7]"),
    ("mean([[1, 2], [3, 5]], axis=0)", "[2, 7/2]"),
    ("max([[1, 5], [-3, 4]], 0)", "[[1, 5], [0, 4]]"),
    ("max([[1, 5], [3, 4]], axis=0)", "[3, 5]"),
    ("W: R^(m,n)\nmax(W, axis=0)", "max(W, axis=0)"),  # the plain form reads back as the axis form
    ("W: R^(m,n)\nmax(W, 0)", "max(W, 0)"),
])
def test_keyword_axes_read_and_print(program, expected):
    assert to_plain(Session().eval(program)) == expected


@pytest.mark.parametrize("program, message, column", [
    ("max([1, 2], axis=0, keepdims=1)", "keepdims=", 21),
    ("norm([1, 2], axis=0)", "norm takes no keyword axis=", 14),
    ("max([1, 2], [3, 4], axis=0)", "after one value", 21),
    ("f(a) = a\nf(1, axis=0)", "'f' takes no keyword arguments", 1),
    ("sum([1, 2], axis=0, axis=0)", "given twice", 21),
])
def test_a_keyword_gradlang_does_not_read_is_a_placed_syntax_error(program, message, column):
    error = _error(program)
    assert error.kind == "SyntaxError" and message in error.message
    assert error.span is not None and error.span.column == column
