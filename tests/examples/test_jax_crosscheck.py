"""The key gradient of every example, against JAX (issue 5).

Each row runs one example's file through `gradlang.Session` (so the check uses
the example's own definitions), evaluates a gradient expression at a float
point, and compares it with the same function written in JAX with
`jax.lax.stop_gradient`, in float64, to 1e-10. Floats everywhere, so that the
gradlang side is evaluated the way a learner's numbers are.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
import pytest

jax = pytest.importorskip("jax")  # the test extra installs it; without it these tests skip
jnp = pytest.importorskip("jax.numpy")

from example_support import EXAMPLES

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient
grad, jacobian, softplus, sigmoid = jax.grad, jax.jacobian, jax.nn.softplus, jax.nn.sigmoid


@dataclass(frozen=True)
class Row:
    example: str
    gradlang: str                       # an expression evaluated after the example has run
    oracle: Callable[[], object]        # the same number(s), computed by JAX

    def __str__(self) -> str:
        return f"{self.example}: {self.gradlang}"


@lru_cache(maxsize=None)
def example_session(name: str):
    """A Session that has run examples/NAME.grad (cached: one run per example)."""
    from gradlang import Session

    session = Session()
    session.run(definitions((EXAMPLES / f"{name}.grad").read_text()), filename=f"{name}.grad")
    return session


def definitions(source: str) -> str:
    """The example without its printing statements (the CLI tests already run those)."""
    from gradlang.syntax.parse import parse

    silent = ("assignment", "definition", "declaration")
    statements = [s for s in parse(source).children if s.data in silent]
    return "\n".join(source[s.meta.start_pos : s.meta.end_pos] for s in statements)


def gradlang_value(row: Row) -> np.ndarray:
    value = example_session(row.example).eval(row.gradlang)
    value = value.tolist() if hasattr(value, "tolist") else value
    return np.array(value, dtype=np.float64)


# --- the examples' functions in JAX ---------------------------------------------------

def stable_softmax(v):
    e = jnp.exp(v - sg(jnp.max(v)))
    return e / jnp.sum(e)


DATA = jnp.array([-2.0, -1.0, 1.0, 2.0])


def em_phi(m):
    return jnp.exp(-((DATA - m) ** 2) / 2)


def em_q(mu):
    r = em_phi(mu[0]) / (em_phi(mu[0]) + em_phi(mu[1]))
    return jnp.sum(sg(r) * jnp.log(em_phi(mu[0])) + sg(1 - r) * jnp.log(em_phi(mu[1])))


def em_loglik(mu):
    return jnp.sum(jnp.log(em_phi(mu[0]) / 2 + em_phi(mu[1]) / 2))


W_RBM = jnp.array([[0.5, -0.3], [0.2, 0.4]])
V_DATA = jnp.array([1.0, 0.0])


def rbm_cd_loss(W, stop=sg):
    free_energy = lambda v: -jnp.sum(softplus(W.T @ v))
    negative = sigmoid(W @ sigmoid(W.T @ V_DATA))
    return free_energy(V_DATA) - free_energy(stop(negative))


def adversarial_loss(w, x, attack, stop=sg):
    loss = lambda u: softplus(-1.0 * jnp.dot(w, jnp.tanh(u)))
    g = grad(loss)(x)
    x_adv = x + 0.1 * jnp.sign(g) if attack == "sign" else x + 0.1 * g / jnp.linalg.norm(g)
    return loss(stop(x_adv))


W_ADV, X_ADV = jnp.array([1.0, 2.0]), jnp.array([1.0, -0.5])


def st_loss(w, a=3.0, t=4.0):
    u = w * a
    return (u + sg(jnp.round(u) - u) - t) ** 2


W_Q = jnp.array([[1.0, 0.5], [2.0, 1.5]])


def td_loss(W, stop=sg):
    s1, s2 = jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0])
    return 0.5 * (1.0 + 0.9 * stop(jnp.max(W @ s2)) - (W @ s1)[0]) ** 2


W_VQ, E_VQ, D_VQ = jnp.array([[1.0, 0.5], [1.0, 1.0]]), jnp.array([0.5, 3.0]), 2.0


def vq_loss(W, e):
    x = jnp.array([1.0, 2.0])
    z_e = W @ x
    z_q = z_e + sg(e - z_e)
    recon = jnp.sum((D_VQ * z_q - x) ** 2)
    codebook = jnp.sum((sg(z_e) - e) ** 2)
    commit = 0.25 * jnp.sum((z_e - sg(e)) ** 2)
    return recon + codebook + commit


W_SIAM, P_SIAM = jnp.array([[1.0, 0.0], [1.0, 2.0]]), jnp.array([[2.0, 1.0], [0.0, 1.0]])


def simsiam_loss(W, P, stop=sg):
    cos = lambda p, z: -jnp.dot(p, z) / (jnp.linalg.norm(p) * jnp.linalg.norm(z))
    z1, z2 = W @ jnp.array([1.0, 0.0]), W @ jnp.array([1.0, 1.0])
    return cos(P @ z1, stop(z2)) / 2 + cos(P @ z2, stop(z1)) / 2


THETA = jnp.array([0.3, -0.2, 0.5])
REWARD = jnp.array([1.0, 0.0, 2.0])


def reinforce_surrogate(theta, a=2, stop=sg):
    pi = jax.nn.softmax(theta)
    baseline = stop(jnp.dot(pi, REWARD))        # unstopped() removes this stop too
    return jnp.log(pi[a]) * stop(REWARD[a] - baseline)


def safe_sqrt_double_where(t):
    """The JAX idiom that avoids the NaN: a second where keeps sqrt away from 0."""
    return jnp.where(t > 0, jnp.sqrt(jnp.where(t > 0, t, 1.0)), 0.0)


identity = lambda e: e
W_SIZES = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # sizes.grad, at m = 2, n = 3
X_SIZES = np.array([0.3, -0.2, 0.9])


ROWS = [
    Row("tour", "diff(h(t), t) at t = 1.7", lambda: grad(lambda t: t * sg(t))(1.7)),
    Row("tour", "diff(f(t), t) at t = 1.0", lambda: grad(lambda t: t**2 * jnp.sin(t))(1.0)),
    Row("stable_softmax", "grad(log(stable_softmax(x)[0]), x) at x = [1.0, 3.0, 3.0]",
        lambda: grad(lambda v: jnp.log(stable_softmax(v)[0]))(jnp.array([1.0, 3.0, 3.0]))),
    Row("stable_softmax", "jacobian(stable_softmax(x), x) at x = [0.5, -1.0, 2.0]",
        lambda: jacobian(stable_softmax)(jnp.array([0.5, -1.0, 2.0]))),
    Row("em_gaussian_mixture", "grad(Q(mu1, mu2), [mu1, mu2]) at mu1 = -0.5, mu2 = 0.5",
        lambda: grad(em_q)(jnp.array([-0.5, 0.5]))),
    Row("em_gaussian_mixture", "grad(Q(mu1, mu2), [mu1, mu2]) at mu1 = -0.3, mu2 = 1.2",
        lambda: grad(em_loglik)(jnp.array([-0.3, 1.2]))),      # Fisher's identity
    Row("contrastive_divergence", "grad(cd_loss, W) at W = [[0.5, -0.3], [0.2, 0.4]]",
        lambda: grad(rbm_cd_loss)(W_RBM)),
    Row("contrastive_divergence", "grad(unstopped(cd_loss), W) at W = [[0.5, -0.3], [0.2, 0.4]]",
        lambda: grad(lambda W: rbm_cd_loss(W, identity))(W_RBM)),
    Row("adversarial_training", "grad(loss(sg(x_fgsm)), w) at w = [1.0, 2.0], x = [1.0, -0.5]",
        lambda: grad(adversarial_loss)(W_ADV, X_ADV, "sign")),
    Row("adversarial_training", "grad(loss(sg(x_norm)), w) at w = [1.0, 2.0], x = [1.0, -0.5]",
        lambda: grad(adversarial_loss)(W_ADV, X_ADV, "norm")),
    Row("adversarial_training", "grad(unstopped(loss(sg(x_norm))), w) at w = [1.0, 2.0], x = [1.0, -0.5]",
        lambda: grad(adversarial_loss)(W_ADV, X_ADV, "norm", identity)),
    Row("straight_through", "diff(loss(w), w) at w = 0.8, a = 3.0, t = 4.0", lambda: grad(st_loss)(0.8)),
    Row("straight_through", "diff(loss(w), w) at w = 0.55, a = 3.0, t = 4.0", lambda: grad(st_loss)(0.55)),
    Row("target_network", "grad(td, W) at W = [[1.0, 0.5], [2.0, 1.5]]", lambda: grad(td_loss)(W_Q)),
    Row("target_network", "grad(residual, W) at W = [[1.0, 0.5], [2.0, 1.5]]",
        lambda: grad(lambda W: td_loss(W, identity))(W_Q)),
    Row("vq_vae", "grad(L, W) at W = [[1.0, 0.5], [1.0, 1.0]], e = [0.5, 3.0], d = 2.0",
        lambda: grad(vq_loss, 0)(W_VQ, E_VQ)),
    Row("vq_vae", "grad(L, e) at W = [[1.0, 0.5], [1.0, 1.0]], e = [0.5, 3.0], d = 2.0",
        lambda: grad(vq_loss, 1)(W_VQ, E_VQ)),
    Row("siamese_stop", "grad(L, W) at W = [[1.0, 0.0], [1.0, 2.0]], P = [[2.0, 1.0], [0.0, 1.0]]",
        lambda: grad(simsiam_loss)(W_SIAM, P_SIAM)),
    Row("siamese_stop", "grad(L, P) at W = [[1.0, 0.0], [1.0, 2.0]], P = [[2.0, 1.0], [0.0, 1.0]]",
        lambda: grad(simsiam_loss, 1)(W_SIAM, P_SIAM)),
    Row("reinforce", "grad(surrogate(2), theta) at theta = [0.3, -0.2, 0.5]", lambda: grad(reinforce_surrogate)(THETA)),
    Row("reinforce", "grad(unstopped(surrogate(0)), theta) at theta = [0.3, -0.2, 0.5]",
        lambda: grad(lambda th: reinforce_surrogate(th, 0, identity))(THETA)),
    Row("pitfalls", "grad(max(x), x) at x = [1.0, 3.0, 3.0]", lambda: grad(jnp.max)(jnp.array([1.0, 3.0, 3.0]))),
    Row("pitfalls", "grad(max(max(x[0], x[1]), x[2]), x) at x = [2.0, 2.0, 2.0]",
        lambda: grad(lambda v: jnp.maximum(jnp.maximum(v[0], v[1]), v[2]))(jnp.array([2.0, 2.0, 2.0]))),
    Row("pitfalls", "diff(relu(t), t) at t = 0.0", lambda: grad(jax.nn.relu)(0.0)),
    Row("pitfalls", "diff(safe_sqrt(t), t) at t = 0.0", lambda: grad(safe_sqrt_double_where)(0.0)),
    Row("pitfalls", "diff(safe_sqrt(t), t) at t = 0.25", lambda: grad(safe_sqrt_double_where)(0.25)),
    Row("sizes", f"grad(sum((W @ x - y)^2), W) at W = {W_SIZES.tolist()}, x = {X_SIZES.tolist()}, y = [1.0, -2.0]",
        lambda: grad(lambda W: jnp.sum((W @ X_SIZES - jnp.array([1.0, -2.0])) ** 2))(W_SIZES)),
    Row("sizes", f"grad(-log(softmax(W @ x)[k]), W) at W = {W_SIZES.tolist()}, x = {X_SIZES.tolist()}, k = 1",
        lambda: grad(lambda W: -jnp.log(jax.nn.softmax(W @ X_SIZES)[1]))(W_SIZES)),
    Row("sizes", f"jacobian(softmax(x), x) at x = {X_SIZES.tolist()}", lambda: jacobian(jax.nn.softmax)(X_SIZES)),
]


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_key_gradient_agrees_with_jax(row):
    expected = np.asarray(row.oracle(), dtype=np.float64)
    np.testing.assert_allclose(gradlang_value(row), expected, rtol=1e-10, atol=1e-10)


def test_every_example_is_crosschecked():
    from example_support import NAMES

    assert set(NAMES) <= {row.example for row in ROWS}


def test_jax_naive_where_leaks_nan():
    """pitfalls.grad's claim: JAX's single where differentiates the branch not taken."""
    naive = grad(lambda t: jnp.where(t > 0, jnp.sqrt(t), 0.0))(0.0)
    assert np.isnan(naive)


def test_adversarial_linear_model_stop_does_not_matter():
    """adversarial_training.grad's closing remark (Danskin): linear score, normalised step."""
    def total(w, stop):
        loss = lambda u: softplus(-jnp.dot(w, u))
        g = grad(loss)(X_ADV)
        return loss(stop(X_ADV + 0.1 * g / jnp.linalg.norm(g)))

    np.testing.assert_allclose(grad(total)(W_ADV, identity), grad(total)(W_ADV, sg), atol=1e-12)
