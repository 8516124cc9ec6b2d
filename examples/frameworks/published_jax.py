"""Published JAX losses as their authors write them, transcribed small (docs/from-frameworks.md, issue #39): an
rlax-style TD(lambda) return computed by lax.scan with a stopped bootstrap, the same return by a Python loop, a
batch-normalised projector by jax.nn.standardize, a hard Gumbel code by one_hot(argmax)."""

import jax
import jax.numpy as jnp


def lambda_returns(r_t, discount_t, v_t, lambda_=0.9):
    """G_t = r_t + discount_t ((1 - lambda) v_t + lambda G_{t+1}), scanned backwards from the last value."""

    def step(g, inputs):
        r, discount, v = inputs
        g = r + discount * ((1.0 - lambda_) * v + lambda_ * g)
        return g, g

    _, returns = jax.lax.scan(step, v_t[-1], (r_t, discount_t, v_t), reverse=True)
    return returns


def td_lambda(params, obs, r_t, discount_t):
    """The critic's TD(lambda) loss: values of obs[0..T], targets from obs[1..T] with the bootstrap stopped."""
    v = jnp.tanh(obs @ params["w1"]) @ params["w2"]
    v_tm1, v_t = v[:-1], jax.lax.stop_gradient(v[1:])
    target = lambda_returns(r_t, discount_t, v_t)
    return 0.5 * jnp.mean((target - v_tm1) ** 2)


def n_step(params, obs, r_t, discount_t):
    """The same kind of target by a Python loop over the steps (unrolled by the trace)."""
    v = obs @ params["w"]
    g = jax.lax.stop_gradient(v[-1])
    for t in reversed(range(r_t.shape[0])):
        g = r_t[t] + discount_t[t] * g
    return (g - v[0]) ** 2


def scanned_sum(params, xs):
    """A scan carrying a matrix (no translation of a carry over several axes): refused at the scan's line."""
    total, _ = jax.lax.scan(lambda c, x: (c + jnp.outer(x, x) @ params["w"], None), params["w"] * 0.0, xs)
    return jnp.sum(total)


def projector(params, x1, x2):
    """BYOL's projector with batch statistics (jax.nn.standardize over the batch) and a layer norm; target stopped."""

    def branch(p, x):
        h = jax.nn.standardize(x @ p["w1"], axis=0, epsilon=1e-5) * p["scale"] + p["bias"]
        h = jax.nn.relu(h) @ p["w2"]
        mean = jnp.mean(h, axis=-1, keepdims=True)
        return (h - mean) / jnp.sqrt(jnp.var(h, axis=-1, keepdims=True) + 1e-6)

    online = branch(params["online"], x1)
    target = jax.lax.stop_gradient(branch(params["target"], x2))
    return jnp.mean(jnp.sum((online - target) ** 2, axis=-1))


def gumbel_hard(params, x, noise):
    """A hard Gumbel code, straight through: one_hot(argmax(y)) + y - stop_gradient(y)."""
    y = jax.nn.softmax((x @ params["w"] + noise) / 0.7, axis=-1)
    hard = jax.nn.one_hot(jnp.argmax(y, axis=-1), y.shape[-1])
    code = hard + y - jax.lax.stop_gradient(y)
    return jnp.sum((code @ params["codebook"]) ** 2)
