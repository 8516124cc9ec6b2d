"""explain[unfold]: the builtins derived from their definitions, on request (issue 14).

Without the option a builtin is derived at the level the user wrote it
(sigmoid' = σ(1 − σ), ∇ logsumexp = softmax); with it, each builtin is
replaced by its definition, listed as a `definition:` line, and derived rule
by rule, and what that derivation gives still equals the engine's derivative
of what the user wrote (the closing check, and numbers at random points here).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from gradlang.core.session import Session
from gradlang.errors import SyntaxError
from gradlang.expr.primitives.elementwise import Sigmoid
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.values import elements, to_symbolic
from gradlang.explain.scalar.unfold import DEFINITIONS, builtins_in, unfolded
from gradlang.render import to_json, to_latex, to_plain

ROOT = Path(__file__).resolve().parents[2]

# (declarations, derivative call, builtin whose definition must be listed)
CASES = [
    ("z: R", "diff(sigmoid(z), z)", "sigmoid(u) = 1 / (1 + exp(-u))"),
    ("z: R", "diff(softplus(2*z), z)", "softplus(u) = log(1 + exp(u))"),
    ("z: R", "diff(log1p(z^2) * expm1(z), z)", "expm1(u) = exp(u) - 1"),
    ("x: R^3", "grad(logsumexp(x), x)", "logsumexp(v) = log(sum(exp(v)))"),
    ("x: R^3", "grad(log(softmax(x)[0]), x)", "softmax(v)[k] = exp(v[k]) / sum(exp(v))"),
    ("x: R^3", "jacobian(softmax(x), x)", "softmax(v)[k] = exp(v[k]) / sum(exp(v))"),
    ("x: R^3", "grad(norm(x) * sg(x[0]), x)", "norm(v) = sqrt(sum(v^2))"),
    ("x: R^2", "grad(sigmoid(x[0] * sg(x[1])) + softplus(x[1]), x)", "sigmoid(u) = 1 / (1 + exp(-u))"),
]


def _explained(setup: str, statement: str, session=None):
    [explanation] = (session or Session()).run(f"{setup}\n{statement}")[-1].steps
    return explanation


def _numbers(value, point) -> list:
    return [complex(sp.N(unstopped(e).xreplace(point), 30)) for e in elements(to_symbolic(value))]


@pytest.mark.parametrize("setup, call, definition", CASES, ids=[c[1] for c in CASES])
def test_an_unfolded_derivation_lists_the_definitions_and_still_equals_the_engine(setup, call, definition):
    explanation = _explained(setup, f"explain[unfold] {call}")
    text = to_plain(explanation)
    assert f"definition: {definition}" in text
    assert explanation.vector is None and explanation.steps
    assert not builtins_in(to_symbolic(explanation.request.expr).as_immutable()
                           if hasattr(to_symbolic(explanation.request.expr), "as_immutable")
                           else to_symbolic(explanation.request.expr))
    for step in explanation.steps:  # no rule of a builtin is used: the derivation is of the definitions
        assert not builtins_in(step.expr) and not builtins_in(step.result)
    assert explanation.check is not None and explanation.check.agrees, text
    engine = explanation.request.result
    rng = random.Random(call)
    symbols = sorted(set().union(*(sp.sympify(e).free_symbols for e in elements(to_symbolic(engine)))), key=str)
    for _ in range(3):
        point = {s: sp.Float(rng.uniform(-2, 2), 30) for s in symbols}
        for a, b in zip(_numbers(explanation.derived, point), _numbers(engine, point)):
            assert abs(a - b) <= 1e-20 * (1 + abs(b))


def test_without_the_option_the_builtin_keeps_its_own_rule():
    folded = to_plain(_explained("z: R", "explain diff(sigmoid(z), z)"))
    unfolded_text = to_plain(_explained("z: R", "explain[unfold] diff(sigmoid(z), z)"))
    assert "[sigmoid]" in folded and "definition:" not in folded
    assert "[sigmoid]" not in unfolded_text and "[chain (power)]" in unfolded_text


def test_unfold_combines_with_depth_in_either_order_and_with_a_selection():
    deep = _explained("x: R^3", "explain[unfold, depth=all] jacobian(softmax(x), x)[0, 1]")
    shallow = _explained("x: R^3", "explain[depth=1, unfold] jacobian(softmax(x), x)[0, 1]")
    assert deep.depth is None and shallow.depth == 1
    assert len(to_plain(deep).splitlines()) > len(to_plain(shallow).splitlines())
    assert to_plain(deep).startswith("jacobian(softmax(x), x)[0, 1]:")  # the call as written; the definition unfolds and to_plain(deep).count("\n1. ") == 1
    assert deep.check.agrees and shallow.check.agrees


def test_nothing_to_unfold_changes_nothing():
    setup = "x: R^2"
    assert to_plain(_explained(setup, "explain[unfold] grad(x[0] * sin(x[1]), x)")) == to_plain(
        _explained(setup, "explain grad(x[0] * sin(x[1]), x)"))


def test_the_session_flag_and_the_cli_unfold_every_explain():
    text = to_plain(_explained("z: R", "explain diff(sigmoid(z), z)", Session(explain_unfold=True)))
    assert "definition: sigmoid(u) = 1 / (1 + exp(-u))" in text
    output = subprocess.run([sys.executable, "-m", "gradlang", "--plain", "--explain-unfold", "-e",
                             "explain diff(softplus(z), z)"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "# definition: softplus(u) = log(1 + exp(u))" in output


def test_unfold_in_every_format_and_in_backward():
    explanation = _explained("z: R", "explain[unfold] diff(sigmoid(z), z)")
    assert to_json(explanation)["definitions"] == ["sigmoid(u) = 1 / (1 + exp(-u))"]
    assert r"\texttt{sigmoid(u) = 1 / (1 + exp(-u))}" in to_latex(explanation)
    view = _explained("x: R^3", "explain[unfold] backward(norm(x), x)")
    assert "definition: norm(v) = sqrt(sum(v^2))" in to_plain(view) and "sqrt" in to_plain(view)
    assert not builtins_in(view.expr)


def test_unfold_twice_is_an_error_with_its_place():
    with pytest.raises(SyntaxError) as caught:
        Session().run("explain[unfold, unfold] diff(x^2, x)")
    assert "given twice" in caught.value.message and caught.value.column == 17


def test_a_variable_called_unfold_still_works_outside_the_option_list():
    session = Session()
    session.run("unfold = 3")
    assert session.eval("unfold + 1") == 4
    assert _explained("x: R", "explain diff(x * unfold, x)").check.agrees


def test_every_definition_is_its_builtin():
    """Each unfolded builtin has the builtin's value at random points (the definitions are right)."""
    x = [sp.Symbol(f"x[{i}]", real=True) for i in range(3)]
    rng = random.Random(0)
    for cls in DEFINITIONS:
        args = (sp.Integer(1), *x) if cls.__name__ == "Softmax" else tuple(x) if cls.nargs != 1 and cls.__name__ != "Sigmoid" else (x[0],)
        if getattr(cls, "nargs", None) == sp.FiniteSet(1):
            args = (x[0],)
        builtin = cls(*args)
        point = {s: sp.Float(rng.uniform(-2, 2), 30) for s in x}
        assert abs(sp.N(builtin.xreplace(point), 30) - sp.N(unfolded(builtin).xreplace(point), 30)) < 1e-25, cls
    assert unfolded(Sigmoid(Sigmoid(x[0]))) == 1 / (1 + sp.exp(-1 / (1 + sp.exp(-x[0]))))
