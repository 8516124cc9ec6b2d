'''The fixed head of each exported module: imports and the convention helpers.

Each helper implements one rule of the language reference (docs/language.md), section 5 with the target's
own primitives, chosen so that the framework's gradient equals gradlang's:

- `_max` / `_min` reduce over all arguments at once with the framework's
  reduction (jnp.max, torch.amax, tf.reduce_max), whose gradient shares a tie
  equally; the pairwise jnp.maximum / torch.maximum / tf.maximum do not.
- `_abs` has derivative sign(u), 0 at 0 (JAX's jnp.abs gives 1 there).
- `_relu`, `_round`, `_where` and the shares use the framework's primitive,
  which already agrees with gradlang (checked in tests/tools/test_export.py).
'''

from __future__ import annotations

_COMMON_NOTE = "# Helpers implementing gradlang's derivative conventions (the language reference (docs/language.md), section 5).\n"

NUMPY = '''import numpy as np


def _stop_gradient(u):
    """NumPy computes values only: stop_gradient is the identity."""
    return u


def _max(*args):
    return np.max(np.stack(np.broadcast_arrays(*args)), axis=0)


def _min(*args):
    return np.min(np.stack(np.broadcast_arrays(*args)), axis=0)


def _share(pick, k, args):
    stacked = np.stack(np.broadcast_arrays(*args)).astype(float)
    tied = stacked == pick(stacked, axis=0)
    return np.where(tied[k], 1.0 / np.maximum(tied.sum(axis=0), 1), 0.0)


def _max_share(k, *args):
    return _share(np.max, k, args)


def _min_share(k, *args):
    return _share(np.min, k, args)


def _abs(u):
    return np.abs(u)


def _relu(u):
    return np.maximum(u, 0.0)


def _round(u):
    return np.round(u)  # halves to even


def _where(c, a, b):
    return np.where(c, a, b)


def _stack(*items):
    return np.stack(np.broadcast_arrays(*[np.asarray(i, dtype=float) for i in items]))
'''

JAX = '''import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)  # gradlang computes in float64


def _stop_gradient(u):
    return jax.lax.stop_gradient(u)


def _max(*args):
    """One reduction over all arguments: tied arguments share the gradient equally (jnp.max does)."""
    return jnp.max(jnp.stack(jnp.broadcast_arrays(*args)), axis=0)


def _min(*args):
    return jnp.min(jnp.stack(jnp.broadcast_arrays(*args)), axis=0)


def _share(pick, k, args):
    stacked = jnp.stack(jnp.broadcast_arrays(*args))
    tied = stacked == pick(stacked, axis=0)
    return jax.lax.stop_gradient(jnp.where(tied[k], 1.0 / jnp.maximum(tied.sum(axis=0), 1), 0.0))


def _max_share(k, *args):
    return _share(jnp.max, k, args)


def _min_share(k, *args):
    return _share(jnp.min, k, args)


def _abs(u):
    """|u| with derivative sign(u), 0 at 0 (jnp.abs has derivative 1 at 0)."""
    return u * jax.lax.stop_gradient(jnp.sign(u))


def _relu(u):
    return jax.nn.relu(u)  # derivative 0 at 0


def _round(u):
    return jnp.round(u)  # halves to even, derivative 0


def _where(c, a, b):
    return jnp.where(c, a, b)


def _stack(*items):
    return jnp.stack(jnp.broadcast_arrays(*items))
'''

TORCH = '''import torch


def _t(u):
    return torch.as_tensor(u, dtype=torch.float64)


def _stop_gradient(u):
    return _t(u).detach()


def _max(*args):
    """One reduction over all arguments: torch.amax shares a tie equally (torch.maximum does not)."""
    return torch.amax(torch.stack(torch.broadcast_tensors(*[_t(a) for a in args])), dim=0)


def _min(*args):
    return torch.amin(torch.stack(torch.broadcast_tensors(*[_t(a) for a in args])), dim=0)


def _share(pick, k, args):
    stacked = torch.stack(torch.broadcast_tensors(*[_t(a).detach() for a in args]))
    tied = (stacked == pick(stacked, dim=0)).to(torch.float64)
    return torch.where(tied[k] > 0, 1.0 / torch.clamp(tied.sum(dim=0), min=1.0), torch.zeros_like(tied[k]))


def _max_share(k, *args):
    return _share(torch.amax, k, args)


def _min_share(k, *args):
    return _share(torch.amin, k, args)


def _abs(u):
    return torch.abs(_t(u))  # derivative sgn(u): 0 at 0


def _relu(u):
    return torch.relu(_t(u))  # derivative 0 at 0


def _round(u):
    return torch.round(_t(u))  # halves to even, derivative 0


def _where(c, a, b):
    return torch.where(c, _t(a), _t(b))


def _stack(*items):
    return torch.stack(torch.broadcast_tensors(*[_t(i) for i in items]))


def _grad(function, *args):
    """The gradient of a scalar function with respect to each argument (zeros where unused)."""
    args = [_t(a).detach().requires_grad_(True) for a in args]
    grads = torch.autograd.grad(function(*args), args, allow_unused=True)
    grads = [torch.zeros_like(a) if g is None else g for a, g in zip(args, grads)]
    return grads[0] if len(grads) == 1 else tuple(grads)
'''

TF = '''import functools

import tensorflow as tf


def _t(u):
    return tf.cast(u, tf.float64)


def _stop_gradient(u):
    return tf.stop_gradient(u)


def _stacked(args):
    args = [_t(a) for a in args]
    shape = functools.reduce(tf.broadcast_dynamic_shape, [tf.shape(a) for a in args])
    return tf.stack([tf.broadcast_to(a, shape) for a in args])


def _max(*args):
    """One reduction over all arguments: tf.reduce_max shares a tie equally (tf.maximum gives it to a)."""
    return tf.reduce_max(_stacked(args), axis=0)


def _min(*args):
    return tf.reduce_min(_stacked(args), axis=0)


def _share(pick, k, args):
    stacked = tf.stop_gradient(_stacked(args))
    tied = tf.cast(tf.equal(stacked, pick(stacked, axis=0)), tf.float64)
    return tf.where(tied[k] > 0, 1.0 / tf.maximum(tf.reduce_sum(tied, axis=0), 1.0), tf.zeros_like(tied[k]))


def _max_share(k, *args):
    return _share(tf.reduce_max, k, args)


def _min_share(k, *args):
    return _share(tf.reduce_min, k, args)


def _abs(u):
    return tf.abs(_t(u))  # derivative sign(u): 0 at 0


def _relu(u):
    return tf.nn.relu(_t(u))  # derivative 0 at 0


def _round(u):
    return tf.round(_t(u))  # halves to even, derivative 0


def _where(c, a, b):
    return tf.where(c, _t(a), _t(b))


def _stack(*items):
    return _stacked(items)


def _grad(function, *args):
    """The gradient of a scalar function with respect to each argument (zeros where unused)."""
    args = [tf.Variable(_t(a)) for a in args]
    with tf.GradientTape() as tape:
        value = function(*args)
    grads = tape.gradient(value, args, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return grads[0] if len(grads) == 1 else tuple(grads)
'''

PRELUDES = {"numpy": NUMPY, "jax": JAX, "torch": TORCH, "tf": TF}
