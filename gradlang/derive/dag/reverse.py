"""Reverse accumulation over the DAG: each distinct subexpression visited once.

The backward pass walks the nodes parents-first, sums the contributions that
reached each node into its adjoint, and sends adjoint * partial to each child
that depends on the variables (through uncut edges: stop_gradient and the
piecewise-constant functions pass nothing on). The cost is a small constant
times the size of the function's DAG, whatever its size as a tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.derive.dag.build import ONE, ZERO, add, mul
from gradlang.expr.graph import Dag, build_dag, depends_on
from gradlang.derive.dag.rules import is_cut, local_partials


@dataclass(frozen=True)
class Backward:
    """The result of one backward pass.

    contributions[i] lists (parent index, adjoint(parent) * partial) for node i;
    adjoints[i] is their sum (ZERO for a node the output does not reach
    through uncut edges); live[i] says whether node i depends on the variables.
    """

    dag: Dag
    live: tuple
    contributions: tuple
    adjoints: tuple

    def adjoint_of(self, node) -> sp.Expr:
        i = self.dag.index.get(node)
        return ZERO if i is None else self.adjoints[i]


def backward(expr: sp.Expr, symbols, dag: Dag | None = None) -> Backward:
    """Run the backward pass of a scalar expression for the given variables."""
    dag = dag or build_dag(expr)
    live = depends_on(dag, symbols, is_cut)
    root = dag.index[expr]
    contributions: list[list] = [[] for _ in dag.nodes]
    contributions[root].append((None, ONE))
    adjoints = [ZERO] * len(dag.nodes)
    for i in range(root, -1, -1):
        if not live[i] or not contributions[i]:
            continue
        adjoint = add(*[c for _, c in contributions[i]])
        adjoints[i] = adjoint
        _send(dag, live, i, adjoint, contributions)
    return Backward(dag, tuple(live), tuple(tuple(c) for c in contributions), tuple(adjoints))


def _send(dag: Dag, live, i: int, adjoint, contributions) -> None:
    """Pass adjoint * partial from node i to each of its live children."""
    node, kids = dag.nodes[i], dag.children[i]
    wanted = [live[k] for k in kids]
    if node.is_Atom or not any(wanted):
        return
    for k, partial, w in zip(kids, local_partials(node, wanted), wanted):
        if w and partial is not ZERO:
            contributions[k].append((i, mul(adjoint, partial)))


def reverse_grad(expr: sp.Expr, symbols) -> list[sp.Expr]:
    """d expr / d s for each symbol s, as expressions that share subexpressions."""
    symbols = list(symbols)
    if not isinstance(expr, sp.Basic) or expr.is_Atom:
        return [ONE if expr == s else ZERO for s in symbols]
    result = backward(expr, symbols)
    return [result.adjoint_of(s) for s in symbols]
