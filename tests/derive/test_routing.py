"""Which path a derivative takes through the language, and the fast constructions under it (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from gradlang import Session
from gradlang.derive import dag, derivatives
from gradlang.derive.dag.api import hessian_rows
from gradlang.expr.construct import LARGE_ARGUMENT, apply
from gradlang.expr.functions import Maximum, Where
from gradlang.expr.graph import build_dag
from gradlang.expr.numeric import evaluate
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.values import real_symbols

X, Y, Z = sp.symbols("x y z", real=True)


def test_a_gradient_by_several_variables_is_one_backward_pass_at_any_size(monkeypatch):
    """No tree path for grad by two variables, however small: sympy.diff is never called."""
    monkeypatch.setattr(derivatives, "tree_gradient", lambda *a: pytest.fail("tree path taken"))
    shared = sp.exp(X * Y)
    gradient = derivatives.grad(shared * sp.sin(shared), sp.ImmutableDenseNDimArray([X, Y]))
    point = [0.3, -0.7]
    expected = [sp.diff(shared * sp.sin(shared), v).subs(dict(zip((X, Y), point))) for v in (X, Y)]
    np.testing.assert_allclose(evaluate(list(gradient), [X, Y], point), [float(e) for e in expected], rtol=1e-13)


def test_small_results_read_as_sympy_writes_them():
    assert list(derivatives.grad(X * Y, sp.ImmutableDenseNDimArray([X, Y]))) == [Y, X]
    assert derivatives.hessian(X**2 * Y, sp.ImmutableDenseNDimArray([X, Y])) == sp.ImmutableMatrix([[2 * Y, 2 * X], [2 * X, 0]])


def test_a_scalar_derivative_by_one_variable_keeps_the_tree_form():
    expr = (sp.exp(X) + 1) ** (sp.exp(X) + 1)  # shared, but small: sympy.diff's form
    assert derivatives.diff(expr, [(X, 1)]) == sp.diff(expr, X)


def test_readable_derivatives_take_the_tree_path():
    expr = sp.exp(X * Y) * sp.sin(X + Y)
    with derivatives.readable():
        assert list(derivatives.grad(expr, sp.ImmutableDenseNDimArray([X, Y]))) == [sp.diff(expr, X), sp.diff(expr, Y)]


@pytest.mark.parametrize("n", [2, 5, 9])
def test_hessian_is_symmetric_and_right_with_stops_and_wheres(n):
    xs = sp.symbols(f"q0:{n}", real=True)
    m = StopGradient(Maximum(*xs))
    f = sp.log(sum(sp.exp(x - m) for x in xs)) + Where(xs[0] > 0, xs[0] ** 3 * xs[-1], sp.sin(xs[0] * xs[-1]))
    rows = hessian_rows(f, xs)
    assert all(rows[i][j] == rows[j][i] for i in range(n) for j in range(n))
    tree = [d for g in derivatives.tree_gradient(f, xs) for d in derivatives.tree_gradient(g, xs)]
    for point in ([0.3 * (k - 1) for k in range(n)], [-0.2 - 0.1 * k for k in range(n)]):
        np.testing.assert_allclose(np.array(evaluate([e for r in rows for e in r], list(xs), point), dtype=float),
                                   np.array(evaluate(tree, list(xs), point), dtype=float), rtol=1e-10, atol=1e-14)


def test_real_symbols_are_sympys_own():
    fast = real_symbols(["w[0, 1]", "x"])
    assert fast == [sp.Symbol("w[0, 1]", real=True), X]
    assert [hash(s) for s in fast] == [hash(sp.Symbol("w[0, 1]", real=True)), hash(X)]
    assert fast[1].is_real and fast[1].is_positive is None and fast[1].assumptions0 == X.assumptions0 and fast[1] - X == 0


def test_a_declared_matrix_is_made_of_real_symbols():
    session = Session()
    session.run("W: R^(3, 2)")
    assert session.eval("W[2, 1] - W[2, 1]") == 0
    assert session.eval("diff(W[0, 1]^2, W[0, 1])") == 2 * sp.Symbol("W[0, 1]", real=True)


def test_small_function_applications_are_evaluated_large_ones_built_as_they_stand():
    assert apply(sp.tanh, -X) == -sp.tanh(X)
    assert apply(sp.sin, sp.Integer(0)) == 0
    ws = real_symbols(f"w[{i}]" for i in range(LARGE_ARGUMENT))
    big = -sp.Add(*[w * sp.Float(0.5) for w in ws])
    built = apply(sp.tanh, big)
    assert isinstance(built, sp.tanh) and built.args[0] == big


def test_build_dag_merges_equal_copies_and_shares_by_identity():
    a, b = sp.sin(X * Y), sp.sin(X * Y)  # equal, maybe not the same object
    c = sp.Add(sp.Float(0.25) * X, sp.Mul(sp.Float(0.25), X, evaluate=False) + Z, evaluate=False)
    graph = build_dag([a + Z, b * Z, c])
    assert len([n for n in graph.nodes if n == sp.sin(X * Y)]) == 1
    assert len(set(graph.nodes)) == len(graph.nodes)
    for node, kids in zip(graph.nodes, graph.children):
        assert tuple(graph.nodes[k] for k in kids) == node.args
    assert dag.dag_size([a, b]) == dag.dag_size(a)
