"""explain(request): components, grouping, depth, summary and what the stops blocked."""

from __future__ import annotations

import pytest
import sympy as sp

from gradlang.derive import derivatives as derive
from gradlang.derive.derivatives import DerivativeRequest
from gradlang.core.session import Session
from gradlang.explain import explain
from gradlang.render import to_plain
from gradlang.explain.layout import layout
from gradlang.expr.stopgrad import StopGradient

from explain_helpers import VECTOR, X, XS, diff_request, grad_request, log_stable_softmax_0


def test_x_times_stopped_x():
    explanation = explain(diff_request(X * StopGradient(X)))
    assert explanation.blocked == X == derive.blocked(X * StopGradient(X), X, sp.simplify)
    assert [e.verdict for e in explanation.ledger] == ["blocking"]
    assert explanation.steps[0].result == StopGradient(X)
    assert "one stop, blocking" in explanation.summary
    assert "   blocking: removes r₁ = x" in to_plain(explanation).splitlines()


def test_stable_softmax_blocks_nothing():
    explanation = explain(grad_request(log_stable_softmax_0()))
    assert [e.verdict for e in explanation.ledger] == ["neutral"]
    assert "let  m = sg(max(x))" in to_plain(explanation)
    assert explanation.vector.identity == "log-softmax identity"


def test_every_step_asked_for_adds_the_component_derivations():
    """At depth None (all) the vector derivation comes first, then every component's."""
    explanation = explain(grad_request(log_stable_softmax_0()), depth=None)
    assert explanation.vector is not None
    assert explanation.components == (("∂/∂x₀",), ("∂/∂x₁",), ("∂/∂x₂",))
    assert [s.result for s in explanation.steps] == list(explanation.request.result)


def test_summary_names_the_rules_in_order():
    explanation = explain(diff_request(X**2 * StopGradient(X)))
    assert explanation.summary == "product rule, then the power rule; one stop, blocking"


def test_higher_order_diff_chains_derivations():
    expr = X**3 * StopGradient(X)
    explanation = explain(diff_request(expr, (X, 2)))
    assert explanation.components == (("d/dx",), ("d²/dx²",))
    assert explanation.steps[-1].result == derive.derivative(expr, X, 2)


def test_hessian_components():
    expr = XS[0] ** 2 * XS[1]
    wrt = sp.ImmutableDenseNDimArray(XS[:2], (2,))
    request = DerivativeRequest("hessian", expr, wrt, (), derive.hessian(expr, wrt), None)
    explanation = explain(request)
    seconds = [s.result for s, labels in zip(explanation.steps, explanation.components) if "²" in labels[0]]
    assert seconds == list(request.result)


def test_identical_derivations_are_grouped():
    expr = sp.ImmutableDenseNDimArray([sp.exp(X), sp.exp(X)], (2,))
    request = DerivativeRequest("jacobian", expr, X, (), derive.jacobian(expr, X), None)
    explanation = explain(request)
    assert explanation.components == (("[0] d/dx", "[1] d/dx"),)


def test_depth_limits_what_is_shown():
    request = diff_request(log_stable_softmax_0(), (XS[0], 1))  # diff: derived component by component
    shallow = to_plain(explain(request, depth=1))
    assert "1.1.1" not in shallow and "below the depth limit" in shallow
    assert "1.1.1" in to_plain(explain(request))


def test_repeated_sub_derivation_is_referred_to():
    [(_, root)] = layout(explain(diff_request(sp.exp(X**2) * sp.sin(sp.exp(X**2)))))
    assert "as derived in step" in to_plain(explain(diff_request(sp.exp(X**2) * sp.sin(sp.exp(X**2)))))
    assert root.children


def test_trivial_steps_are_folded():
    text = to_plain(explain(diff_request(3 * X)))
    assert "[variable]" not in text and "[constant]" not in text


def test_zero_component_says_why():
    explanation = explain(grad_request(XS[0] * 2, VECTOR))
    assert "x[1] does not appear" in to_plain(explanation)


@pytest.mark.parametrize("statement", ["explain diff(x^2, x, 0)",
                                       "v: R^3\nexplain where(x >= diff(v[0], v[0], 0), x, diff(v[0], v[0], 0))"])
def test_a_derivative_of_order_zero_is_explained_as_nothing_to_differentiate(statement):
    # diff(e, x, 0) is e; explain sliced its steps with a step of 0 (an InternalError: grammar fuzzer, seed 406)
    text = to_plain(Session().run(statement)[-1])
    assert "nothing to differentiate" in text and "✓ equals diff" in text
