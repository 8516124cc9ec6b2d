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


# --- order two and more: the reverse pass over the order before, the telescoped ledger ----------------------

RNG = np.random.default_rng(20261129)
ID, SG = (lambda v: v), jax.lax.stop_gradient


def _explained(source: str):
    return [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _removed(text: str) -> list[str]:
    """The removed terms as printed, in the ledger's order (a neutral or irrelevant entry's 0)."""
    found = []
    for line in text.splitlines():
        if match := re.search(r"removes r\S = (.*)$", line):
            found.append(match.group(1))
        elif "neutral: it removes 0" in line or "irrelevant: " in line:
            found.append("0")
    return found


def _at(size, text: str, a: float, x: np.ndarray, b: float = 0.0) -> float:
    """gradlang's value of a printed formula at the point (at `R^n` the point gives n)."""
    values = ", ".join(repr(float(v)) for v in x)
    results = Session().run(f"a: R\nb: R\nx: R^{size}\nvalue__ = {text}\nvalue__ at a = {a!r}, b = {b!r}, x = [{values}]")
    return float(results[-1].value)


def _jax(f, order: int, a: float, x, stops) -> float:
    """The order-th derivative by a, nested jax.grad, each stop the identity or lax.stop_gradient."""
    g = lambda v: f(v, jnp.asarray(x), stops)  # noqa: E731
    for _ in range(order):
        g = jax.grad(g)
    return float(g(a))


def _telescoped(f, order, count, a, x) -> tuple:
    """rᵢ by JAX (stops 1..i the identity, less stops 1..i−1), the kept and the true derivative."""
    takes = [_jax(f, order, a, x, [ID] * k + [SG] * (count - k)) for k in range(count + 1)]
    return [takes[k + 1] - takes[k] for k in range(count)], takes[0], takes[-1]


HIGHER = [  # (formula, JAX's f(a, x, stops), order, stops in the ledger's order)
    ("sum(a^3*x)*sg(a)", lambda a, x, s: jnp.sum(a ** 3 * x) * s[0](a), 2, 1),
    ("sum(a^3*x)*sg(a) + sum(sg(x)*a^2)", lambda a, x, s: jnp.sum(a ** 3 * x) * s[0](a) + jnp.sum(s[1](x) * a ** 2),
     2, 2),
    ("sum(a^2*x)*sg(sum(a*x)) + sum(exp(a*x))*sg(a^2)",
     lambda a, x, s: jnp.sum(a ** 2 * x) * s[0](jnp.sum(a * x)) + jnp.sum(jnp.exp(a * x)) * s[1](a ** 2), 2, 2),
    ("sum(a^3*x)*sg(a) + sum(sg(x)*a^2)", lambda a, x, s: jnp.sum(a ** 3 * x) * s[0](a) + jnp.sum(s[1](x) * a ** 2),
     3, 2),
]


@pytest.mark.parametrize("formula, f, order, count", HIGHER)
@pytest.mark.parametrize("size", ["3", "n"])
def test_a_higher_order_has_the_telescoped_ledger_and_agrees_with_jax(formula, f, order, count, size):
    """diff(L, a, k): each printed term is JAX's rᵢ at a random point (at `R^n` of a random size), the kept
    derivative plus the terms is JAX's true one, and the derivation closes with its check."""
    text = to_plain(_explained(f"a: R\nx: R^{size}\nexplain diff({formula}, a, {order})"))
    assert f"tensor reverse pass over the {('first', 'second')[order - 2]} derivative" in text
    assert "# ✓ equals diff" in text
    assert f"true = kept + removed: diff(unstopped(L), a, {order})" in text
    printed = _removed(text)
    assert len(printed) == count, text
    n = 3 if size == "3" else int(RNG.integers(2, 7))
    a, x = float(RNG.uniform(-1.2, 1.2)), RNG.uniform(-1.2, 1.2, n)
    expected, kept, true = _telescoped(f, order, count, a, x)
    for term, value in zip(printed, expected):
        assert _at(size, term, a, x) == pytest.approx(value, rel=1e-9, abs=1e-9), term
    ours = _at(size, f"diff({formula}, a, {order})", a, x)
    assert ours == pytest.approx(kept, rel=1e-9, abs=1e-9)
    assert ours + sum(_at(size, term, a, x) for term in printed) == pytest.approx(true, rel=1e-9, abs=1e-9)


def test_the_same_derivation_at_every_size():
    """x: R^3 and x: R^n give the same lines, ledger and check."""
    source = "a: R\nx: R^{size}\nexplain diff(sum(a^3*x)*sg(a) + sum(sg(x)*a^2), a, 2)"
    literal, symbolic = (to_plain(_explained(source.format(size=s))) for s in (3, "n"))
    assert literal.splitlines()[:-2] == symbolic.splitlines()[:-2]
    assert "   blocking: removes r₁ = 6*a^2*sum(x)" in literal


def test_a_mixed_second_derivative_by_two_scalars():
    """diff(L, a, b): the reverse pass by b over the first derivative by a; its term is JAX's."""
    text = to_plain(_explained("a: R\nb: R\nx: R^n\nexplain diff(sum(a^3*b*x)*sg(a*b), a, b)"))
    assert "tensor reverse pass over the first derivative 3*a^2*b*sg(a*b)*sum(x)" in text
    (term,) = _removed(text)
    a, b, x = float(RNG.uniform(0.5, 1.2)), float(RNG.uniform(0.5, 1.2)), RNG.uniform(-1.2, 1.2, 4)

    def mixed(stop):
        f = lambda u, v: jnp.sum(u ** 3 * v * jnp.asarray(x)) * stop(u * v)  # noqa: E731
        return float(jax.grad(jax.grad(f, 0), 1)(a, b))
    assert _at("n", term, a, x, b) == pytest.approx(mixed(ID) - mixed(SG), rel=1e-9)


def test_at_a_point_the_numbers_are_the_second_derivatives():
    a, x = 0.5, np.array([1.0, 2.0, 3.0])
    text = to_plain(_explained("a: R\nx: R^3\nexplain diff(sum(a^3*x)*sg(a), a, 2) at a = 0.5, x = [1, 2, 3]"))
    f = HIGHER[0][1]
    _, kept, true = _telescoped(f, 2, 1, a, x)
    assert f"value 0.375, gradient {kept:g}, true gradient {true:g}" in text


@pytest.mark.parametrize("formula", [f for f, *_ in HIGHER] + ["det(a*W)*sg(a)", "sum(inv(a*W + eye(2)))*sg(a)"])
def test_every_format_renders_a_higher_order(formula):
    """Plain, pretty, LaTeX and JSON of each; the pretty line printer wrote (a*W)⁻ᵀ by a string it could not
    bracket (expr/tensor/spelling._pretty_special) and failed on det's second derivative."""
    from gradlang.render import to_json, to_latex, to_rich

    result = _explained(f"a: R\nx: R^n\nW: R^(2,2)\nexplain diff({formula}, a, 2)")
    assert "# ✓ equals diff" in to_plain(result)
    assert to_rich(result) is not None and "Check: equals" in to_latex(result)
    assert to_json(result)["steps"][-1]["stops"][0]["order"] == 2
