"""The VQ-VAE quantiser with the straight-through estimator (van den Oord et al. 2017), in JAX.

    gradlang --from-jax vqvae_jax:loss --shapes 'z=3 codebook=4,3' --emit
"""

import jax
import jax.numpy as jnp

BETA = 0.25


def loss(z, codebook):
    distances = jnp.sum((codebook - z) ** 2, axis=1)
    k = jnp.argmin(distances)
    e = jax.nn.one_hot(k, codebook.shape[0]) @ codebook
    quantised = z + jax.lax.stop_gradient(e - z)  # straight through: the decoder's gradient goes to z
    codebook_loss = jnp.sum((jax.lax.stop_gradient(z) - e) ** 2)
    commitment = jnp.sum((z - jax.lax.stop_gradient(e)) ** 2)
    reconstruction = jnp.sum(jnp.tanh(quantised) ** 2)
    return reconstruction + codebook_loss + BETA * commitment
