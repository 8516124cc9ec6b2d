"""Hand-written NumPy gradients and JAX forward functions for the benchmark families.

`numpy_gradient(family)` returns f(variable_values, data_values) -> list of
gradient arrays in the order of family.variables; `jax_function(family)` the
forward function of (variables vector, data vector) for jax.grad.
"""

from __future__ import annotations

import numpy as np


def _mlp_shapes(family):
    names = [str(v) for v in family.variables]
    layers = len({n.split("_")[0] for n in names if n.startswith("W")})
    inputs = len(family.data) - 1
    hidden = sum(1 for n in names if n.startswith("v["))
    return layers, inputs, hidden


def _mlp_unpack(p, layers, inputs, hidden, xp=np):
    weights, at, width = [], 0, inputs
    for _ in range(layers):
        W = p[at:at + hidden * width].reshape(hidden, width)
        b = p[at + hidden * width: at + hidden * width + hidden]
        weights.append((W, b))
        at += hidden * width + hidden
        width = hidden
    return weights, p[at:at + hidden], p[at + hidden]


def numpy_gradient(family):
    name = family.name
    if name == "nested sin":
        def gradient(values, data):
            a, inputs = values[0], []
            for _ in range(family.size):
                inputs.append(a)
                a = np.sin(a)
            g = np.ones_like(values[0])
            for u in reversed(inputs):
                g = g * np.cos(u)
            return [g]
        return gradient
    if name.startswith("prod"):
        def gradient(values, data):
            X = np.asarray(values)
            s = np.sin(X)
            prefix = np.cumprod(np.vstack([np.ones_like(s[:1]), s[:-1]]), axis=0)
            suffix = np.cumprod(np.vstack([np.ones_like(s[:1]), s[:0:-1]]), axis=0)[::-1]
            return prefix * suffix * np.cos(X)
        return gradient
    if name.startswith("softmax"):
        def gradient(values, data):
            Z = np.asarray(values)
            e = np.exp(Z - Z.max(axis=0))
            p = e / e.sum(axis=0)
            p[0] -= 1.0
            return p
        return gradient
    if name == "iterated map":
        def gradient(values, data):
            x, y = values
            a, seen = x, []
            for _ in range(family.size):
                seen.append(a)
                a = a * a + a * y
            ga, gy = np.ones_like(x), np.zeros_like(x)
            for a in reversed(seen):
                gy = gy + ga * a
                ga = ga * (2 * a + y)
            return [ga, gy]
        return gradient
    return _mlp_gradient(family)


def _mlp_gradient(family):
    layers, inputs, hidden = _mlp_shapes(family)

    def gradient(values, data):
        weights, v, c = _mlp_unpack(np.asarray(values, dtype=float), layers, inputs, hidden)
        x, t = np.stack(data[:-1], axis=1), data[-1]
        acts = [x]
        for W, b in weights:
            acts.append(np.tanh(acts[-1] @ W.T + b))
        r = 2 * (acts[-1] @ v + c - t)
        grads = [r[:, None] * acts[-1], r]
        dh = r[:, None] * v
        for (W, b), a_in, a_out in zip(reversed(weights), reversed(acts[:-1]), reversed(acts[1:])):
            dz = dh * (1 - a_out * a_out)
            grads = [(dz[:, :, None] * a_in[:, None, :]).reshape(len(t), -1), dz] + grads
            dh = dz @ W
        return grads
    return gradient


def jax_function(family):
    import jax.numpy as jnp

    name = family.name
    if name == "nested sin":
        def f(p, d):
            a = p[0]
            for _ in range(family.size):
                a = jnp.sin(a)
            return a
    elif name.startswith("prod"):
        def f(p, d):
            return jnp.prod(jnp.sin(p))
    elif name.startswith("softmax"):
        def f(p, d):
            import jax
            shifted = p - jax.lax.stop_gradient(jnp.max(p))
            return -(shifted[0] - jnp.log(jnp.sum(jnp.exp(shifted))))
    elif name == "iterated map":
        def f(p, d):
            a, y = p[0], p[1]
            for _ in range(family.size):
                a = a * a + a * y
            return a
    else:
        layers, inputs, hidden = _mlp_shapes(family)

        def f(p, d):
            weights, v, c = _mlp_unpack(p, layers, inputs, hidden)
            a = d[:-1]
            for W, b in weights:
                a = jnp.tanh(W @ a + b)
            return (a @ v + c - d[-1]) ** 2
    return f
