"""Patterns of published JAX training losses, transcribed small (docs/from-frameworks.md): TD3's clipped double
Q with jnp.minimum, a cast to float32 (Acme's DQN), PRNG keys and random draws in the loss."""

import jax
import jax.numpy as jnp


def clipped_double_q(params, obs, rewards):
    q1 = obs @ params["q1"]
    q2 = obs @ params["q2"]
    target = jax.lax.stop_gradient(rewards + 0.99 * jnp.minimum(q1, q2))
    return jnp.mean((q1 - target) ** 2) + jnp.mean(jnp.maximum(q1, 0.5 * q2))


def tied():
    return {"a": jnp.array([1.0, -2.0, 3.0]), "b": jnp.array([1.0, -2.0, 0.5])}


def extremes(a, b):
    return jnp.sum(jnp.minimum(a, b)) + 2.0 * jnp.sum(jnp.maximum(a, b))


def cast_td(q, target, discount):
    """Acme's DQN casts its discounts and rewards to float32 before the TD error."""
    d_t = (discount * 0.99).astype(jnp.float32)
    td = target.astype(jnp.float32) * d_t - q
    return jnp.mean(td ** 2) + jnp.sum(q.astype(jnp.float32) * 3.0)


def unused_split(x):
    key = jax.random.PRNGKey(0)
    key, subkey = jax.random.split(key)
    return jnp.sum(x ** 2)


def drawn(x, key):
    """Noise and Gumbel draws in the loss, from a key argument (a typed key)."""
    k1, k2 = jax.random.split(key)
    noise = jax.random.normal(k1, x.shape)
    gumbel = jax.random.gumbel(k2, x.shape)
    return jnp.sum(jnp.tanh(x + 0.1 * noise) * gumbel)


def keyed():
    return (jnp.array([0.3, -0.2, 0.9]), jax.random.key(7))


def _network(params, x):
    logits = x @ params
    probabilities = jax.nn.softmax(logits)
    baseline = jax.lax.stop_gradient(jnp.mean(logits))
    return logits, probabilities, baseline


def unread_outputs(params, x):
    """A network that returns more than the loss reads (Dopamine's C51 returns q-values and probabilities beside
    the logits): the probabilities' softmax and the stopped baseline are no part of the loss."""
    logits, _, _ = _network(params, x)
    return -jax.nn.log_softmax(logits)[0]


def joined(x):
    """rlax's V-trace bootstrap joins a vector's last entry (`v[-1:]`) to a vector; a scalar and a number too."""
    z = jnp.tanh(x)
    y = jnp.concatenate([0.5 * z[:-1], z[-1:], jnp.sum(z)[None], jnp.array([1.5])])
    return jnp.sum(y * y)


def scanned(v, r):
    """A reverse scan over rows of a formula (rlax's V-trace over its td_errors): each step reads one row."""
    td = jnp.tanh(v) * r

    def step(acc, x):
        acc = x + 0.9 * acc
        return acc, acc

    _, out = jax.lax.scan(step, 0.0, td, reverse=True)
    return jnp.sum(out ** 2)
