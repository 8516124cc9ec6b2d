"""softmax, logsumexp and the stable softmax stay finite and right at logits of ±1000;
floating point overflow and domain errors give IEEE inf and nan, as NumPy does."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")  # the test extra installs it; without it these tests skip
jnp = pytest.importorskip("jax.numpy")

import gradlang

jax.config.update("jax_enable_x64", True)

sg = jax.lax.stop_gradient

STABLE = "stable_softmax(v) = exp(v - sg(max(v))) / sum(exp(v - sg(max(v))))\n"


def stable_softmax(v):
    e = jnp.exp(v - sg(jnp.max(v)))
    return e / jnp.sum(e)


POINTS = [
    [1000.0, 999.0, -1000.0],
    [-1000.0, -1000.0, -999.0],
    [1000.0, 1000.0, 1000.0],
    [-1000.0, 0.0, 1000.0],
    [999.5, 1000.0, -999.5],
]

EXPRESSIONS = [
    # (id, gradlang expression in x, JAX function of x, the component under a log or None)
    ("softmax", "softmax(x)", jax.nn.softmax, None),
    ("softmax-jacobian", "jacobian(softmax(x), x)", jax.jacobian(jax.nn.softmax), None),
    ("log-softmax-grad", "grad(log(softmax(x)[1]), x)", jax.grad(lambda x: jnp.log(jax.nn.softmax(x)[1])), 1),
    ("logsumexp", "logsumexp(x)", jax.nn.logsumexp, None),
    ("logsumexp-grad", "grad(logsumexp(x), x)", jax.grad(jax.nn.logsumexp), None),
    ("logsumexp-hessian", "hessian(logsumexp(x), x)", jax.hessian(jax.nn.logsumexp), None),
    ("stable-softmax", "stable_softmax(x)", stable_softmax, None),
    ("stable-softmax-jacobian", "jacobian(stable_softmax(x), x)", jax.jacobian(stable_softmax), None),
    ("stable-softmax-log-grad", "grad(log(stable_softmax(x)[0]), x)",
     jax.grad(lambda x: jnp.log(stable_softmax(x)[0])), 0),
]


def _cases():
    """Every expression at every point, except a log of a probability that underflows to 0:
    there log is -inf and the gradient is nan in JAX as well."""
    for id_, expression, oracle, logged in EXPRESSIONS:
        for point in POINTS:
            if logged is not None and np.exp(point[logged] - max(point)) == 0.0:
                continue
            yield pytest.param(expression, oracle, point, id=f"{id_}-" + "/".join(f"{v:g}" for v in point))


@pytest.mark.parametrize("expression, oracle, point", list(_cases()))
def test_finite_and_right_at_extreme_logits(expression, oracle, point, values):
    got = values(f"x: R^3\n{STABLE}{expression} at x = {point}")
    expected = np.asarray(oracle(jnp.array(point)))
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("program, oracle", [
    pytest.param("logsumexp([t, t - 1, -t]) at t = linspace(-1000, 1000, 5)",
                 jax.vmap(lambda t: jax.nn.logsumexp(jnp.array([t, t - 1, -t]))), id="logsumexp"),
    pytest.param("diff(logsumexp([t, t - 1, -t]), t) at t = linspace(-1000, 1000, 5)",
                 jax.vmap(jax.grad(lambda t: jax.nn.logsumexp(jnp.array([t, t - 1, -t])))), id="logsumexp-diff"),
    pytest.param("softmax([t, 2*t, 0])[1] at t = linspace(-1000, 1000, 5)",
                 jax.vmap(lambda t: jax.nn.softmax(jnp.array([t, 2 * t, 0.0]))[1]), id="softmax"),
])
def test_finite_and_right_through_compiled_numpy(program, oracle, values):
    got = values(program)
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, np.asarray(oracle(jnp.linspace(-1000.0, 1000.0, 5))), rtol=1e-10, atol=1e-12)


# Floating point follows IEEE 754 as NumPy does (LANGUAGE.md section 7): the same
# number whether the float is written in the expression or given by `at`.
IEEE = [
    ("log-of-zero-at", "log(x) at x = 0.0", lambda: np.log(0.0), None),
    ("log-of-zero-literal", "log(0.0)", lambda: np.log(0.0), None),
    ("log-base-of-zero-literal", "log(0.0, 2)", lambda: np.log(0.0) / np.log(2), None),
    ("log-of-negative-at", "log(x) at x = -1.0", lambda: np.log(-1.0), None),
    ("log-of-negative-literal", "log(-1.0)", lambda: np.log(-1.0), None),
    ("sqrt-of-negative-literal", "sqrt(-1.0)", lambda: np.sqrt(-1.0), None),
    ("sqrt-of-negative-at", "sqrt(x) at x = -4.0", lambda: np.sqrt(-4.0), None),
    ("acos-out-of-domain", "acos(2.0)", lambda: np.arccos(2.0), None),
    ("float-division-by-zero", "x/y at x = 1.0, y = 0.0", lambda: np.float64(1.0) / np.float64(0.0), None),
    ("zero-over-zero", "0.0/0", lambda: np.float64(0.0) / np.float64(0.0), None),
    ("exp-overflow", "exp(1000.0)", lambda: np.exp(1000.0), None),
    ("exp-underflow", "exp(-1000.0)", lambda: np.exp(-1000.0), None),
    ("multiplication-overflow", "1e308 * 10", lambda: np.float64(1e308) * 10, None),
    ("derivative-at-pole", "diff(log(x), x) at x = 0.0", lambda: np.float64(1.0) / np.float64(0.0), None),
    ("compiled-log", "log(t) at t = linspace(0, 1, 3)", lambda: np.log(np.linspace(0, 1, 3)), None),
    ("compiled-sqrt", "sqrt(t) at t = linspace(-1, 1, 3)", lambda: np.sqrt(np.linspace(-1, 1, 3)), None),
    ("compiled-reciprocal", "1/t at t = linspace(-1, 1, 3)", lambda: 1 / np.linspace(-1, 1, 3), None),
    ("vector-log", "x: R^2\nlog(x) at x = [0.0, 1.0]", lambda: np.log([0.0, 1.0]), None),
]


@pytest.mark.parametrize("program, numpy_value", [
    pytest.param(program, oracle, id=id_, marks=[pytest.mark.xfail(strict=True, raises=gradlang.ValueError, reason=bug)] if bug else [])
    for id_, program, oracle, bug in IEEE
])
def test_floating_point_follows_ieee_like_numpy(program, numpy_value, values):
    with np.errstate(all="ignore"):
        expected = numpy_value()
    np.testing.assert_array_equal(values(program), expected)
