"""Kink warnings: one at each kink type, none away from kinks; JAX's behaviour as the messages claim."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from gradlang import Session
from gradlang.tools.kinks import kink_warnings, kink_warnings_batch


def warnings_of(source: str) -> tuple:
    return Session().run(source)[-1].warnings


# (program, one substring per expected warning, in any order)
AT_KINKS = [
    ("x: R^3\nmax(x) at x = [1, 3, 3]", ["max(x[0], x[1], x[2]) has a tie: 2 of its 3"]),
    ("x: R^3\nmin(x) at x = [2, 2, 2]", ["min(x[0], x[1], x[2]) has a tie: 3 of its 3"]),
    ("x: R^3\ngrad(max(x), x) at x = [1, 3, 3]", ["max("]),
    ("max(t, 0) at t = 0", ["max("]),
    ("x: R^3\ny = exp(x[0] - sg(max(x)))\ny at x = [3, 1, 3]", ["inside stop_gradient"]),
    ("diff(abs(t), t) at t = 0", ["sign(t)"]),
    ("relu(t - 1) at t = 1", ["relu("]),
    ("diff(relu(t), t) at t = 0", ["relu(t)"]),
    ("sign(t) at t = 0", ["sign(t)"]),
    ("floor(t) at t = 2", ["floor(t)"]),
    ("ceil(t) at t = -1", ["ceil(t)"]),
    ("round(t) at t = 2.5", ["round(t)"]),
    ("where(t > 1, t, 1) at t = 1", ["where("]),
    ("v: R^3\nwhere(v == max(v), v, 0) at v = [1, 3, 2]", ["where(v[1] == max("]),  # v[1] is the max: slope 1 or 0
    ("where(t >= 0, t, 1) at t = linspace(-1, 1, 3)", ["at 1 of 3 points: where("]),
    ("where(t > 0, t*y, 0) at t = 0", ["where("]),  # y has no number: the branches cannot be compared
    ("sign(s) + relu(t) at s = 0, t = 0", ["sign(s)", "relu(t)"]),
]

AWAY = [
    "x: R^3\nmax(x) at x = [1, 2, 3]",
    "x: R^3\nsoftmax(x)[0] at x = [1, 2, 3]",
    "max(t, 0) at t = 0.5",
    "abs(t) at t = -2",
    "x: R^3\nsoftmax(x)[0] at x = [3, 1, 3]",  # softmax shifts by its max inside: no tie the user sees
    "x: R^3\nlogsumexp(x) at x = [3, 3, 1]",
    "abs(t) at t = 0",  # a value: nothing is differentiated, so abs's convention does not arise
    "relu(t) at t = 3",
    "sign(t) at t = 0.1",
    "floor(t) at t = 2.5",
    "ceil(t) at t = 0.25",
    "round(t) at t = 2.25",
    "round(t) at t = 3",
    "where(t > 1, t, 1) at t = 2",
    # on the boundary, but both branches have the same derivative there: the convention cannot show
    "v: R^3\nwhere(v == max(v), 1, 0) at v = [1, 3, 2]",
    "v: R^3\ngrad(sum(v * sg(where(v == max(v), 1, 0))), v) at v = [1, 3, 2]",
    "where(t >= 0, t^2, 0) at t = 0",
    "where(t >= 0, t^2, 0) at t = linspace(-1, 1, 3)",
    "exp(t) * sin(t) at t = 0",
    "abs(t) at t = linspace(0.5, 1, 3)",
]


@pytest.mark.parametrize("source, expected", AT_KINKS)
def test_a_warning_at_each_kink(source, expected):
    warnings = warnings_of(source)
    assert len(warnings) == len(expected), warnings
    for text in expected:
        assert any(text in w for w in warnings), (text, warnings)
    assert all("gradlang" in w for w in warnings)


@pytest.mark.parametrize("source", AWAY)
def test_no_warning_away_from_kinks(source):
    assert warnings_of(source) == ()


@pytest.mark.parametrize(
    "source, framework_claims",
    [
        ("x: R^3\nmax(x) at x = [1, 3, 3]", ["tf.maximum(a, b) gives all to a", "jnp.max shares equally", "torch.amax"]),
        ("diff(abs(t), t) at t = 0", ["JAX (jnp.abs, lax.abs) gives 1", "torch.abs", "tf.abs"]),
        ("relu(t) at t = 0", ["jax.nn.relu", "torch.relu", "tf.nn.relu"]),
    ],
)
def test_warnings_name_the_frameworks(source, framework_claims):
    (warning,) = warnings_of(source)
    for claim in framework_claims:
        assert claim in warning


def test_the_jax_claims_hold():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    assert float(jax.grad(jnp.abs)(0.0)) == 1.0
    assert float(jax.grad(jax.nn.relu)(0.0)) == 0.0
    assert np.allclose(jax.grad(jnp.max)(jnp.array([1.0, 3.0, 3.0])), [0, 0.5, 0.5])
    assert float(jax.grad(jnp.maximum)(1.0, 1.0)) == 0.5
    assert float(jax.grad(jax.lax.max)(1.0, 1.0)) == 0.5
    nested = jax.grad(lambda v: jnp.maximum(jnp.maximum(v[0], v[1]), v[2]))(jnp.array([2.0, 2.0, 2.0]))
    assert not np.allclose(nested, [1 / 3] * 3)  # "nested pairs share unequally"


def test_each_kink_reported_once():
    x = sp.Symbol("x", real=True)
    exprs = [sp.sign(x), sp.sign(x) + 1, sp.sign(x) * sp.exp(sp.sign(x))]
    assert len(kink_warnings(exprs, {x: sp.Integer(0)})) == 1


def test_symbols_without_values_are_not_judged():
    x, y = sp.symbols("x y", real=True)
    assert kink_warnings([sp.sign(x - y)], {x: 0}) == []


@pytest.mark.parametrize(
    "values, expected",
    [([-1.0, 0.0, 1.0], "at 1 of 3 points"), ([0.0, 0.0], "at 2 of 2 points")],
)
def test_batch_counts_points(values, expected):
    t = sp.Symbol("t", real=True)
    (warning,) = kink_warnings_batch([sp.sign(t)], [t], [np.array(values)])
    assert warning.startswith(expected)


def test_batch_through_the_language():
    (warning,) = warnings_of("relu(t) at t = linspace(-1, 1, 5)")
    assert warning.startswith("at 1 of 5 points")


def test_a_warning_has_a_short_line_and_the_convention_apart():
    (warning,) = warnings_of("relu(t) at t = 0")
    assert warning == f"{warning.short} {warning.detail}"
    assert "docs/language.md" in warning.detail and len(warning.short) < 100


def test_a_cut_argument_list_ends_in_an_ellipsis_not_in_a_formula_that_reads_whole():
    """The arguments were cut at 60 characters and then lost their last character, the "…", to the parentheses'
    removal: `max(…, W[1, 0]*x[0] + W[1, 1])` read as a whole (wrong) second argument."""
    source = "x: R^2\nW: R^(2,2)\nmax(W @ x + x) at x = [1, 1], W = [[1, 0], [1, 0]]"
    short = str(warnings_of(source)[0]).split(" has a tie")[0]
    assert short.endswith("…)") and len(short) <= 64, short
    assert "max(W[0, 0]*x[0] + W[0, 1]*x[1] + x[0], W[1, 0]*x[0] + W[1, 1…)" in short
