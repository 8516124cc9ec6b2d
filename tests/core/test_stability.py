"""softmax, logsumexp and the stable softmax stay finite and right at logits of ±1000."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

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


@pytest.mark.parametrize("expression, oracle, point", _cases())
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
