"""Custom derivative rules in JAX: a custom_vjp that clips the gradient, and a jax.checkpoint body.

    gradlang --from-jax custom_rules_jax:loss --shapes 'x=3' --emit
The program inlines both bodies; its header says that clip_gradient's custom rule
is replaced by the derivative of its primal (the identity), so the program's
gradient is primal_loss's, not jax.grad(loss)'s where the clip acts.
"""

import jax
import jax.numpy as jnp


@jax.custom_vjp
def clip_gradient(x):
    return x


def _forward(x):
    return x, None


def _backward(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_forward, _backward)


def loss(x):
    y = jax.checkpoint(lambda v: jnp.tanh(v) * 2.0)(x)
    return jnp.sum(clip_gradient(y) ** 2)


def primal_loss(x):
    return jnp.sum((jnp.tanh(x) * 2.0) ** 2)
