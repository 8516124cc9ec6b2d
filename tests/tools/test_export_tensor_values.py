"""--export of a binding whose value is a tensor formula reads that value, at literal and symbolic sizes.

The session evaluated `g = grad(loss, W1)` once, into a tensor formula; the
export takes its parameters from that formula (its declared tensors) and
prints it as array operations, so an MLP's gradient exports at x: R^48 and
at x: R^n alike, without taking 48 x 48 components. Each module is run and
compared with JAX in float64 (and with gradlang's own numbers at the point).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.errors import GradlangError
from gradlang.export import TARGETS, export_program
from tests.tools.test_export import load
from tests.tools.test_export_examples import framework, to_framework, to_numpy

MLP = """x: R^{n}
W1: R^({n},{n})
b1: R^{n}
W2: R^(1,{n})
loss = sum((W2 @ tanh(W1 @ x + b1))^2)
g = grad(loss, W1)
"""


def _point(size: int) -> dict:
    rng = np.random.default_rng(7)
    return {"x": rng.normal(size=size), "W1": rng.normal(size=(size, size)) / size, "b1": rng.normal(size=size),
            "W2": rng.normal(size=(1, size))}


def _jax(point: dict) -> tuple:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss(x, W1, b1, W2):
        return jnp.sum((W2 @ jnp.tanh(W1 @ x + b1)) ** 2)

    args = [jnp.asarray(point[k], dtype=jnp.float64) for k in ("x", "W1", "b1", "W2")]
    return float(loss(*args)), np.asarray(jax.grad(loss, argnums=1)(*args))


def _module(program: str, target: str, tmp_path, name: str):
    session = Session()
    session.run(program)
    return load(export_program(session, target, program), tmp_path, name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("declared", ["48", "n"])
def test_mlp_gradient_round_trips(declared, target, tmp_path):
    framework(target)
    module = _module(MLP.format(n=declared), target, tmp_path, f"mlp_{target}_{declared}")
    for size in (48, 5):  # a function of the formula takes any length where the program leaves it open
        point = _point(size)
        args = [to_framework(target, point[k]) for k in ("x", "W1", "b1", "W2")]
        want_loss, want_grad = _jax(point)
        assert np.allclose(to_numpy(module.loss(*args)), want_loss, rtol=1e-12, atol=1e-12)
        assert np.allclose(to_numpy(module.g(*args)), want_grad, rtol=1e-12, atol=1e-12)


def test_exported_gradient_has_gradlangs_numbers(tmp_path):
    point = _point(4)
    program = MLP.format(n=4)
    module = _module(program, "numpy", tmp_path, "mlp_numbers")
    session = Session()
    session.run(program)
    given = ", ".join(f"{k} = {np.asarray(v).tolist()}" for k, v in point.items())
    want = np.asarray(session.eval(f"g at {given}"), dtype=float)
    assert np.allclose(module.g(*(point[k] for k in ("x", "W1", "b1", "W2"))), want, rtol=1e-12, atol=1e-12)


def test_a_refusal_at_a_symbolic_size_speaks_gradlang(tmp_path):
    """What the export cannot write at a symbolic size is refused in gradlang's words, no SymPy class name."""
    program = "x: R^n\nh = diff(sum(x) * a^2, a)\n"  # diff is not read as array operations (vectorised.py)
    session = Session()
    session.run(program)
    with pytest.raises(GradlangError) as caught:
        export_program(session, "numpy", program)
    message = str(caught.value)
    assert "cannot export h: 2*a*sum(x) has the symbolic size n" in message
    for name in ("Total", "Var", "TensorOp", "Mul", "Symbol"):
        assert name not in message
