"""`grad(L, [W1, b1, …]) at …` at a float point is one NumPy function (issue #41).

Each entry of the list used to be evaluated by its own compiled function,
so a 3-layer MLP's forward pass was computed six times, once per parameter's
gradient, and six functions were generated; now the entries share one, as one
reverse pass does. The numbers are JAX's in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.expr import numeric

MLP3 = """n: size
W1, W2: R^(n,n)
b1, b2, x, t: R^n
h1 = tanh(W1 @ x + b1)
h2 = tanh(W2 @ h1 + b2)
L = 0.5 * sum((h2 - t)^2)
g = grad(L, [W1, b1, W2, b2])
"""
NAMES = ("W1", "b1", "W2", "b2", "x", "t")


def _point(n: int) -> dict:
    rng = np.random.default_rng(n)
    return {name: rng.normal(size=(n, n) if name.startswith("W") else n) / (np.sqrt(n) if name.startswith("W") else 1)
            for name in NAMES}


def _session(point: dict) -> Session:
    session = Session()
    session.run(MLP3)
    for name, array in point.items():
        session.bind(f"{name}d", array)
    return session


AT = "g at " + ", ".join(f"{k} = {k}d" for k in NAMES)


def test_the_entries_of_a_list_are_one_compiled_function(monkeypatch):
    compiled = []
    original = numeric.compile_function

    def counting(exprs, symbols):
        compiled.append(len(exprs))
        return original(exprs, symbols)

    monkeypatch.setattr(numeric, "compile_function", counting)
    _session(_point(5)).eval(AT)
    assert compiled == [4]  # one function of the four gradients, not four functions


@pytest.mark.parametrize("n", [3, 64])
def test_the_entries_are_jaxs_numbers(n):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    point = _point(n)
    value = _session(point).eval(AT)

    def loss(p):
        W1, b1, W2, b2 = p
        h2 = jnp.tanh(W2 @ jnp.tanh(W1 @ point["x"] + b1) + b2)
        return 0.5 * jnp.sum((h2 - point["t"]) ** 2)

    expected = jax.grad(loss)([jnp.asarray(point[k]) for k in ("W1", "b1", "W2", "b2")])
    for got, want in zip(value, expected):
        assert np.asarray(got, dtype=float) == pytest.approx(np.asarray(want), rel=1e-12, abs=1e-14)
