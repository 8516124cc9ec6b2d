"""Derivatives on the DAG as lists of components; derive.py gives them their shapes.

Every function here costs a small constant times the DAG of what it
differentiates, per pass: one backward pass per output (reverse mode) or one
forward pass per input (forward mode), whichever is fewer. Results come back
canonical when small (canonical.py), shared when big.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.dag.canonical import canonical
from gradlang.derive.dag.build import ZERO
from gradlang.derive.dag.forward import forward_grad, forward_tangents, mark_reached
from gradlang.expr.graph import build_dag
from gradlang.derive.dag.reverse import reverse_grad


def derivative(expr: sp.Expr, symbol: sp.Symbol, order: int = 1) -> sp.Expr:
    """The order-th derivative of a scalar expression (stops are constants)."""
    for _ in range(order):
        expr = canonical(reverse_grad(expr, [symbol]))[0]
    return expr


def gradient_list(expr: sp.Expr, symbols) -> list[sp.Expr]:
    """First derivatives by each symbol: one backward pass, canonical when small."""
    return canonical(reverse_grad(expr, symbols))


def jacobian_rows(exprs, symbols) -> list[list[sp.Expr]]:
    """[[d e_i / d x_j]]: a backward pass per output, or a forward pass per input when fewer."""
    exprs, symbols = list(exprs), list(symbols)
    if len(symbols) < len(exprs):
        columns = forward_grad(exprs, symbols)
        rows = [[column[i] for column in columns] for i in range(len(exprs))]
    else:
        rows = [reverse_grad(e, symbols) for e in exprs]
    flat = canonical([d for row in rows for d in row])
    width = len(symbols)
    return [flat[i * width:(i + 1) * width] for i in range(len(exprs))]


def hessian_rows(expr: sp.Expr, symbols) -> list[list[sp.Expr]]:
    """Second partials: forward over reverse, the lower triangle only, mirrored.

    One backward pass gives the gradient; its entries share the forward pass
    and each other's adjoints, so column j of the Hessian is one forward sweep
    over that one shared DAG, restricted to the nodes that entries j..n-1 reach.
    Stopped parts are constants in both derivatives, so the matrix is the
    Hessian of one function (the surrogate) and symmetric: the upper triangle
    is the lower one, as a symbolic Hessian is usually stored.
    """
    symbols = list(symbols)
    n = len(symbols)
    dag = build_dag(reverse_grad(expr, symbols))
    rows = [[ZERO] * n for _ in range(n)]
    reached = [False] * len(dag)
    for j in reversed(range(n)):
        mark_reached(dag, dag.roots[j], reached)
        tangents = forward_tangents(dag, symbols[j], reached)
        for i in range(j, n):
            rows[i][j] = tangents[dag.roots[i]]
    flat = canonical([rows[max(i, j)][min(i, j)] for i in range(n) for j in range(n)])
    return [flat[i * n:(i + 1) * n] for i in range(n)]
