"""A traced softmax's bookkeeping in a derivation (#39, DreamerV3's KL balancing): the keepdims reshapes and
broadcasts JAX writes around every max and sum are not steps a reader takes.

- a reshape of an expand_dims (or a squeeze) is one reshape: the adjoint of broadcast_to(reshape(m, (2, 1)),
  (2, 3)) is sum(ȳ, axis=1), not reshape(expand_dims(sum(ȳ, axis=1), 1), (2,));
- a reshape's own line is not shown: its argument's line says the rule of the operation above the reshape;
- a compact ledger calls a stop the program bound by the program's name, with no let line of its own;
- a pass line whose rule does not fit beside it carries the rule's name (its formula is JSON's and the
  other lines').
"""

from __future__ import annotations

import re

import numpy as np
import sympy as sp

from gradlang import Session
from gradlang.render.plain import to_plain

KEEPDIMS = """z: R^(2,3)
w: R^3
h = z * outer(ones(2), w)
m = stop_gradient(max(h, axis=1))
e = exp(h - broadcast_to(reshape(m, (2, 1)), (2, 3)))
p = e / broadcast_to(reshape(sum(e, axis=1), (2, 1)), (2, 3))
loss = sum(log(p[:, 0]))
"""


def test_a_reshape_of_an_expand_dims_is_one_reshape():
    x = Session().run("X: R^(2,3)\nreshape(expand_dims(X, 2), (2, 3))")[-1].value
    assert str(x) == "X"
    y = Session().run("X: R^(2,3)\nreshape(expand_dims(X, 0), (3, 2))")[-1].value
    assert str(y) == "reshape(X, (3, 2))"
    values = Session().run("X = [[1, 2, 3], [4, 5, 6]]\nreshape(squeeze(expand_dims(X, 1), 1), (6,))")
    assert np.array_equal(np.array(sp.Array(values[-1].value).tolist(), dtype=float), np.arange(1.0, 7.0))


def _explained(source: str, wrt: str) -> str:
    return to_plain(Session().run(source + f"explain grad(loss, {wrt})")[-1])


def test_a_reshape_is_not_a_step_of_the_pass():
    text = _explained(KEEPDIMS, "w")
    assert "✓ equals grad" in text, text
    assert not re.search(r"^(# )?\(\d+\)  ∂L/∂reshape\(", text, re.M), text
    assert "expand_dims(sum(" not in text.split("∂L/∂w =")[-1], text  # the broadcast's Σ in w's shape


def test_the_gradient_through_the_keepdims_softmax_is_jax_s():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    z = np.array([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7]])
    w = np.array([0.9, -0.4, 1.3])

    def loss(w):
        h = z * w
        e = jnp.exp(h - jax.lax.stop_gradient(jnp.max(h, axis=1, keepdims=True)))
        return jnp.sum(jnp.log((e / jnp.sum(e, axis=1, keepdims=True))[:, 0]))

    source = KEEPDIMS.replace("z: R^(2,3)", f"z = {z.tolist()}")
    ours = Session().run(source + f"grad(loss, w) at w = {w.tolist()}")[-1].value
    assert np.allclose(np.array(sp.Array(ours).tolist(), dtype=float), np.asarray(jax.grad(loss)(w)), atol=1e-12)


def test_a_compact_ledger_calls_a_bound_stop_by_the_program_s_name():
    stops = "\n".join(f"s{k} = stop_gradient(max(x, axis=0) * {k})" for k in range(1, 10))
    source = f"x: R^(2,3)\n{stops}\nloss = sum(x^2) + " + " + ".join(f"sum(s{k})" for k in range(1, 10)) + "\n"
    text = _explained(source, "x")
    assert len(re.findall(r"^(# )?stop s\d", text, re.M)) == 9, text
    assert not re.search(r"^(# )?(let|   )  s\d = ", text, re.M), text  # the program binds them: no let line


def test_a_rule_that_does_not_fit_beside_its_line_gives_its_name():
    from gradlang.render.vector_lines import _ruled

    head = "(1)  ∂L/∂u = " + "x" * 66
    assert _ruled(head, "exp: ū = ȳ ⊙ f′(u)") == head + "  [exp]"
    assert _ruled("(1)  ∂L/∂u = x", "exp: ū = ȳ ⊙ f′(u)").endswith("[exp: ū = ȳ ⊙ f′(u)]")
    assert "\n" in _ruled("(1)  ∂L/∂u = " + "x" * 80, "exp: ū = ȳ ⊙ f′(u)")
    wide = "(1)  ∂L/∂u = " + "x" * 90  # already past the page: its rule's name at its end, not a line of its own
    assert _ruled(wide, "exp: ū = ȳ ⊙ f′(u)") == wide + "  [exp]"
    tidied = "exp: ū = ȳ ⊙ f′(u); then exp(u) ⊘ Σ exp(u) = softmax(u)"  # the identities that tidied it stay
    line = _ruled("(1)  ∂L/∂x = " + "x" * 40, tidied)
    assert "\n" not in line and line.endswith("  [exp; then exp(u) ⊘ Σ exp(u) = softmax(u)]"), line
