"""Property tests over random expression trees with stops (issue 2, the oracles).

Hypothesis draws small trees over the scalar symbols x, y, z; each tree is
rendered twice: as gradlang source text, and as an independent evaluator
(mpmath at 50 digits for values and finite differences, JAX for higher
derivatives). The properties:

1. the value of e equals the value of unstopped(e), and the true value;
2. for stop-free e, grad matches central finite differences;
3. for e with stops, grad matches finite differences of e with every stopped
   subexpression frozen at its value at the point (LANGUAGE.md section 12);
4. second and mixed derivatives of stopped expressions match JAX's
   grad(grad(...)) with lax.stop_gradient, and diff(x*sg(v), x, 2) is exactly 0;
and two more: blocked(e, x) is the unstopped minus the frozen finite
differences, and an exact integer point gives the exact form of the float answer.

Examples are derandomized so CI is reproducible; the trees are small (up to 8
leaves a side) so each property runs in a few seconds.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gradlang import Session

jax = pytest.importorskip("jax")  # the test extra installs it; without it these tests skip
jnp = pytest.importorskip("jax.numpy")

jax.config.update("jax_enable_x64", True)

SYMBOLS = ("x", "y", "z")
CONSTANTS = ("1", "2", "3", "0.5", "1.5")
FUNCTIONS = ("exp", "sin", "cos", "tanh", "sigmoid", "softplus", "atan", "log1sq", "sqrt1sq", "neg")
OPERATORS = ("+", "-", "*", "/")
POWERS = (2, 3)
LIMIT = 1e6  # values and derivatives beyond this are not compared (float64 loses the oracle's digits)

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# ---- trees ------------------------------------------------------------------------------------


def trees(stops: bool, max_leaves: int = 8, constants=CONSTANTS):
    leaves = st.sampled_from([("sym", s) for s in SYMBOLS * 3] + [("const", c) for c in constants])

    def extend(children):
        options = [
            st.tuples(st.just("call"), st.sampled_from(FUNCTIONS), children),
            st.tuples(st.just("bin"), st.sampled_from(OPERATORS), children, children),
            st.tuples(st.just("pow"), children, st.sampled_from(POWERS)),
        ]
        if stops:
            options.append(st.tuples(st.just("sg"), children))
        return st.one_of(options)

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def stopped_trees(**kwargs):
    """Trees that contain at least one stop: e op sg(f)."""
    return st.tuples(st.sampled_from(OPERATORS), trees(True, **kwargs), trees(True, **kwargs)).map(
        lambda t: ("bin", t[0], t[1], ("sg", t[2])))


def joined_trees(stops: bool):
    """e op f: two trees joined, so that even the smallest examples involve several symbols."""
    return st.tuples(st.sampled_from(OPERATORS), trees(stops), trees(stops)).map(
        lambda t: ("bin", t[0], t[1], t[2]))


points = st.tuples(*[st.floats(-2, 2, allow_nan=False).map(lambda v: round(v, 3))] * 3)

# ---- the renderings ---------------------------------------------------------------------------


def source(t) -> str:
    kind = t[0]
    if kind in ("sym", "const"):
        return t[1]
    if kind == "sg":
        return f"sg({source(t[1])})"
    if kind == "pow":
        return f"({source(t[1])})^{t[2]}"
    if kind == "bin":
        return f"({source(t[2])} {t[1]} {source(t[3])})"
    name, arg = t[1], source(t[2])
    return {"log1sq": f"log(1 + ({arg})^2)", "sqrt1sq": f"sqrt(1 + ({arg})^2)", "neg": f"(-{arg})"}.get(
        name, f"{name}({arg})")


MP_FUNCTIONS = {
    "exp": mp.exp, "sin": mp.sin, "cos": mp.cos, "tanh": mp.tanh, "atan": mp.atan,
    "sigmoid": lambda u: 1 / (1 + mp.exp(-u)), "softplus": lambda u: mp.log(1 + mp.exp(u)),
    "log1sq": lambda u: mp.log(1 + u**2), "sqrt1sq": lambda u: mp.sqrt(1 + u**2), "neg": lambda u: -u,
}

JAX_FUNCTIONS = {
    "exp": jnp.exp, "sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh, "atan": jnp.arctan,
    "sigmoid": jax.nn.sigmoid, "softplus": jax.nn.softplus,
    "log1sq": lambda u: jnp.log(1 + u**2), "sqrt1sq": lambda u: jnp.sqrt(1 + u**2), "neg": lambda u: -u,
}

BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}


def evaluate(t, env, frozen=None, functions=MP_FUNCTIONS, stop=lambda v: v):
    """The tree's value at env; with `frozen`, every stopped subtree is evaluated at `frozen` instead."""
    kind = t[0]
    if kind == "sym":
        return env[t[1]]
    if kind == "const":
        return mp.mpf(t[1]) if functions is MP_FUNCTIONS else float(t[1])
    if kind == "sg":
        return stop(evaluate(t[1], frozen or env, frozen, functions, stop))
    if kind == "pow":
        return evaluate(t[1], env, frozen, functions, stop) ** t[2]
    if kind == "bin":
        return BINARY[t[1]](evaluate(t[2], env, frozen, functions, stop), evaluate(t[3], env, frozen, functions, stop))
    return functions[t[1]](evaluate(t[2], env, frozen, functions, stop))


# ---- the oracles ------------------------------------------------------------------------------


def mp_point(point):
    return {name: mp.mpf(value) for name, value in zip(SYMBOLS, point)}


