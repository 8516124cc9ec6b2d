"""The DAG engine agrees with derive.py (the tree path) on random expressions with stops.

Oracle: the tree path (derive.tree_gradient: stops frozen, sympy.diff per
variable), whatever derive.grad itself chooses, compared numerically through
gradlang.numeric at points on a small grid (so max/min ties, relu and abs
kinks and where boundaries are hit), and structurally where the rebuilt
canonical form matches (counted, not required: see docs/dag.md).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gradlang.derive import derivatives as derive
from gradlang.derive import dag
from gradlang.expr.functions import Maximum, Minimum, Relu, Round, Where
from gradlang.expr.numeric import evaluate
from gradlang.expr.stopgrad import StopGradient

X, Y, Z = sp.symbols("x y z", real=True)
VARIABLES = sp.ImmutableDenseNDimArray([X, Y, Z])
GRID = [-1.0, 0.0, 0.5, 1.0, 2.0]

UNARY = [
    sp.sin, sp.cos, sp.tanh, sp.atan, sp.Abs, Relu, StopGradient,
    lambda a: sp.exp(sp.tanh(a)), lambda a: sp.log(1 + a**2), lambda a: sp.sqrt(1 + a**2),
    lambda a: a**2, lambda a: a**3, lambda a: -a, lambda a: Round(a) * a, lambda a: sp.sign(a) + a,
]
BINARY = [
    lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / (1 + b**2),
    lambda a, b: Maximum(a, b), lambda a, b: Minimum(a, b, 0), lambda a, b: Maximum(a, b, a * b),
    lambda a, b: Where(a > b, a * b, sp.sin(b)), lambda a, b: a * StopGradient(b),
]

leaves = st.sampled_from([X, Y, Z, sp.Integer(2), sp.Rational(1, 2)])


def _extend(children):
    unary = st.builds(lambda f, a: f(a), st.sampled_from(UNARY), children)
    binary = st.builds(lambda f, a, b: f(a, b), st.sampled_from(BINARY), children, children)
    return unary | binary


expressions = st.recursive(leaves, _extend, max_leaves=12)
points = st.lists(st.sampled_from(GRID), min_size=3, max_size=3)



def at(values, point) -> np.ndarray:
    return np.array([float(v) for v in evaluate(list(values), [X, Y, Z], point)])


# the same examples on every run (CI is reproducible); the long fuzz runs in benchmarks/ do the exploring
REPRODUCIBLE = settings(deadline=None, derandomize=True, database=None)


def assert_agree(ours, theirs, point) -> None:
    # derive.py's second derivatives of nested sign() can still contain DiracDelta
    # (an oracle bug, reported); such examples say nothing about this engine.
    assume(not any(t.has(sp.DiracDelta) for t in theirs))
    np.testing.assert_allclose(at(ours, point), at(theirs, point), rtol=1e-9, atol=1e-12)


@settings(REPRODUCIBLE, max_examples=100)
@given(expressions, points)
def test_grad_agrees_with_tree_path(expr, point):
    ours, theirs = dag.gradient_list(expr, VARIABLES), derive.tree_gradient(expr, VARIABLES)
    assert_agree(ours, theirs, point)


@settings(REPRODUCIBLE, max_examples=40)
@given(st.lists(expressions, min_size=2, max_size=3), points)
def test_jacobian_agrees_with_tree_path(exprs, point):
    ours = [d for row in dag.jacobian_rows(exprs, VARIABLES) for d in row]
    theirs = [d for e in exprs for d in derive.tree_gradient(e, VARIABLES)]
    assert_agree(ours, theirs, point)


@settings(REPRODUCIBLE, max_examples=40)
@given(st.lists(expressions, min_size=2, max_size=4), points)
def test_forward_mode_agrees_with_tree_path(exprs, point):
    """Fewer inputs than outputs: one forward pass gives the column."""
    ours = [row[0] for row in dag.jacobian_rows(exprs, [Y])]
    theirs = [derive.tree_derivative(e, Y) for e in exprs]
    assert_agree(ours, theirs, point)


@settings(REPRODUCIBLE, max_examples=40)
@given(st.recursive(leaves, _extend, max_leaves=6), points)
def test_hessian_agrees_with_tree_path(expr, point):
    ours = [d for row in dag.hessian_rows(expr, VARIABLES) for d in row]
    theirs = [d for g in derive.tree_gradient(expr, VARIABLES) for d in derive.tree_gradient(g, VARIABLES)]
    assert_agree(ours, theirs, point)


@settings(REPRODUCIBLE, max_examples=30)
@given(st.recursive(leaves, _extend, max_leaves=6), points)
def test_second_derivative_agrees(expr, point):
    twice = derive.tree_derivative(derive.tree_derivative(expr, X), X)
    assert_agree([dag.derivative(expr, X, 2)], [twice], point)


SAME_AS_TREE = [
    X * Y * Z,
    sp.sin(X**2),
    X * StopGradient(X),
    sp.exp(X - StopGradient(Maximum(X, Y))) / (sp.exp(X) + sp.exp(Y)),
    Relu(X * Y),
    Where(X > 0, X**2, X),
    sp.Abs(X) * Y,
    sp.tanh(X * Y + Z),
    X**Y,
    sp.atan(X) + sp.asin(Y),
    Maximum(X, Y, 0) * Z,
]


@pytest.mark.parametrize("expr", SAME_AS_TREE, ids=str)
def test_small_results_read_as_the_tree_path(expr):
    assert dag.gradient_list(expr, VARIABLES) == derive.tree_gradient(expr, VARIABLES)


@pytest.mark.parametrize("expr, expected", [
    (X * StopGradient(X), StopGradient(X)),
    (StopGradient(X * Y) * X, StopGradient(X * Y)),
    (sp.sign(X) * X + sp.floor(X), sp.sign(X)),
])
def test_stops_are_cut_edges(expr, expected):
    assert dag.derivative(expr, X) == expected


def test_second_derivative_through_a_stop_is_zero():
    assert dag.derivative(X * StopGradient(X), X, 2) == 0


def test_tie_shares_follow_section_5():
    g = dag.gradient_list(Maximum(X, Y, Z), VARIABLES)
    assert [d.subs({X: 1, Y: 3, Z: 3}) for d in g] == [0, sp.Rational(1, 2), sp.Rational(1, 2)]
    assert dag.derivative(Maximum(X, 0), X).subs(X, 0) == sp.Rational(1, 2)
