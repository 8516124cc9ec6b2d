"""BYOL's regression loss in JAX (Grill et al. 2020): the target branch is stopped.

    gradlang --from-jax byol_jax:loss --example-args byol_jax:example --emit
"""

import jax
import jax.numpy as jnp
import numpy as np


def normalize(v):
    return v / jnp.sqrt(jnp.sum(v * v))


def loss(params, x):
    online = jnp.tanh(params["online"]["W"] @ x)
    prediction = params["predictor"]["W"] @ online
    target = jax.lax.stop_gradient(jnp.tanh(params["target"]["W"] @ x))
    return 2.0 - 2.0 * jnp.sum(normalize(prediction) * normalize(target))


def example():
    rng = np.random.default_rng(1)
    params = {
        "online": {"W": rng.normal(size=(2, 3))},
        "predictor": {"W": rng.normal(size=(2, 2))},
        "target": {"W": rng.normal(size=(2, 3))},
    }
    return params, rng.normal(size=3)


def batch_loss(W, P, T, X):
    """The same loss over a batch of rows, averaged: row-wise norms with keepdims, as BYOL's code writes them."""
    prediction = jnp.tanh(X @ W.T) @ P
    target = jax.lax.stop_gradient(jnp.tanh(X @ T.T))
    p = prediction / jnp.linalg.norm(prediction, axis=-1, keepdims=True)
    t = target / jnp.linalg.norm(target, axis=-1, keepdims=True)
    return jnp.mean(2 - 2 * jnp.sum(p * t, axis=-1))
