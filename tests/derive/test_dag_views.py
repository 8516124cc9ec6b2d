"""DAG sizes on the issue-6 families, deep expressions, the tape and the named subexpressions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from gradlang.derive import dag
from gradlang.expr.cse import lambdify_cse, named_subexpressions
from gradlang.derive.dag.tape import tape
from gradlang.render import to_json, to_latex, to_plain
from gradlang.expr.numeric import evaluate
from gradlang.expr.stopgrad import StopGradient

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import families  # noqa: E402

X, Y = sp.symbols("x y", real=True)

FAMILIES = [
    families.nested_sin(64), families.product_of_sines(64), families.mlp(1, 16, 16),
    families.mlp(2, 2, 16), families.softmax_cross_entropy(64), families.iterated_map(16),
    families.iterated_map(32),
]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f"{f.name} {f.size}")
def test_gradient_dag_is_at_most_five_times_the_function(family):
    gradient = dag.gradient_list(family.expr, family.variables)
    assert dag.dag_size(gradient) <= 5 * dag.dag_size(family.expr)
    assert dag.dag_edges(gradient) <= 5 * dag.dag_edges(family.expr)


def test_dag_size_counts_distinct_nodes():
    shared = sp.sin(X * Y)
    assert dag.dag_size(shared + shared**2) == dag.dag_size([shared, shared**2]) + 1


def test_deep_expression_needs_no_recursion():
    expr = X
    # Deeper than the engine could recurse through comfortably, yet shallow enough for
    # SymPy's own (recursive) assumption queries under any recursion limit a test run leaves.
    for _ in range(400):  # unevaluated: SymPy's sin.eval is quadratic along a chain
        expr = sp.sin(expr, evaluate=False)
    (g,) = dag.reverse_grad(expr, [X])
    assert dag.dag_size(g) <= 5 * dag.dag_size(expr)


def test_iterated_map_gradient_is_right():
    family = families.iterated_map(3)
    x, y = family.variables
    a1 = x**2 + x * y
    a2 = a1**2 + a1 * y
    a3 = a2**2 + a2 * y
    expected = [sp.diff(a3, x), sp.diff(a3, y)]
    point = [0.3, -0.7]
    ours = evaluate(dag.gradient_list(family.expr, family.variables), [x, y], point)
    np.testing.assert_allclose(ours, evaluate(expected, [x, y], point))


def test_tape_marks_the_stop_as_a_cut_edge():
    t = tape(sp.sin(X * Y) + X * StopGradient(X**2), [X, Y])
    stopped = [row for row in t.forward if row.stopped and row.inputs]
    assert [row.operation for row in stopped] == ["stop_gradient"]
    with_adjoint = {row.index for row in t.backward}
    assert stopped[0].index not in with_adjoint
    assert stopped[0].inputs[0] not in with_adjoint  # x**2 is reached only through the stop
    assert t.gradient == (Y * sp.cos(X * Y) + StopGradient(X**2), X * sp.cos(X * Y))


def test_tape_renders_in_every_format():
    t = tape(sp.sin(X * Y) + X * StopGradient(X**2), [X, Y])
    assert "cut" in to_plain(t) and "sg(v2)" in to_plain(t)
    assert r"\operatorname{sg}" in to_latex(t)
    data = json.loads(json.dumps(to_json(t)))
    assert [row["operation"] for row in data["forward"]][-1] == "add"


def test_named_subexpressions_keep_the_printout_small():
    family = families.iterated_map(16)
    gradient = dag.gradient_list(family.expr, family.variables)
    names, reduced = named_subexpressions(gradient, min_size=4)
    printed = sum(len(str(e)) for _, e in names) + sum(len(str(e)) for e in reduced)
    assert names and printed < 20 * dag.dag_size(gradient)
    point = {X: 0.5, Y: 0.5}  # a fixed point of the map: values stay O(1)
    values = {}
    for name, expr in names:
        values[name] = float(expr.xreplace(values).xreplace(point))
    ours = np.array([float(e.xreplace(values).xreplace(point)) for e in reduced])
    np.testing.assert_allclose(ours, np.array(evaluate(gradient, [X, Y], [0.5, 0.5]), dtype=float), rtol=1e-9)


def test_lambdify_with_dag_cse():
    family = families.product_of_sines(8)
    gradient = dag.gradient_list(family.expr, family.variables)
    function = sp.lambdify(family.variables, gradient, cse=lambdify_cse)
    point = np.linspace(0.1, 0.8, 8)
    np.testing.assert_allclose(function(*point), evaluate(gradient, list(family.variables), list(point)))


@pytest.mark.parametrize("family", [families.iterated_map(24), families.mlp(2, 2, 16), families.softmax_cross_entropy(64)],
                         ids=lambda f: f"{f.name} {f.size}")
def test_the_language_takes_gradients_on_the_dag(family):
    """derive.grad (what `grad` runs) stays as small as the DAG engine's result: one pass, not one tree per variable."""
    from gradlang.derive import derivatives

    wrt = sp.ImmutableDenseNDimArray(list(family.variables))
    gradient = list(derivatives.grad(family.expr, wrt))
    assert dag.dag_size(gradient) <= 5 * dag.dag_size(family.expr)
    point = {v: 0.1 + 0.01 * k for k, v in enumerate(list(family.variables) + list(family.data))}
    symbols = list(point)
    ours = evaluate(gradient, symbols, list(point.values()))
    engine = evaluate(dag.gradient_list(family.expr, family.variables), symbols, list(point.values()))
    np.testing.assert_allclose(np.array(ours, dtype=float), np.array(engine, dtype=float), rtol=1e-12)


def test_jacobian_with_fewer_inputs_uses_forward_mode_and_agrees():
    from gradlang.derive import derivatives

    a = families.iterated_map(20).expr
    outputs = sp.ImmutableDenseNDimArray([a, a * X, sp.sin(a), a + Y])
    column = derivatives.jacobian(outputs, X)
    assert dag.dag_size(list(column)) <= 5 * dag.dag_size(list(outputs))
    rows = derivatives.jacobian(outputs, sp.ImmutableDenseNDimArray([X, Y]))
    at = evaluate(list(column) + list(rows[:, 0]), [X, Y], [0.3, 0.2])
    np.testing.assert_allclose(at[:4], at[4:], rtol=1e-12)


def test_hessian_forward_over_reverse_agrees_with_the_tree_path():
    from gradlang.derive import derivatives

    xs = sp.symbols("h0:12", real=True)
    f = sp.log(sum(sp.exp(x) for x in xs)) + sp.tanh(sum(x * x for x in xs)) * StopGradient(xs[0])
    ours = derivatives.hessian(f, sp.ImmutableDenseNDimArray(xs))
    tree = [d for g in derivatives.tree_gradient(f, xs) for d in derivatives.tree_gradient(g, xs)]
    point = [0.1 * (k - 5) for k in range(12)]
    np.testing.assert_allclose(np.array(evaluate(list(ours), list(xs), point), dtype=float),
                               np.array(evaluate(tree, list(xs), point), dtype=float), rtol=1e-10, atol=1e-14)
