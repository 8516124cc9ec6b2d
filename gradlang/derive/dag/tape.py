"""The backward pass as a teaching view: forward and backward tables, as TF and JAX run them.

The forward table numbers the distinct subexpressions v1, v2, ... in the order
they are computed, each as an operation on earlier values; the backward table
lists, in reverse order, the adjoint of each value (v̄_i = d output / d v_i)
as the sum of what each consumer sent it. A stop_gradient (and a
piecewise-constant function) is a cut edge: it appears in the forward table,
but sends nothing back, so everything only it reaches gets no adjoint.
The tables are data; render/tape.py prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.derive.dag.build import add, mul
from gradlang.derive.dag.canonical import canonical
from gradlang.derive.dag.reverse import backward
from gradlang.derive.dag.rules import is_cut, local_partials
from gradlang.expr import primitives
from gradlang.expr.graph import rebuilt

# Arithmetic and comparisons; the primitives go by their records' names.
OPERATION_NAMES = {
    "Add": "add", "Mul": "mul", "Pow": "pow", "StrictGreaterThan": ">", "StrictLessThan": "<",
    "GreaterThan": ">=", "LessThan": "<=", "Equality": "==", "Unequality": "!=",
}


@dataclass(frozen=True)
class ForwardRow:
    """v_index = operation(inputs): `local` writes it in terms of earlier values."""

    index: int
    expr: sp.Basic
    operation: str
    inputs: tuple
    local: sp.Basic
    stopped: bool


@dataclass(frozen=True)
class BackwardRow:
    """v̄_index: the sum of (consumer index, local contribution) pairs, and its full value."""

    index: int
    contributions: tuple
    local: sp.Expr
    adjoint: sp.Expr


@dataclass(frozen=True)
class Tape:
    forward: tuple
    backward: tuple
    output: int
    variables: tuple
    gradient: tuple

    def value_symbol(self, index: int) -> sp.Symbol:
        return value_symbol(index)


def value_symbol(index: int) -> sp.Symbol:
    return sp.Symbol(f"v{index}", real=True)


def adjoint_symbol(index: int) -> sp.Symbol:
    return sp.Symbol(f"v̄{index}", real=True)


def tape(expr: sp.Expr, symbols) -> Tape:
    """Forward and backward tables of the reverse-mode gradient of a scalar expression."""
    symbols = list(symbols)
    result = backward(expr, symbols)
    dag = result.dag
    numbers = _row_numbers(dag)
    forward = [_forward_row(dag, i, numbers) for i in range(len(dag)) if i in numbers]
    rows = [
        _backward_row(result, i, numbers, forward)
        for i in reversed(range(len(dag)))
        if i in numbers and result.contributions[i]
    ]
    variables = tuple((s, numbers.get(dag.index.get(s))) for s in symbols)
    gradient = tuple(canonical([result.adjoint_of(s) for s in symbols]))
    return Tape(tuple(forward), tuple(rows), numbers.get(dag.index[expr]), variables, gradient)  # None: a constant


def _row_numbers(dag) -> dict:
    """1-based row numbers for every node but the numbers, which stay inline."""
    numbers: dict = {}
    for i, node in enumerate(dag.nodes):
        if not node.is_Number:
            numbers[i] = len(numbers) + 1
    return numbers


def _local(dag, i, numbers):
    node = dag.nodes[i]
    if not dag.children[i]:
        return node
    return rebuilt(node, [value_symbol(numbers[k]) if k in numbers else dag.nodes[k] for k in dag.children[i]])


def _forward_row(dag, i, numbers) -> ForwardRow:
    node = dag.nodes[i]
    name = type(node).__name__
    record = primitives.by_class(type(node))
    operation = "input" if node.is_Symbol else record.name if record else OPERATION_NAMES.get(name, name.lower())
    inputs = tuple(numbers[k] for k in dag.children[i] if k in numbers)
    return ForwardRow(numbers[i], node, operation, inputs, _local(dag, i, numbers), is_cut(node))


def _backward_row(result, i, numbers, forward) -> BackwardRow:
    contributions = []
    for parent, _ in result.contributions[i]:
        if parent is None:
            contributions.append((None, sp.S.One))
            continue
        contributions.append((numbers[parent], _local_contribution(result, parent, i, numbers, forward)))
    local = add(*[c for _, c in contributions])
    return BackwardRow(numbers[i], tuple(contributions), local, result.adjoints[i])


def _local_contribution(result, parent, child, numbers, forward):
    """v̄_parent * d v_parent / d v_child, written with value symbols."""
    dag = result.dag
    row = forward[numbers[parent] - 1]
    kids = dag.children[parent]
    wanted = [result.live[k] for k in kids]
    partials = local_partials(row.local, wanted)
    partial = add(*[p for k, p in zip(kids, partials) if k == child])
    partial = partial.xreplace({row.local: value_symbol(numbers[parent])})
    return mul(adjoint_symbol(numbers[parent]), partial)
