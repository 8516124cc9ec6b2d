"""A loss gradlang cannot translate: a cumulative sum (and a while_loop) have no gradlang spelling yet.

    gradlang --from-jax unsupported_jax:loss --shapes 'x=3'   # TranslateError at the cumsum's line
"""

import jax
import jax.numpy as jnp


def loss(x):
    y = jnp.tanh(x)
    running = jnp.cumsum(y)
    return jnp.sum(running)


def looped(x):
    return jax.lax.while_loop(lambda v: jnp.sum(v) < 10.0, lambda v: v * 2.0, x).sum()


def not_a_loss(x):
    return jnp.tanh(x)  # a vector: gradlang translates a function returning one scalar
