"""explain diff(L, a) by a declared scalar that a tensor part of L holds (diff(sum(a^3*x)*sg(a), a)).

It used to print the value alone, with no derivation: diff by a scalar was shown only by the rule table,
whose tensor parts are constants, so a formula whose tensor parts hold a was never recorded. It is grad by
a tensor of rank 0, so it now takes grad's reverse pass, shown as the diff written, the same at `R^3` and
`R^n`; its ledger's removed term and its value are checked against JAX float64.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.render import to_plain

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

PROGRAM = "a: R\nx: R^{size}\nexplain diff(sum(a^3*x)*sg(a) + sum(sg(x)*a), a)"


def _text(size) -> str:
    results = [r for r in Session().run(PROGRAM.format(size=size)) if r is not None and r.kind == "explain"]
    return to_plain(results[-1])


def test_the_derivation_is_the_reverse_pass_written_as_diff_at_every_size():
    literal, symbolic = _text(3), _text("n")
    assert literal.splitlines()[:-2] == symbolic.splitlines()[:-2]  # the check's wording aside, none differs
    assert literal.startswith("# diff(sg(a)*sum(a^3*x) + sum(a*sg(x)), a):")
    assert "tensor reverse pass; two stops: one blocking, one irrelevant" in literal
    assert "true = kept + removed: diff(unstopped(L), a) = g + r₁ (g = diff(L, a))" in literal
    assert "# ✓ equals diff" in literal and "# ✓ equals diff" in symbolic


def _value(a: float, x: np.ndarray, stop) -> float:
    return jnp.sum(a ** 3 * x) * stop(a) + jnp.sum(stop(x) * a)


def test_the_value_and_the_removed_term_agree_with_jax():
    rng = np.random.default_rng(7)
    a, x = float(rng.normal()), rng.normal(size=3)
    point = f"a = {a!r}, x = [{', '.join(repr(float(v)) for v in x)}]"
    text = to_plain([r for r in Session().run(PROGRAM.format(size=3) + f" at {point}")
                     if r is not None and r.kind == "explain"][-1])
    kept = jax.grad(lambda v: _value(v, x, jax.lax.stop_gradient))(a)
    true = jax.grad(lambda v: _value(v, x, lambda u: u))(a)
    assert float(text.splitlines()[-1]) == pytest.approx(float(kept), rel=1e-12)
    removed = re.search(r"removes r₁ = (.+)", text).group(1)
    assert removed == "a^3*sum(x)"
    assert float(true - kept) == pytest.approx(a ** 3 * float(np.sum(x)), rel=1e-12)
