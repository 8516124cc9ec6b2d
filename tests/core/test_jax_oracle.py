"""gradlang's derivatives of programs with stops, against JAX (issue 2, cross-check).

Each row is a gradlang program whose last line is a derivative, a JAX function
computing the same derivative with `jax.lax.stop_gradient`, and the float point
both are evaluated at; the numbers must agree to 1e-10 in float64.

Where JAX's convention at a kink differs from LANGUAGE.md section 5, the JAX
oracle implements the section-5 convention explicitly and the row says so:
`abs` is written `sign(u) * u` (JAX's `abs` has derivative 1 at 0, section 5
says 0), and `max`/`min` of several arguments is one `jnp.max` over the stacked
arguments (nested `jnp.maximum` pairs would split a three-way tie 1/4, 1/4, 1/2).
Elsewhere JAX's own rules already agree with section 5: `jnp.max` of a vector
and `jnp.maximum(x, 0.)` share ties equally, `relu` has derivative 0 at 0,
`jnp.round` takes halves to even.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

jax = pytest.importorskip("jax")  # the test extra installs it; without it these tests skip
jnp = pytest.importorskip("jax.numpy")

jax.config.update("jax_enable_x64", True)

sg = jax.lax.stop_gradient

SOFTMAX = """
softmax(v) = exp(v) / sum(exp(v))
stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))
"""


def stable_softmax(v):
    e = jnp.exp(v - sg(jnp.max(v)))
    return e / jnp.sum(e)


def section5_abs(u):
    """abs with derivative sign(u), 0 at 0 (section 5); jnp.abs has 1 at 0."""
    return jnp.sign(u) * u


def section5_max(*args):
    """max of several arguments as one reduction: tied arguments share equally."""
    return jnp.max(jnp.stack(args))


@dataclass(frozen=True)
class Row:
    id: str
    source: str            # a program whose last line is an expression, `at` is appended
    oracle: Callable       # keyword arguments named as in `point`
    point: dict

    def program(self) -> str:
        return f"{self.source.strip()} at {gradlang_point(self.point)}"


def gradlang_point(point: dict) -> str:
    return ", ".join(f"{name} = {literal(value)}" for name, value in point.items())


def literal(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    return repr(float(value))


def _concat(*parts):
    return jnp.concatenate([jnp.ravel(p) for p in parts])


# ---- the programs ---------------------------------------------------------

def td_loss(q, n, r, gamma, stop=sg):
    return (r + gamma * stop(jnp.max(n)) - q) ** 2


def em_q(mu, x):
    log_joint = -((x - mu) ** 2) / 2 + jnp.log(jnp.array([0.3, 0.7]))
    resp = sg(jax.nn.softmax(log_joint))
    return jnp.sum(resp * log_joint)


def cd_loss(w):
    def energy(v):
        return -jnp.dot(w, jnp.tanh(v)) + jnp.sum(w**2 * v**2) / 4
    data = jnp.array([1.0, -0.5])
    negative = jnp.tanh(w + 0.3)          # a one-step "sample" that depends on w
    return energy(data) - energy(sg(negative))


VQ_X = jnp.array([0.3, -0.7])
VQ_T = jnp.array([0.1, 0.2])


def vq_loss(W, e):
    z_e = W @ VQ_X
    z_q = z_e + sg(e - z_e)
    return (jnp.sum((z_q - VQ_T) ** 2) + jnp.sum((sg(z_e) - e) ** 2)
            + 0.25 * jnp.sum((z_e - sg(e)) ** 2))


def simsiam(W):
    p = W @ jnp.array([1.0, 2.0])
    z = sg(W @ jnp.array([-0.5, 1.5]))
    return -jnp.dot(p, z) / (jnp.linalg.norm(p) * jnp.linalg.norm(z))


def reinforce(theta, w):
    log_pi = theta[1] - jax.nn.logsumexp(theta)
    baseline = w * 0.8
    return -(2.0 - sg(baseline)) * log_pi + (2.0 - baseline) ** 2


VQ = """
W: R^(2,2); e: R^2
z_e = W @ [0.3, -0.7]
z_q = z_e + sg(e - z_e)
loss = sum((z_q - [0.1, 0.2])^2) + sum((sg(z_e) - e)^2) + 0.25*sum((z_e - sg(e))^2)
"""

ROWS = [
    # stable softmax, including ties
    Row("stable-softmax-log-grad-ties-133", f"x: R^3\n{SOFTMAX}\ngrad(log(stable_softmax(x)[0]), x)",
        lambda x: jax.grad(lambda x: jnp.log(stable_softmax(x)[0]))(x), {"x": [1, 3, 3]}),
    Row("stable-softmax-log-grad-ties-222", f"x: R^3\n{SOFTMAX}\ngrad(log(stable_softmax(x)[2]), x)",
        lambda x: jax.grad(lambda x: jnp.log(stable_softmax(x)[2]))(x), {"x": [2, 2, 2]}),
    Row("stable-softmax-jacobian-ties-133", f"x: R^3\n{SOFTMAX}\njacobian(stable_softmax(x), x)",
        lambda x: jax.jacobian(stable_softmax)(x), {"x": [1, 3, 3]}),
    Row("stable-softmax-jacobian-ties-222", f"x: R^3\n{SOFTMAX}\njacobian(stable_softmax(x), x)",
        lambda x: jax.jacobian(stable_softmax)(x), {"x": [2, 2, 2]}),
    Row("stable-softmax-hessian-133", f"x: R^3\n{SOFTMAX}\nhessian(log(stable_softmax(x)[1]), x)",
        lambda x: jax.hessian(lambda x: jnp.log(stable_softmax(x)[1]))(x), {"x": [1, 3, 3]}),
    # x * sg(x)
    Row("x-sg-x-first", "diff(x*sg(x), x)",
        lambda x: jax.grad(lambda x: x * sg(x))(x), {"x": 1.5}),
    Row("x-sg-x-second", "diff(x*sg(x), x, 2)",
        lambda x: jax.grad(jax.grad(lambda x: x * sg(x)))(x), {"x": 1.5}),
    Row("third-derivative-mixed-stops", "diff(x^2*sg(x)^2 + sg(sin(x))*x^3 + x*sg(exp(x)), x, 3)",
        lambda x: jax.grad(jax.grad(jax.grad(
            lambda x: x**2 * sg(x) ** 2 + sg(jnp.sin(x)) * x**3 + x * sg(jnp.exp(x)))))(x), {"x": 0.7}),
    Row("mixed-partial-x-y", "diff(x*sg(y)*y + sg(x*y)*x^2 + sg(x)*y^2, x, y)",
        lambda x, y: jax.grad(jax.grad(lambda x, y: x * sg(y) * y + sg(x * y) * x**2 + sg(x) * y**2, 0), 1)(x, y),
        {"x": 0.6, "y": -1.2}),
    # straight-through estimators
    Row("straight-through", "diff(x + sg(round(x) - x), x)",
        lambda x: jax.grad(lambda x: x + sg(jnp.round(x) - x))(x), {"x": 1.3}),
    Row("straight-through-in-loss-half-to-even", "diff((x + sg(round(x) - x))^3, x)",
        lambda x: jax.grad(lambda x: (x + sg(jnp.round(x) - x)) ** 3)(x), {"x": 2.5}),
    # target-network TD loss: semi-gradient, and the full gradient through a tied max
    Row("td-loss-target-network", "q: R; n: R^3\ngrad((r + gamma*sg(max(n)) - q)^2, [q, n[0], n[1], n[2]])",
        lambda q, n, r, gamma: _concat(*jax.grad(td_loss, (0, 1))(q, n, r, gamma)),
        {"q": 1.0, "n": [0.5, 2.0, 2.0], "r": 1.0, "gamma": 0.9}),
    Row("td-loss-without-stop-ties", "q: R; n: R^3\ngrad((r + gamma*max(n) - q)^2, [q, n[0], n[1], n[2]])",
        lambda q, n, r, gamma: _concat(*jax.grad(lambda q, n: td_loss(q, n, r, gamma, stop=lambda v: v), (0, 1))(q, n)),
        {"q": 1.0, "n": [0.5, 2.0, 2.0], "r": 1.0, "gamma": 0.9}),
    # a matrix layer with a stopped part
    Row("matrix-layer-grad-W", "W: R^(2,3); x: R^3\ngrad(sum((W @ x + sg(W) @ (x^2))^2) / 2, W)",
        lambda W, x: jax.grad(lambda W: jnp.sum((W @ x + sg(W) @ x**2) ** 2) / 2)(W),
        {"W": [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], "x": [1.0, -2.0, 0.5]}),
    Row("matrix-layer-jacobian-x", "W: R^(2,3); x: R^3\njacobian(tanh(sg(W) @ x) * (W @ sg(x)) + W @ x, x)",
        lambda W, x: jax.jacobian(lambda x: jnp.tanh(sg(W) @ x) * (W @ sg(x)) + W @ x)(x),
        {"W": [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], "x": [1.0, -2.0, 0.5]}),
    # kinks: relu agrees with JAX; abs follows section 5 (sign(u) * u in the oracle)
    Row("relu-at-0", "diff(relu(x), x)", lambda x: jax.grad(jax.nn.relu)(x), {"x": 0.0}),
    Row("relu-of-stopped-difference", "diff(relu(x - sg(x)) + x*relu(x), x)",
        lambda x: jax.grad(lambda x: jax.nn.relu(x - sg(x)) + x * jax.nn.relu(x))(x), {"x": 2.0}),
    Row("abs-at-0-section5", "diff(abs(x), x)", lambda x: jax.grad(section5_abs)(x), {"x": 0.0}),
    Row("abs-at-0-composite-section5", "diff(abs(x - sg(x)) + x*abs(x) + abs(x + 1), x)",
        lambda x: jax.grad(lambda x: section5_abs(x - sg(x)) + x * section5_abs(x) + section5_abs(x + 1))(x),
        {"x": 0.0}),
    # max / min with ties
    Row("max-reduction-ties-133", "x: R^3\ngrad(max(x), x)", lambda x: jax.grad(jnp.max)(x), {"x": [1, 3, 3]}),
    Row("max-reduction-ties-222", "x: R^3\ngrad(max(x), x)", lambda x: jax.grad(jnp.max)(x), {"x": [2, 2, 2]}),
    Row("min-reduction-ties-113", "x: R^3\ngrad(min(x), x)", lambda x: jax.grad(jnp.min)(x), {"x": [1, 1, 3]}),
    Row("max-x-0-tie", "diff(max(x, 0), x)", lambda x: jax.grad(lambda x: jnp.maximum(x, 0.0))(x), {"x": 0.0}),
    Row("max-elementwise-jacobian", "x: R^3\njacobian(max(x, 0), x)",
        lambda x: jax.jacobian(lambda x: jnp.maximum(x, 0.0))(x), {"x": [0.0, 1.0, -1.0]}),
    Row("max-of-three-arguments-one-reduction-section5", "x: R^3\ngrad(max(x[0], x[1], x[2]), x)",
        lambda x: jax.grad(lambda x: section5_max(x[0], x[1], x[2]))(x), {"x": [2, 2, 2]}),
    Row("min-with-stopped-argument-tie", "diff(min(x, sg(x), 1) * x, x)",
        lambda x: jax.grad(lambda x: jnp.min(jnp.stack([x, sg(x), 1.0])) * x)(x), {"x": 1.0}),
    # where, logsumexp, sigmoid, softplus
    Row("where-false-branch", "diff(where(x > 0, x^2, sg(x)*x), x)",
        lambda x: jax.grad(lambda x: jnp.where(x > 0, x**2, sg(x) * x))(x), {"x": -1.5}),
    Row("where-true-branch", "diff(where(x > 0, x^2*sg(x), x), x)",
        lambda x: jax.grad(lambda x: jnp.where(x > 0, x**2 * sg(x), x))(x), {"x": 1.5}),
    Row("logsumexp-grad-ties", "x: R^3\ngrad(logsumexp(x), x)",
        lambda x: jax.grad(jax.nn.logsumexp)(x), {"x": [1, 3, 3]}),
    Row("logsumexp-stopped-max-hessian", "x: R^3\nlse(v) = sg(max(v)) + log(sum(exp(v - sg(max(v)))))\nhessian(lse(x), x)",
        lambda x: jax.hessian(lambda x: sg(jnp.max(x)) + jnp.log(jnp.sum(jnp.exp(x - sg(jnp.max(x))))))(x),
        {"x": [1, 3, 3]}),
    Row("sigmoid-of-surrogate", "diff(sigmoid(x*sg(x)), x)",
        lambda x: jax.grad(lambda x: jax.nn.sigmoid(x * sg(x)))(x), {"x": 0.7}),
    Row("softplus-second-derivative", "diff(softplus(x)*sg(softplus(x)), x, 2)",
        lambda x: jax.grad(jax.grad(lambda x: jax.nn.softplus(x) * sg(jax.nn.softplus(x))))(x), {"x": 0.3}),
    # learning rules built on stops
    Row("em-responsibilities", "mu: R^2\nlj = -(x - mu)^2/2 + [log(0.3), log(0.7)]\n"
        "r = sg(exp(lj) / sum(exp(lj)))\ngrad(sum(r * lj), mu)",
        lambda mu, x: jax.grad(em_q)(mu, x), {"mu": [-1.0, 1.5], "x": 0.4}),
    Row("contrastive-divergence", "w: R^2\nE(v) = -dot(w, tanh(v)) + sum(w^2 * v^2)/4\n"
        "grad(E([1.0, -0.5]) - E(sg(tanh(w + 0.3))), w)",
        lambda w: jax.grad(cd_loss)(w), {"w": [0.2, -0.9]}),
    Row("vq-vae-straight-through-encoder", VQ + "grad(loss, W)",
        lambda W, e: jax.grad(vq_loss, 0)(W, e), {"W": [[0.5, -1.0], [2.0, 0.3]], "e": [0.4, -0.1]}),
    Row("vq-vae-codebook", VQ + "grad(loss, e)",
        lambda W, e: jax.grad(vq_loss, 1)(W, e), {"W": [[0.5, -1.0], [2.0, 0.3]], "e": [0.4, -0.1]}),
    Row("simsiam-negative-cosine", "W: R^(2,2)\np = W @ [1.0, 2.0]\nz = sg(W @ [-0.5, 1.5])\n"
        "grad(-dot(p, z) / (norm(p) * norm(z)), W)",
        lambda W: jax.grad(simsiam)(W), {"W": [[0.5, -1.0], [2.0, 0.3]]}),
    Row("reinforce-stopped-baseline", "theta: R^3\nb = w * 0.8\n"
        "grad(-(2.0 - sg(b)) * (theta[1] - logsumexp(theta)) + (2.0 - b)^2, [theta[0], theta[1], theta[2], w])",
        lambda theta, w: _concat(*jax.grad(reinforce, (0, 1))(theta, w)),
        {"theta": [0.1, -0.4, 1.2], "w": 0.5}),
    # hessians of stopped expressions
    Row("hessian-stopped-products", "x: R^2\nhessian(x[0]*sg(x[1])*x[1] + sg(x[0]^2)*x[1]^2 + x[0]^2*x[1], x)",
        lambda x: jax.hessian(lambda x: x[0] * sg(x[1]) * x[1] + sg(x[0] ** 2) * x[1] ** 2 + x[0] ** 2 * x[1])(x),
        {"x": [1.5, -0.5]}),
    Row("hessian-x-sg-x-vector", "x: R^3\nhessian(sum(x*sg(x)) + x[0]*x[1]*sg(x[2]) + sg(x[0])*exp(x[1]), x)",
        lambda x: jax.hessian(lambda x: jnp.sum(x * sg(x)) + x[0] * x[1] * sg(x[2]) + sg(x[0]) * jnp.exp(x[1]))(x),
        {"x": [1.0, 2.0, 3.0]}),
    # reductions, matrices and the TensorFlow names
    Row("max-of-matrix-ties", "W: R^(2,2)\ngrad(max(W), W)", lambda W: jax.grad(jnp.max)(W),
        {"W": [[1.0, 3.0], [3.0, 0.0]]}),
    Row("prod-at-a-zero", "x: R^3\ngrad(prod(x) * sg(prod(x) + 1), x)",
        lambda x: jax.grad(lambda x: jnp.prod(x) * sg(jnp.prod(x) + 1))(x), {"x": [0.0, 2.0, 3.0]}),
    Row("transpose-product-stopped", "W: R^(2,2)\ngrad(sum(transpose(W) @ sg(W)), W)",
        lambda W: jax.grad(lambda W: jnp.sum(W.T @ sg(W)))(W), {"W": [[1.0, 2.0], [3.0, 4.0]]}),
    Row("rows-dot-mean", "W: R^(2,2)\ngrad(dot(W[1], sg(W[0])) * mean(W), W)",
        lambda W: jax.grad(lambda W: jnp.dot(W[1], sg(W[0])) * jnp.mean(W))(W), {"W": [[1.0, 2.0], [3.0, 4.0]]}),
    Row("softmax-builtin-of-surrogate", "x: R^3\njacobian(softmax(x * sg(x)), x)",
        lambda x: jax.jacobian(lambda x: jax.nn.softmax(x * sg(x)))(x), {"x": [0.5, -1.0, 2.0]}),
    Row("min-elementwise-stopped-ties", "x: R^3\njacobian(min(x, sg(x)^2), x)",
        lambda x: jax.jacobian(lambda x: jnp.minimum(x, sg(x) ** 2))(x), {"x": [0.0, 1.0, 2.0]}),
    Row("norm-of-surrogate", "x: R^3\ngrad(norm(x - sg(x) + x), x)",
        lambda x: jax.grad(lambda x: jnp.linalg.norm(x - sg(x) + x))(x), {"x": [3.0, 4.0, 0.0]}),
    Row("tensorflow-reductions-ties", "x: R^2\ngrad(reduce_sum(x^2) + reduce_max(x) + reduce_min(x) + reduce_mean(sg(x)*x), x)",
        lambda x: jax.grad(lambda x: jnp.sum(x**2) + jnp.max(x) + jnp.min(x) + jnp.mean(sg(x) * x))(x),
        {"x": [1.0, 1.0]}),
    Row("hessian-logsumexp-sigmoid-softplus", "x: R^3\nhessian(logsumexp(x*sg(x)) + sum(sigmoid(x)*sg(softplus(x))), x)",
        lambda x: jax.hessian(lambda x: jax.nn.logsumexp(x * sg(x))
                              + jnp.sum(jax.nn.sigmoid(x) * sg(jax.nn.softplus(x))))(x), {"x": [0.5, -1.0, 2.0]}),
    Row("log-base-and-stopped-exponent", "x: R^2\ngrad(log(x[0], 2) * sg(x[1]) + x[1]^sg(x[0]), x)",
        lambda x: jax.grad(lambda x: jnp.log(x[0]) / jnp.log(2.0) * sg(x[1]) + x[1] ** sg(x[0]))(x),
        {"x": [3.0, 2.0]}),
    Row("where-condition-on-a-tie", "x: R^2\ngrad(where(x[0] >= x[1], x[0]*sg(x[1]), x[1]^2), x)",
        lambda x: jax.grad(lambda x: jnp.where(x[0] >= x[1], x[0] * sg(x[1]), x[1] ** 2))(x), {"x": [2.0, 2.0]}),
    Row("matrix-of-expressions-squared", "x: R^2\nM = [[x[0], sg(x[1])], [x[1]^2, x[0]*x[1]]]\n"
        "grad(sum(M @ M @ [1.0, 2.0]), x)",
        lambda x: jax.grad(lambda x: jnp.sum(_m(x) @ _m(x) @ jnp.array([1.0, 2.0])))(x), {"x": [0.5, -1.5]}),
    Row("jacobian-of-a-list", "x: R^2\njacobian([sg(x[0])*x[1], x[0]^2, tanh(x[1])], x)",
        lambda x: jax.jacobian(lambda x: jnp.stack([sg(x[0]) * x[1], x[0] ** 2, jnp.tanh(x[1])]))(x),
        {"x": [0.5, -1.5]}),
]


def _m(x):
    return jnp.array([[x[0], sg(x[1])], [x[1] ** 2, x[0] * x[1]]])


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_agrees_with_jax(row, values):
    expected = np.asarray(row.oracle(**{k: jnp.asarray(v, dtype=jnp.float64) for k, v in row.point.items()}))
    got = values(row.program())
    assert got.shape == expected.shape, (got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_there_are_at_least_twenty_programs_with_stops():
    with_stops = [row for row in ROWS if "sg(" in row.source or "stop_gradient(" in row.source]
    assert len(with_stops) >= 20
