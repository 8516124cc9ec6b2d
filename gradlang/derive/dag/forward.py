"""Forward accumulation over the DAG: the derivative of many outputs by one variable in one pass.

Reverse mode costs one backward pass per output; when a Jacobian has fewer
inputs than outputs (d softmax(v)/d t for a scalar t, or the columns of a
Hessian, where the outputs are the n gradient entries), one forward pass per
input is cheaper: each node's tangent is the sum over its args of partial *
tangent(arg), children first, with the same rule table (rules.py) and the same
cut edges as the backward pass.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.dag.build import ONE, ZERO, add, mul
from gradlang.derive.dag.rules import is_cut, local_partials
from gradlang.expr.graph import Dag, build_dag, depends_on


def forward_tangents(dag: Dag, symbol: sp.Symbol, needed=None) -> list:
    """d node / d symbol for every node of the DAG (ZERO where it does not depend on it).

    `needed[i]` False skips node i (its tangent is left ZERO): the nodes that no
    wanted output reaches.
    """
    live = depends_on(dag, [symbol], is_cut)
    if needed is not None:
        live = [a and b for a, b in zip(live, needed)]
    tangents: list = []
    for node, kids, alive in zip(dag.nodes, dag.children, live):
        if node == symbol:
            tangents.append(ONE)
        elif not alive or node.is_Atom:
            tangents.append(ZERO)
        else:
            tangents.append(_tangent(node, kids, live, tangents))
    return tangents


def _tangent(node, kids, live, tangents) -> sp.Expr:
    """Sum of partial * tangent over the args that depend on the variable."""
    wanted = [live[k] for k in kids]
    partials = local_partials(node, wanted)
    terms = [mul(p, tangents[k]) for k, p, w in zip(kids, partials, wanted) if w and p is not ZERO]
    return add(*terms) if terms else ZERO


def forward_grad(exprs, symbols) -> list[list]:
    """[[d e / d s for e in exprs] for s in symbols]: one forward pass per symbol over one DAG."""
    exprs = list(exprs)
    dag = build_dag(exprs)
    columns = []
    for symbol in symbols:
        tangents = forward_tangents(dag, symbol)
        columns.append([tangents[r] for r in dag.roots])
    return columns


def mark_reached(dag: Dag, root: int, reached: list) -> None:
    """Set reached[i] for every node the root reaches (stopping at nodes already marked)."""
    stack = [root]
    while stack:
        i = stack.pop()
        if not reached[i]:
            reached[i] = True
            stack.extend(dag.children[i])
