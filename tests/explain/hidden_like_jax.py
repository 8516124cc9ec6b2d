"""The programs of tests/explain/hidden_like/ written in JAX (float64, jax.lax.stop_gradient for each sg).

Each function takes the program's declared arrays by name and returns its loss; the test differentiates it
by the variable the program explains (twice for a hessian or a second derivative) and compares.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient


def _normalize(v):
    return v / jnp.linalg.norm(v)


def simsiam(x1, x2, W, P):
    z1, z2 = W @ x1, W @ x2
    return -jnp.dot(_normalize(P @ z1), _normalize(sg(z2)))


def barlow_twins(Z1, Z2):
    C = Z1.T @ sg(Z2) / Z1.shape[0]
    return jnp.sum((jnp.diag(C) - 1) ** 2) + 0.005 * (jnp.sum(C**2) - jnp.sum(jnp.diag(C) ** 2))


def vicreg(Z, Y):
    invariance = jnp.mean((Z - sg(Y)) ** 2)
    std = jnp.sqrt(jnp.mean((Z - jnp.mean(Z, axis=0)) ** 2, axis=0) + 0.0001)
    return 25 * invariance + 25 * jnp.mean(jax.nn.relu(1 - std))


def double_dqn(s, s2, W, T, r):
    best = jax.nn.one_hot(jnp.argmax(W @ s2), W.shape[0], dtype=jnp.float64)
    target = r + 0.99 * sg(jnp.dot(best, T @ s2))
    return ((W @ s)[0] - target) ** 2


def soft_q(s, s2, W, r):
    soft_value = 0.2 * jax.nn.logsumexp(W @ s2 / 0.2)
    return ((W @ s)[0] - (r + 0.99 * sg(soft_value))) ** 2 / 2


def hinge_discriminator(x, z, d, G):
    fake = sg(jnp.tanh(G @ z))
    return jax.nn.relu(1 - jnp.dot(d, x)) + jax.nn.relu(1 + jnp.dot(d, fake))


def focal(x, W):
    p = jax.nn.softmax(W @ x)
    return -sg((1 - p[0]) ** 2) * jnp.log(p[0])


def label_smoothing(x, W, T):
    y = sg(0.9 * jax.nn.one_hot(0, x.shape[0], dtype=jnp.float64) + 0.1 * jax.nn.softmax(T @ x))
    return -jnp.dot(y, jax.nn.log_softmax(W @ x))


def gumbel_st(x, g, c, W):
    y = jax.nn.softmax((W @ x + g) / 0.5)
    hard = jax.nn.one_hot(jnp.argmax(y), x.shape[0], dtype=jnp.float64)
    return jnp.dot(c, hard - sg(y) + y)


def gmm_estep(x, mu, logits):
    log_joint = jax.nn.log_softmax(logits) - (x - mu) ** 2 / 2
    return -jnp.dot(sg(jax.nn.softmax(log_joint)), log_joint)


def gae_actor_critic(s, s2, theta, v, r):
    logp = jnp.log(jax.nn.sigmoid(jnp.dot(theta, s)))
    advantage = sg(r + 0.9 * jnp.dot(v, s2) - jnp.dot(v, s))
    ret = sg(r + 0.9 * jnp.dot(v, s2))
    return -logp * advantage + (jnp.dot(v, s) - ret) ** 2 / 2


def dino(x, W, T, center):
    teacher = jax.nn.softmax((sg(T @ x) - sg(center)) / 0.04)
    return -jnp.dot(teacher, jax.nn.log_softmax(W @ x / 0.1))


def batch_norm(X, g):
    running = 0.9 * sg(jnp.mean(X, axis=0))
    mu = sg(jnp.mean(X, axis=0))
    var = sg(jnp.mean((X - mu) ** 2, axis=0))
    Y = g * (X - mu) / jnp.sqrt(var + 0.00001)
    return jnp.sum(jnp.tanh(Y) ** 2) + jnp.sum((running - 1) ** 2)


def group_norm(X, gamma):
    mu = sg(jnp.mean(X, axis=(2, 3), keepdims=True))
    var = sg(jnp.mean((X - mu) ** 2, axis=(2, 3), keepdims=True))
    Y = gamma * (X - mu) / jnp.sqrt(var + 0.00001)
    return jnp.sum(Y**2 * X)


def huber_td(s, s2, W, T, r):
    u = (W @ s)[1] - (r + 0.99 * sg(jnp.max(T @ s2)))
    return jnp.where(jnp.abs(u) <= 1, 0.5 * u**2, jnp.abs(u) - 0.5)


def feature_matching(x, z, G, F):
    return jnp.sum((F @ jnp.tanh(G @ z) - sg(F @ x)) ** 2)


def soft_actor(s, q, W):
    pi = jax.nn.softmax(W @ s)
    return jnp.dot(pi, 0.2 * jnp.log(pi) - sg(q))


def hessian_stop(x):
    return sg(jnp.sum(x**2)) * jnp.sum(x**3) / 6


def second_diff_stop(x):
    return x**3 * sg(jnp.exp(x))


# program: (the JAX loss, how many times it is differentiated)
LOSSES = {f.__name__: (f, 2 if f in (hessian_stop, second_diff_stop) else 1) for f in (
    simsiam, barlow_twins, vicreg, double_dqn, soft_q, hinge_discriminator, focal, label_smoothing, gumbel_st,
    gmm_estep, gae_actor_critic, dino, batch_norm, group_norm, huber_td, feature_matching, soft_actor,
    hessian_stop, second_diff_stop)}


def derivative(name: str, wrt: str, arrays: dict):
    """JAX's derivative of the program's loss by wrt at the arrays (its second for a hessian)."""
    loss, order = LOSSES[name]

    def by(value):
        return loss(**{**arrays, wrt: value})

    first = jax.grad(by)
    return jax.hessian(by)(arrays[wrt]) if order == 2 and jnp.ndim(arrays[wrt]) else (
        jax.grad(first)(arrays[wrt]) if order == 2 else first(arrays[wrt]))
