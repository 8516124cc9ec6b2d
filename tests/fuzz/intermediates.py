"""The largest number a JAX computation passes through, to size its float64 rounding.

The differential judge calls two answers "rounding" when they differ by less
than float64 can resolve. At a point near 1e300 that scale is the point's
square; at an ordinary point whose intermediates are large it is theirs:
`hessian(sum(softmax(W^T W v)), v)` with W up to 862 has logits near 7e5, its
exact answer is the zero matrix (a sum of softmax is 1), and float64 leaves
noise near eps * 7e5^2 = 1e-4 on both sides. The points do not show that
magnitude; the computation does, so it is read here from the jaxpr, every
equation evaluated once, nested jaxprs (jit, custom rules) entered.
"""

from __future__ import annotations

import jax
import numpy as np


def largest_intermediate(function, *args) -> float:
    """The largest finite magnitude of any value `function(*args)` computes, inputs and outputs included."""
    closed = jax.make_jaxpr(function)(*args)
    largest = [_largest(a) for a in args]
    _run(closed.jaxpr, closed.consts, list(args), largest)
    return max(largest)


def _run(jaxpr, consts, values, largest: list):
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, values))

    def read(var):
        return var.val if hasattr(var, "val") else env[var]  # a Literal carries its value

    for eqn in jaxpr.eqns:
        inputs = [read(v) for v in eqn.invars]
        inner = _inner(eqn.params)
        if inner is not None:
            outputs = _run(inner.jaxpr, inner.consts, inputs, largest)
        else:
            outputs = eqn.primitive.bind(*inputs, **eqn.params)
            outputs = outputs if eqn.primitive.multiple_results else [outputs]
        largest.extend(_largest(o) for o in outputs)
        env.update(zip(eqn.outvars, outputs))
    return [read(v) for v in jaxpr.outvars]


def _inner(params: dict):
    """The closed jaxpr a call-like equation (jit, custom_jvp_call) runs, when it has one whose inputs match."""
    for key in ("jaxpr", "call_jaxpr"):
        inner = params.get(key)
        if inner is not None and hasattr(inner, "jaxpr") and hasattr(inner, "consts"):
            return inner
    return None


def _largest(value) -> float:
    with np.errstate(all="ignore"):
        magnitudes = np.abs(np.asarray(value, dtype=np.float64))
    finite = magnitudes[np.isfinite(magnitudes)]
    return float(finite.max()) if finite.size else 0.0
