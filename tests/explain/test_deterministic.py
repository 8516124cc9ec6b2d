"""Same program, same bytes: no printed simplification depends on the clock.

A slow machine is simulated by making every simplify call slow (gradlang's,
SymPy's steps paid from a budget of work: expr/simplify_steps.py); the
results must not change (the old one-second budget turned the zero matrix
of blocked(stable_softmax(x), x) into a 6.7 KB expression).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import sympy as sp

from gradlang import limits
from gradlang.expr import bounded
from tests.component_session import ComponentSession
from gradlang.core.session import Session

STABLE = """x: R^3
stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))
"""


@pytest.fixture
def slow_simplify(monkeypatch):
    original = bounded.simplify  # SymPy's simplify step by step (expr/simplify_steps.py)

    def slow(expr, *args, **kwargs):
        time.sleep(0.15)
        return original(expr, *args, **kwargs)

    monkeypatch.setattr(bounded, "simplify", slow)


def _text(source: str) -> list[str]:
    return [r.text for r in Session(time_limit=None).run(source) if r is not None]


def test_blocked_of_the_stable_softmax_is_the_zero_matrix_on_a_slow_machine(slow_simplify):
    assert _text(STABLE + "blocked(stable_softmax(x), x)") == ["[[0, 0, 0], [0, 0, 0], [0, 0, 0]]"]


def test_explain_blocked_says_neutral_on_a_slow_machine(slow_simplify):
    results = Session(time_limit=None).run(STABLE + "explain blocked(stable_softmax(x), x)")
    assert sp.ImmutableMatrix.zeros(3, 3) == results[-1].derivations[0].result


def test_simplify_builtin_is_bounded_by_size_not_time(slow_simplify):
    assert _text("x: R\nsimplify(sin(x)^2 + cos(x)^2)") == ["1"]


def test_a_component_above_the_size_bound_is_kept_with_a_note(monkeypatch):
    monkeypatch.setattr(limits, "SIMPLIFY_MAX_NODES", 5)
    results = Session().run("x: R\nsimplify([sin(x)^2 + cos(x)^2 + x*x, x + x])")
    assert results[-1].text == "[x^2 + sin(x)^2 + cos(x)^2, 2*x]"
    assert any("above 5 nodes" in w for w in results[-1].warnings)


def test_blocked_over_many_generators_is_bounded_by_work_not_time(monkeypatch):
    """Differential fuzzer, seed 109: this difference has 277 nodes a component (under the size bound) over
    22 generators (9 symbols, acos, sigmoid, sqrt), and simplify's cancel took 5 s a component. Its work
    (nodes times generators) is above limits.BLOCKED_SIMPLIFY_WORK, so it is kept as it is, never simplified."""
    from gradlang.expr.bounded import generators
    from gradlang.expr.walk import tree_size

    calls = []
    original = bounded.simplify  # SymPy's simplify step by step (expr/simplify_steps.py)
    monkeypatch.setattr(bounded, "simplify", lambda e, *a, **k: calls.append(e) or original(e, *a, **k))
    session = ComponentSession()  # the component engine's blocked: a simplify per component, bounded by work
    session.run("v: R^3\nW: R^(2,3)\nb = blocked(dot(sg(acos(v)), transpose(sigmoid(W)) @ (W @ v)^(-1)), v)")
    kept = list(session.env["b"])
    assert calls == []
    assert all(tree_size(e) * generators(e) > limits.BLOCKED_SIMPLIFY_WORK for e in kept)
    # still the difference of the true and the surrogate gradient, as numbers show
    point = "v = [0.25, -0.5, 0.75], W = [[1.0, 2.0, -1.0], [0.5, 1.5, 2.0]]"
    blocked = session.eval(f"b at {point}")
    true = session.eval(f"grad(unstopped(dot(sg(acos(v)), transpose(sigmoid(W)) @ (W @ v)^(-1))), v) at {point}")
    surrogate = session.eval(f"grad(dot(sg(acos(v)), transpose(sigmoid(W)) @ (W @ v)^(-1)), v) at {point}")
    assert [float(a) for a in blocked] == pytest.approx([float(t) - float(s) for t, s in zip(true, surrogate)], rel=1e-12)
    assert any(abs(float(a)) > 1e-3 for a in blocked)
    tensor = Session().eval(f"v: R^3\nW: R^(2,3)\nblocked(dot(sg(acos(v)), transpose(sigmoid(W)) @ (W @ v)^(-1)), v) at {point}")
    assert [float(a) for a in tensor] == pytest.approx([float(a) for a in blocked], rel=1e-12)  # the tensor engine agrees


def test_blocked_of_the_gallery_still_simplifies_under_the_work_bound():
    """The stable softmax's difference (224 nodes over 9 generators) is under the work bound: the zero matrix."""
    assert _text(STABLE + "blocked(stable_softmax(x), x)") == ["[[0, 0, 0], [0, 0, 0], [0, 0, 0]]"]


def test_blocked_over_many_symbols_is_kept_as_it_is(monkeypatch):
    """Differential fuzzer, seed 116: each component has 27 nodes over W and v (9 symbols), and simplify's
    trigsimp factored a cubic in all nine, 1.5 s a component (25 s on the loaded machine). Above
    limits.BLOCKED_SIMPLIFY_SYMBOLS symbols blocked's difference is kept as it is; the value is unchanged."""
    calls = []
    original = bounded.simplify  # SymPy's simplify step by step (expr/simplify_steps.py)
    monkeypatch.setattr(bounded, "simplify", lambda e, *a, **k: calls.append(e) or original(e, *a, **k))
    session = Session()
    session.run("v: R^3\nW: R^(2,3)\nb = blocked(dot(tanh(v) + transpose(W) @ (W @ v), sg(v - 1.5)), v)")
    assert calls == []
    point = "v = [0.5, -1.0, 2.0], W = [[1.0, 2.0, -1.0], [0.5, 1.5, 2.0]]"
    expected = [np.tanh(0.5) + 1.0 * (1.0 * 0.5 + 2.0 * -1.0 + -1.0 * 2.0) + 0.5 * (0.5 * 0.5 + 1.5 * -1.0 + 2.0 * 2.0)]
    assert float(session.eval(f"b at {point}")[0]) == pytest.approx(expected[0], rel=1e-12)


def test_an_exact_point_settles_the_same_on_a_slow_machine(monkeypatch):
    """An exact number is put over one denominator by `cancel`; that too is bounded by size, not by a clock."""
    original = sp.cancel

    def slow(expr, *args, **kwargs):
        time.sleep(0.6)  # longer than the half second the old budget allowed
        return original(expr, *args, **kwargs)

    monkeypatch.setattr(sp, "cancel", slow)
    assert _text("x: R^3\ngrad(log(exp(x[0]) / sum(exp(x))), x) at x = [1, 3, 3]") == [
        "[2*exp(2)/(1 + 2*exp(2)), -exp(2)/(1 + 2*exp(2)), -exp(2)/(1 + 2*exp(2))]"]
