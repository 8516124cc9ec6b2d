"""The root of every derivation is what diff returns (issue 4, agreement)."""

from __future__ import annotations

import sympy as sp
from hypothesis import HealthCheck, given, settings

from gradlang.derive.derivatives import derivative
from gradlang.explain import derivation
from gradlang.explain.scalar.steps import walk

from explain_strategies import X, Z, expressions

_SETTINGS = settings(max_examples=int(__import__("os").environ.get("EXPLAIN_EXAMPLES", 80)), deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])


def _agrees(expr, symbol):
    step = derivation(expr, symbol)
    assert step.result == derivative(expr, symbol), (expr, step.result)
    return step


@_SETTINGS
@given(expressions(stops=False))
def test_root_equals_diff_without_stops(expr):
    _agrees(expr, X)


@_SETTINGS
@given(expressions(stops=True))
def test_root_equals_diff_with_stops(expr):
    _agrees(expr, X)
    _agrees(expr, Z)


@_SETTINGS
@given(expressions(stops=True))
def test_every_step_agrees_with_diff(expr):
    """Not only the root: each step's result is its own expression's derivative."""
    for step in walk(derivation(expr, X)):
        assert step.result == derivative(step.expr, X), step


@_SETTINGS
@given(expressions(stops=True))
def test_second_derivative_agrees(expr):
    first = derivative(expr, X)
    assert derivation(first, X).result == derivative(expr, X, 2)
