"""Builtins of sections 5 and 6 that were refused at a symbolic size or at a literal one (issue #37).

Each row is taken at a symbolic size (`x: R^n`) and at a literal one (`x: R^3`): its numbers at a float point
agree with JAX in float64, and so the two sizes agree with each other; where the row says so, the result is
a formula (not components, not a refusal)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp
from jax.scipy.special import logsumexp

from gradlang import Session

jax.config.update("jax_enable_x64", True)

X = np.array([1.5, -0.75, 0.5])
X0 = np.array([1.5, 0.0, 0.5])  # a zero component: prod's gradient must stay exact
W = np.array([[0.3, -1.2, 2.0], [1.1, 0.4, -0.6]])
A = np.array([[2.0, 0.3, -0.1], [0.2, 1.5, 0.4], [-0.3, 0.1, 1.8]])
SCALARS = {"a": 0.7, "b": -1.3}


def _listed(array) -> str:
    return str(np.asarray(array, dtype=float).tolist())


def _run(size: str, source: str, point: dict):
    """The value of `source at point` with x, y: R^size, W: R^(2, size), A: R^(size, size)."""
    shape = "n" if size == "n" else "3"
    declarations = f"x: R^{shape}\ny: R^{shape}\nW: R^(2,{shape})\nA: R^({shape},{shape})\na: R\nb: R\n"
    given = ", ".join(f"{k} = {_listed(v) if isinstance(v, np.ndarray) else v}" for k, v in point.items())
    return Session().eval(declarations + f"({source}) at {given}")


def _as_array(value):
    return np.asarray(value.tolist() if hasattr(value, "tolist") else value, dtype=float)


def _both_sizes(source: str, point: dict, expected) -> None:
    symbolic, literal = (_as_array(_run(size, source, point)) for size in ("n", "3"))
    np.testing.assert_allclose(symbolic, np.asarray(expected, dtype=float), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(literal, symbolic, rtol=1e-12, atol=1e-12)


def _formula(size: str, source: str) -> str:
    shape = "n" if size == "n" else "3"
    return Session().run(f"x: R^{shape}\nA: R^({shape},{shape})\nW: R^(2,{shape})\n{source}")[-1].text


# --- prod ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("x", [X, X0, np.array([0.0, 0.0, 2.0])], ids=["no zero", "one zero", "two zeros"])
def test_prod_and_its_gradient(x):
    _both_sizes("prod(x)", {"x": x}, jnp.prod(x))
    _both_sizes("grad(prod(x), x)", {"x": x}, jax.grad(jnp.prod)(x))
    assert _formula("n", "prod(x)") == "prod(x)"


@pytest.mark.parametrize("x", [X, X0, np.array([0.0, 0.0, 2.0]), np.array([0.0, -1.5, 0.0]), np.zeros(3)],
                         ids=["no zero", "one zero", "two zeros", "two zeros apart", "three zeros"])
def test_the_hessian_of_prod(x):
    """Between two zeros the entry is the product of the rest (was 0 at a symbolic size)."""
    _both_sizes("hessian(prod(x), x)", {"x": x}, jax.hessian(jnp.prod)(x))


def test_the_hessian_of_prod_between_two_zeros_of_a_longer_vector():
    x = np.array([0.0, 2.0, 0.0, -3.0, 0.5])
    value = Session().eval(f"x: R^n\nhessian(prod(x), x) at x = {_listed(x)}")
    np.testing.assert_allclose(_as_array(value), jax.hessian(jnp.prod)(x), rtol=1e-12, atol=1e-12)
    assert _as_array(value)[0, 2] == -3.0


# --- derivatives by a list of scalars, and of order n -----------------------------------------------

def _loss(a, b, x):
    return jnp.sum(jnp.exp(a * x)) * b + a * b * jnp.sum(x ** 2)


LOSS = "sum(exp(a*x))*b + a*b*sum(x^2)"


def test_grad_hessian_and_jacobian_by_a_list_of_scalars():
    point = {"x": X, **SCALARS}
    a, b = SCALARS["a"], SCALARS["b"]
    _both_sizes(f"grad({LOSS}, [a, b])", point, jax.grad(_loss, (0, 1))(a, b, X))
    hessian = jax.hessian(_loss, (0, 1))(a, b, X)
    _both_sizes(f"hessian({LOSS}, [a, b])", point, [[hessian[i][j] for j in range(2)] for i in range(2)])
    columns = jax.jacfwd(lambda a, b: X * a * b + jnp.sin(a), (0, 1))(a, b)
    _both_sizes("jacobian(x*a*b + sin(a), [a, b])", point, np.stack(columns, axis=1))


def test_diff_of_order_two_at_a_symbolic_size():
    point = {"x": X, **SCALARS}
    second = jax.grad(jax.grad(lambda a: jnp.sum(jnp.exp(a * X)) * jnp.sum(jnp.tanh(a * X))))(SCALARS["a"])
    _both_sizes("diff(sum(exp(a*x)) * sum(tanh(a*x)), a, 2)", point, second)
    assert _formula("n", "diff(sum(exp(a*x)), a, 2)") == "dot(x, x*exp(a*x))"


def test_jacobian_by_a_scalar_is_shaped_like_the_value():
    _both_sizes("jacobian(sin(x*a), a)", {"x": X, **SCALARS}, jax.jacfwd(lambda a: jnp.sin(X * a))(SCALARS["a"]))
    assert _formula("n", "jacobian(x*a, a)") == "x"


# --- diag of a matrix, logsumexp of a matrix, logdet -----------------------------------------------

def test_diag_of_a_matrix_is_its_diagonal():
    _both_sizes("diag(A)", {"A": A}, jnp.diag(A))
    _both_sizes("grad(sum(exp(diag(A @ A))), A)", {"A": A}, jax.grad(lambda m: jnp.sum(jnp.exp(jnp.diag(m @ m))))(A))
    assert _formula("n", "diag(A)") == "diag(A)"


def test_logsumexp_of_a_matrix_reduces_it_all():
    _both_sizes("logsumexp(W)", {"W": W}, logsumexp(W))
    _both_sizes("grad(logsumexp(W*W), W)", {"W": W}, jax.grad(lambda m: logsumexp(m * m))(W))
    assert _formula("n", "logsumexp(W)") == _formula("3", "logsumexp(W)") == "logsumexp(W)"


def _spd(n: int) -> np.ndarray:
    m = np.random.default_rng(n).normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


def test_logdet_of_a_float_6x6_at_a_literal_size_is_numpys_slogdet():
    matrix = _spd(6)
    given = _listed(matrix)
    for size in ("n", "6"):
        declared = f"A: R^({size},{size})\n"
        value = Session().eval(declared + f"logdet(A) at A = {given}")
        np.testing.assert_allclose(float(value), np.linalg.slogdet(matrix)[1], rtol=1e-12)
        gradient = _as_array(Session().eval(declared + f"grad(logdet(A), A) at A = {given}"))
        np.testing.assert_allclose(gradient, jax.grad(lambda m: jnp.linalg.slogdet(m)[1])(matrix), rtol=1e-10)
    assert _formula("n", "grad(logdet(A), A)") == "transpose(inv(A))"


# --- an index left free at a literal size; a list of scalars of a symbolic-size vector ---------------

def test_an_index_left_free_is_a_formula_at_a_literal_size():
    assert _formula("3", "x[k]") == "x[k]"
    assert _formula("3", "onehot(k, 3)") == "onehot(k, 3)"
    for k in range(3):
        _both_sizes("x[k]", {"x": X, "k": k}, X[k])
        expected = jax.grad(lambda v: logsumexp(v) - v[k])(X)
        _both_sizes("grad(logsumexp(x) - dot(onehot(k, len(x)), x), x)", {"x": X, "k": k}, expected)


def test_a_list_of_scalars_picked_from_a_vector():
    assert Session().run("y: R^n\n[y[0], 2]")[-1].text == "[y[0], 2]"
    _both_sizes("[y[0], 2]", {"y": X}, [X[0], 2.0])
    expected = jax.grad(lambda v: jnp.dot(jnp.array([v[0], 2.0]), jnp.array([v[1], 0.7])) ** 2)(X)
    _both_sizes("grad(dot([y[0], 2], [y[1], a])^2, y)", {"y": X, "a": 0.7}, expected)
    jacobian = jax.jacfwd(lambda v: jnp.array([v[0] * v[2], v[1] ** 2]))(X)
    _both_sizes("jacobian([y[0]*y[2], y[1]^2], y)", {"y": X}, jacobian)


# --- all and any of conditions --------------------------------------------------------------------

@pytest.mark.parametrize("x", [X, np.abs(X)], ids=["mixed signs", "positive"])
def test_all_and_any_of_conditions(x):
    for size in ("n", "3"):
        shape = "n" if size == "n" else "3"
        session = Session()
        session.run(f"x: R^{shape}")
        assert session.eval(f"all(x > 0) at x = {_listed(x)}") is (sp.true if np.all(x > 0) else sp.false)
        assert session.eval(f"any(x < 0) at x = {_listed(x)}") is (sp.true if np.any(x < 0) else sp.false)
        assert session.run(f"all(x > 0) at x = {_listed(x)}")[-1].text == str(bool(np.all(x > 0))).lower()
        assert session.run("all(x > 0)")[-1].text == "all(x > 0)"

    def loss(v):
        return jnp.where(jnp.all(v > 0), jnp.sum(jnp.log(jnp.abs(v))), jnp.sum(v ** 2))

    _both_sizes("grad(where(all(x > 0), sum(log(abs(x))), sum(x^2)), x)", {"x": x}, jax.grad(loss)(x))


# --- explain over the new forms: the value under the derivation is the value ----------------------

@pytest.mark.parametrize("source, value", [
    ("jacobian(x*a, a)", "x"),  # was an InternalError (the forward pass took a vector variable only)
    ("jacobian(x*a*b, [a, b])", "outer(a*x, onehot(1, 2)) + outer(b*x, onehot(0, 2))"),  # was zeros(n)
    ("grad(sum(x*a)*b, [a, b])", "[b*sum(x), a*sum(x)]"),
    ("grad(logdet(A), A)", "transpose(inv(A))"),
])
def test_explain_at_a_symbolic_size(source, value):
    result = Session().run(f"x: R^n\nA: R^(n,n)\nexplain {source}")[-1]
    assert result.text.strip().splitlines()[-1] == value
