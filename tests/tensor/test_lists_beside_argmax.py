"""A list of scalars beside a tensor of literal size is a constant of the formula, as beside a symbolic size
(found by the rank-3 fuzzer, seeds 6097 and 6100): lowering it to components would lower argmax too, which has
no components before numbers, and whose axis form the component path does not take."""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

M0 = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.5]])
V0 = np.array([0.7, -0.2, 1.5])
A0 = 0.35


def _gradients(declared: str, source: str):
    session = Session()
    session.bind("M0", M0)
    session.bind("v0", V0)
    session.run(f"{declared}\nL = {source}")
    at = f" at M = M0, v = v0, a = {A0!r}"
    return [np.asarray(session.eval(f"{s}{at}"), dtype=float) for s in ("L", "grad(L, M)", "grad(L, v)", "grad(L, a)")]


def _jax(loss):
    return [loss(M0, V0, A0), *jax.grad(loss, (0, 1, 2))(M0, V0, A0)]


SIZES = ("M: R^(t,d)\nv: R^d\na: R", "t = 2\nd = 3\nM: R^(2,3)\nv: R^3\na: R")


@pytest.mark.parametrize("declared", SIZES)
def test_a_broadcast_scalar_beside_a_gather_at_argmax(declared):
    """Seed 6097: at literal sizes the definition raised "argmax needs numbers"."""
    got = _gradients(declared, "max(M @ take(M, argmax(M, axis=0), 0) + broadcast_to(a, (t, d)))")
    want = _jax(lambda M, v, a: jnp.max(M @ jnp.take(M, jnp.argmax(M, 0), 0) + jnp.broadcast_to(a, M.shape)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("declared", SIZES)
def test_argmax_along_an_axis_of_a_tensor_plus_a_list_of_scalars(declared):
    """Seed 6100: at literal sizes `argmax(M + broadcast_to(a, …), axis=-1)` was "argmax takes 1 argument"."""
    got = _gradients(declared, "sum(take(v, argmax(M + broadcast_to(a, (t, d)), axis=-1), 0)) * a + sum(M * a)")
    want = _jax(lambda M, v, a: jnp.sum(jnp.take(v, jnp.argmax(M + a, -1), 0)) * a + jnp.sum(M * a))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_a_list_of_scalars_beside_a_literal_size_prints_as_at_a_symbolic_size():
    """`transpose(W) @ [a, b*a]` is one formula whether W is R^(2,3) or R^(2,n) (section 3b: the same formula)."""
    printed = []
    for declared in ("W: R^(2,n)", "W: R^(2,3)"):
        session = Session()
        session.run(f"{declared}\na: R\nb: R\nL = sum(tanh(transpose(W) @ [a, b*a]))")
        printed.append(str(session.eval("grad(L, a)")))
    assert printed[0] == printed[1]