def true_value(t, point):
    with mp.workdps(50):
        try:
            value = evaluate(t, mp_point(point))
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return float(value) if mp.isfinite(value) and abs(value) < LIMIT else None


def finite_differences(t, point, freeze: bool):
    """Central differences at 50 digits; with freeze, stopped subtrees are held at the point."""
    with mp.workdps(50):
        base, h = mp_point(point), mp.mpf("1e-15")
        grads = []
        for name in SYMBOLS:
            up, down = dict(base), dict(base)
            up[name] += h
            down[name] -= h
            frozen = base if freeze else None
            grads.append((evaluate(t, up, frozen) - evaluate(t, down, frozen)) / (2 * h))
        return np.array([float(g) for g in grads])


def jax_function(t):
    def f(x, y, z):
        return evaluate(t, {"x": x, "y": y, "z": z}, functions=JAX_FUNCTIONS, stop=jax.lax.stop_gradient)
    return f


def at(point) -> str:
    return ", ".join(f"{name} = {float(value)!r}" for name, value in zip(SYMBOLS, point))


def run(program: str) -> np.ndarray:
    value = Session().eval(program)
    return np.array([float(v) for v in value] if hasattr(value, "__len__") else float(value))


def assert_close(got, expected, rtol=1e-7):
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale)


def usable(t, point) -> bool:
    return true_value(t, point) is not None


# ---- the properties ---------------------------------------------------------------------------


@SETTINGS
@given(joined_trees(stops=True), points)
def test_value_equals_value_of_unstopped(t, point):
    assume(usable(t, point))
    value = run(f"{source(t)} at {at(point)}")
    assert_close(value, run(f"unstopped({source(t)}) at {at(point)}"), rtol=1e-12)
    assert_close(value, true_value(t, point), rtol=1e-9)


@SETTINGS
@given(joined_trees(stops=False), points)
def test_grad_of_stop_free_expression_matches_finite_differences(t, point):
    assume(usable(t, point))
    expected = finite_differences(t, point, freeze=False)
    assume(np.all(np.abs(expected) < LIMIT))
    assert_close(run(f"grad({source(t)}, [x, y, z]) at {at(point)}"), expected)


@SETTINGS
@given(stopped_trees(), points)
def test_grad_with_stops_matches_frozen_finite_differences(t, point):
    assume(usable(t, point))
    expected = finite_differences(t, point, freeze=True)
    assume(np.all(np.abs(expected) < LIMIT))
    assert_close(run(f"grad({source(t)}, [x, y, z]) at {at(point)}"), expected)


def _jax_second(t, point, i, j):
    f = jax_function(t)
    return float(jax.grad(jax.grad(f, i), j)(*map(jnp.float64, point)))


@SETTINGS
@given(stopped_trees(), points)
def test_second_derivatives_with_stops_match_jax(t, point):
    assume(usable(t, point))
    expected = np.array([_jax_second(t, point, 0, 0), _jax_second(t, point, 0, 1)])
    assume(np.all(np.isfinite(expected)) and np.all(np.abs(expected) < LIMIT))
    got = np.array([run(f"diff({source(t)}, x, 2) at {at(point)}"), run(f"diff({source(t)}, x, y) at {at(point)}")])
    assert_close(got, expected)


def _products(parts):
    """u1*sg(v1) + u2*sg(v2) + ...: x reaches the value only through such products."""
    return ("bin", "+", *parts) if len(parts) == 2 else parts[0]


@SETTINGS
@given(st.lists(st.tuples(trees(False, 5), trees(True, 5)).map(lambda uv: ("bin", "*", uv[0], ("sg", uv[1]))),
                min_size=1, max_size=2).map(_products), points)
def test_products_with_stopped_factors_match_jax_grad_grad(t, point):
    assume(usable(t, point))
    expected = _jax_second(t, point, 0, 0)
    assume(np.isfinite(expected) and abs(expected) < LIMIT)
    assert_close(run(f"diff({source(t)}, x, 2) at {at(point)}"), expected)


@SETTINGS
@given(trees(stops=True))
def test_x_times_stopped_anything_has_zero_second_derivative(v):
    assert Session().eval(f"diff(x * sg({source(v)}), x, 2)") == 0


@SETTINGS
@given(stopped_trees(), points)
def test_blocked_is_what_the_stops_removed(t, point):
    """blocked(e, [x, y, z]) = grad of unstopped(e) minus grad of e: plain minus frozen finite differences."""
    assume(usable(t, point))
    expected = finite_differences(t, point, freeze=False) - finite_differences(t, point, freeze=True)
    assume(np.all(np.abs(expected) < LIMIT))
    got = np.array([run(f"blocked({source(t)}, {name}) at {at(point)}") for name in SYMBOLS])
    assert_close(got, expected)


@SETTINGS
@given(stopped_trees(max_leaves=6, constants=("1", "2", "3")), st.tuples(*[st.integers(-3, 3)] * 3))
def test_exact_point_agrees_with_float_point(t, point):
    """Exact in, exact out: the exact derivative at an integer point, rounded, is the float one."""
    assume(usable(t, point))
    floats = tuple(float(v) for v in point)
    expected = finite_differences(t, floats, freeze=True)
    assume(np.all(np.abs(expected) < LIMIT))
    exact = Session().eval(f"grad({source(t)}, [x, y, z]) at " + ", ".join(
        f"{name} = {value}" for name, value in zip(SYMBOLS, point)))
    assert not any(v.has(sp.Float) for v in exact), exact
    assert_close(np.array([float(v) for v in exact]), run(f"grad({source(t)}, [x, y, z]) at {at(floats)}"), rtol=1e-9)
