"""--export of einsum, reshape and take (section 3b): each framework's own einsum, reshape and gather.

The program is exported for every target at symbolic and at literal sizes;
its bindings must give gradlang's numbers and JAX's (jax.grad in float64),
and the framework's own gradient of the exported loss must be gradlang's.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.tools.test_export_examples import framework, to_framework
from tests.tools.test_export_formula_frameworks import _at, _close, _framework_gradients_agree, _module, _parameters

PROGRAM = """A: R^({m},{n})
x: R^{n}
y = einsum("ij,j->i", A, x)
loss = sum(tanh(y)^2) + sum(take(reshape(A, ({m}*{n},)), [0, 2, 1, 0], 0)^3) + einsum("ij,ij->", A, A)
gA = grad(loss, A)
gx = grad(loss, x)
"""
ORDER = ("A", "x")
SIZES = ({"m": 2, "n": 3}, {"m": 3, "n": 2})


def _reference(point: dict) -> dict:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss(A, x):
        taken = jnp.take(A.reshape(-1), jnp.array([0, 2, 1, 0]), 0)
        return jnp.sum(jnp.tanh(A @ x) ** 2) + jnp.sum(taken ** 3) + jnp.sum(A * A)

    gA, gx = jax.grad(loss, argnums=(0, 1))(point["A"], point["x"])
    return {"y": point["A"] @ point["x"], "loss": loss(point["A"], point["x"]), "gA": gA, "gx": gx}


@pytest.mark.parametrize("symbolic", [True, False], ids=["symbolic", "literal"])
@pytest.mark.parametrize("target", ["numpy", "jax", "torch", "tf"])
def test_einsum_reshape_and_take_export_in_each_framework(target, symbolic, tmp_path):
    framework(target)
    rng = np.random.default_rng(3)
    for k, sizes in enumerate(SIZES):
        written = PROGRAM.format(**({"m": "m", "n": "n"} if symbolic else sizes))
        module, session = _module(written, target, tmp_path, f"products_{target}_{symbolic}_{k}")
        point = {"A": rng.normal(size=(sizes["m"], sizes["n"])), "x": rng.normal(size=sizes["n"])}
        args = [to_framework(target, point[name]) for name in ORDER]
        want = {name: np.asarray(value) for name, value in _reference(point).items()}
        for binding, value in want.items():
            got = getattr(module, binding)(*[a for name, a in zip(ORDER, args) if name in _parameters(session, binding)])
            assert _close(got, value), (binding, sizes)
            assert _close(got, _at(session, binding, point)), (binding, sizes)
        if target != "numpy":
            _framework_gradients_agree(module, session, "loss", {"A": "gA", "x": "gx"}, ORDER, args, want)


ATTENTION = """Q: R^(b,t,d)
K: R^(b,t,d)
V: R^(b,t,d)
A = softmax(Q @ transpose(sg(K), (0, 2, 1)) / sqrt(d), -1) @ V
L = sum(A^2)
g = grad(L, Q)
"""


@pytest.mark.parametrize("target", ["numpy", "jax", "torch", "tf"])
def test_batched_attention_exports_with_each_frameworks_einsum(target, tmp_path):
    """The rank-3 attention of section 3b, its stopped key kept: the exported gradient is jax.grad's."""
    framework(target)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    module, session = _module(ATTENTION, target, tmp_path, f"attention_{target}")
    rng = np.random.default_rng(4)
    point = {name: rng.normal(size=(2, 3, 4)) for name in ("Q", "K", "V")}

    def loss(Q, K, V):
        A = jax.nn.softmax(Q @ jnp.transpose(jax.lax.stop_gradient(K), (0, 2, 1)) / jnp.sqrt(4.0), -1) @ V
        return jnp.sum(A ** 2)

    want = {"L": loss(*point.values()), "g": jax.grad(loss)(*point.values())}
    args = [to_framework(target, array) for array in point.values()]
    for binding, value in want.items():
        assert _close(getattr(module, binding)(*args), np.asarray(value)), binding
    if target != "numpy":
        _framework_gradients_agree(module, session, "L", {"Q": "g"}, ORDER_QKV, args, {"g": np.asarray(want["g"])})


ORDER_QKV = ("Q", "K", "V")


@pytest.mark.parametrize("target", ["numpy", "jax", "torch", "tf"])
def test_the_square_root_of_a_size_exports_as_a_number(target, tmp_path):
    """sqrt(d) of a size read from a shape is a Python int's square root: torch.sqrt(4) and tf.sqrt(4) refuse an
    int (attention's 1/√d was a TypeError in the exported torch and tf modules)."""
    framework(target)
    module, _ = _module("x: R^n\ny = sum(x) / sqrt(n)\n", target, tmp_path, f"sqrt_size_{target}")
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert _close(module.y(to_framework(target, x)), np.sum(x) / 2.0)
