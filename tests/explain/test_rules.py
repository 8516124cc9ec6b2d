"""Each rule is chosen where it should be, and renders in every format."""

from __future__ import annotations

import json

import pytest
import sympy as sp
from rich.console import Console

from gradlang.explain import derivation, explain
from gradlang.render import to_json, to_latex, to_plain, to_rich
from gradlang.explain.scalar.steps import walk
from gradlang.expr.functions import Maximum, Minimum, Relu, Where
from gradlang.expr.primitives.elementwise import Sigmoid, Softplus
from gradlang.expr.stopgrad import StopGradient

from explain_helpers import X, diff_request

Y = sp.Symbol("y", real=True)

RULES = [
    (sp.Integer(3), "constant", ""),
    (Y, "constant", ""),
    (X, "variable", ""),
    (X + sp.sin(X), "sum", ""),
    (3 * X**2, "constant multiple", ""),
    (X * sp.sin(X), "product", ""),
    ((X + 1) / (X**2 + 1), "quotient", ""),
    (X**3, "power", ""),
    ((X + 1) ** 3, "chain", "power"),
    (X**X, "general power", ""),
    (2**X, "exponential", ""),
    (sp.sqrt(X), "sqrt", ""),
    (sp.exp(X), "exp", ""),
    (sp.exp(X**2), "chain", "exp"),
    (sp.log(X), "log", ""),
    (sp.Abs(X), "abs", ""),
    (Relu(X), "relu", ""),
    (Sigmoid(X), "sigmoid", ""),
    (Softplus(X), "softplus", ""),
    (Maximum(X, Y, 0), "max", ""),
    (Minimum(X, X**2), "min", ""),
    (Where(X > 0, X**2, X), "where", ""),
    (StopGradient(X), "stop_gradient", ""),
    (sp.sign(X) * 0 + sp.floor(X), "piecewise constant", ""),
    (sp.Piecewise((X**2, X > 0), (X, True)), "sympy", ""),
] + [(f(X), f.__name__, "") for f in (sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc, sp.asin, sp.acos,
                                     sp.atan, sp.acot, sp.sinh, sp.cosh, sp.tanh, sp.coth, sp.asinh,
                                     sp.acosh, sp.atanh)]


@pytest.mark.parametrize("expr, rule, outer", RULES, ids=[f"{r}-{o}-{e}" for e, r, o in RULES])
def test_rule_at_the_root(expr, rule, outer):
    step = derivation(expr, X)
    assert (step.rule, step.outer) == (rule, outer)


@pytest.mark.parametrize("expr, rule, outer", RULES, ids=[f"{r}-{o}-{e}" for e, r, o in RULES])
def test_every_rule_renders_in_every_format(expr, rule, outer):
    explanation = explain(diff_request(expr))
    name = f"{rule} ({outer})" if outer else rule
    assert f"[{name}]" in to_plain(explanation)
    assert name.replace("_", r"\_") in to_latex(explanation)
    assert to_latex(explanation).startswith("\\begin{align*}")
    console = Console(width=100, color_system=None, record=True)
    console.print(to_rich(explanation))
    assert name in console.export_text()
    data = json.loads(json.dumps(to_json(explanation)))
    assert data["substeps"][0]["rule"] == rule
    assert set(data["substeps"][0]) >= {"rule", "expr", "result", "substeps"}


def test_stop_step_names_what_it_blocks():
    stop = [s for s in walk(derivation(X**2 * StopGradient(X**3), X)) if s.rule == "stop_gradient"][0]
    assert stop.blocked == 3 * X**2
    assert "x^3 is treated as a constant" in str(stop.note)


def test_unknown_form_is_honest():
    step = derivation(sp.Piecewise((X**2, X > 0), (X, True)), X)
    assert "SymPy's differentiation" in str(step.note) and step.substeps == ()


def test_where_does_not_differentiate_the_condition():
    step = derivation(Where(X > 0, X**2, X), X)
    assert "x > 0 is not differentiated" in str(step.note)
    assert [s.expr for s in step.substeps] == [X**2, X]


def test_max_states_the_tie_rule():
    assert "share its gradient equally" in str(derivation(Maximum(X, 0), X).note)
