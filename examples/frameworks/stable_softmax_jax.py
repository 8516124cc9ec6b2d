"""A softmax cross-entropy in JAX: jax.nn.log_softmax (which stops the maximum inside its own jit).

    gradlang --from-jax stable_softmax_jax:loss --shapes 'W=3,4 x=4' --emit
"""

import jax
import jax.numpy as jnp

LABEL = 2


def loss(W, x):
    logits = W @ x
    return -jax.nn.log_softmax(logits)[LABEL]


def by_hand(W, x):
    """The same loss written out, with the stop where the tf.stop_gradient docs put it."""
    z = W @ x
    shifted = z - jax.lax.stop_gradient(jnp.max(z))
    return jnp.log(jnp.sum(jnp.exp(shifted))) - shifted[LABEL]


@jax.jit
def _shifted(z):
    return z - jax.lax.stop_gradient(jnp.max(z))


@jax.jit
def _cross_entropy(z):
    shifted = _shifted(z)
    return jnp.log(jnp.sum(jnp.exp(shifted))) - shifted[LABEL]


def nested(W, x):
    """The stop inside two jits of the user's own: make_jaxpr keeps it, and so does the program."""
    return _cross_entropy(W @ x) + jnp.sum(jax.nn.relu(x))


def batch_cross_entropy(W, b, X, Y):
    """Soft labels Y over a batch: log_softmax along the last axis, averaged over the rows."""
    logits = X @ W + b
    return -jnp.mean(jnp.sum(Y * jax.nn.log_softmax(logits, axis=-1), axis=-1))
