"""A derivative by a declared scalar (issue 40): a scalar is a tensor of rank 0.

`grad(L, t)` of a tensor formula by a declared `t: R` is the tensor reverse pass, ending with the adjoint
summed down to the scalar, at `R^3` as at `R^n` (it was the rule table's walk over the components at
`R^3`, each line a whole formula); its value equals JAX's gradient. A Hessian entry by scalars derives
the second derivative from the first as the reader last saw it (its simpler form), so the product rule
is not walked once per term of the first. A value the program binds to two names is one let line.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.render.plain import to_plain

LOSS = "sum(x*t)^2 + sg(t)*norm(x)*t + sum(tanh(W @ x))*t"
X, T, W = [0.5, -1.0, 2.0], 0.7, [[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]]


def _program(size) -> str:
    rows = 2 if size == 3 else "m"
    return f"x: R^{size}\nW: R^({rows},{size})\nt: R\nexplain grad({LOSS}, t)"


def _derivation(size) -> str:
    return to_plain(Session().run(_program(size))[-1])


def _jax_gradient() -> float:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss(t):
        x, w = jnp.array(X), jnp.array(W)
        return jnp.sum(x * t) ** 2 + jax.lax.stop_gradient(t) * jnp.linalg.norm(x) * t + jnp.sum(jnp.tanh(w @ x)) * t

    return float(jax.grad(loss)(T))


def test_a_grad_by_a_declared_scalar_is_the_tensor_reverse_pass_at_every_size():
    literal, symbolic = _derivation(3), _derivation("n")
    assert "tensor reverse pass; one stop, blocking" in literal, literal
    assert "x[0]" not in literal and "✓ equals grad" in literal, literal
    assert literal == symbolic, (literal, symbolic)


def test_the_derived_value_is_jax_s_gradient():
    at = f" at x = {X}, W = {W}, t = {T}"
    result = Session().run(_program(3) + at)[-1]
    (explanation,) = result.steps
    assert explanation.summary.startswith("tensor reverse pass"), to_plain(result)
    assert explanation.check is not None and explanation.check.agrees
    assert float(result.value) == pytest.approx(_jax_gradient(), rel=1e-12)


def test_a_hessian_entry_by_scalars_walks_the_product_rule_once_per_order():
    program = ("a: R\nb: R\nc: R\n"
               "explain hessian(a*b*c*exp(a+b+c)*sg(a-b), [a, b, c])[0, 1] at a = 1, b = 2, c = 3")
    result = Session().run(program)[-1]
    text = to_plain(result)
    assert text.count("[product]") == 2, text
    assert "2. d/db (b*c*(a + 1)*exp(a + b + c)*sg(a - b))" in text, text
    assert "✓ equals hessian" in text, text
    # d²/db da of a·b·c·e^(a+b+c)·sg(a − b), the stop a constant: c(a + 1)(b + 1)e^(a+b+c)·(a − b) at (1, 2, 3)
    assert float(result.value) == pytest.approx(3 * 2 * 3 * np.exp(6) * (1 - 2), rel=1e-12)


def test_a_value_bound_to_two_names_is_one_let_line():
    program = "x: R^n\nW: R^(n,n)\nz = W @ x\nzz = z\nexplain grad(sum(tanh(zz)) + sum(z^2), W)"
    text = to_plain(Session().run(program)[-1])
    lets = [line for line in text.splitlines() if " = W @ x" in line]
    assert len(lets) == 1 and "zz = W @ x" in lets[0], text
