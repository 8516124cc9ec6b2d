"""grad, jacobian, hessian and diff on the DAG, shaped as derive.py shapes them.

Drop-in counterparts of derive.derivative / grad / jacobian / hessian: same
arguments, same shapes (a vector is a rank-1 ImmutableDenseNDimArray, a matrix
an ImmutableMatrix), same conventions; the derivatives come from reverse
accumulation (one pass per output) instead of sympy.diff on a tree.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.values import elements, from_elements, is_scalar, shape_of
from gradlang.derive.dag.canonical import canonical
from gradlang.derive.dag.reverse import reverse_grad


def derivative(expr: sp.Expr, symbol: sp.Symbol, order: int = 1) -> sp.Expr:
    """The order-th derivative of a scalar expression (stops are constants)."""
    for _ in range(order):
        expr = canonical(reverse_grad(expr, [symbol]))[0]
    return expr


def gradient_list(expr: sp.Expr, symbols) -> list[sp.Expr]:
    """First derivatives by each symbol, canonical when small."""
    return canonical(reverse_grad(expr, symbols))


def grad(expr, wrt):
    """Gradient of a scalar expression, shaped like the variables."""
    if is_scalar(wrt):
        return derivative(expr, wrt)
    return from_elements(shape_of(wrt), gradient_list(expr, elements(wrt)))


def jacobian(expr, wrt):
    """Matrix of d expr_i / d x_j: one backward pass per output."""
    if is_scalar(expr):
        return grad(expr, wrt)
    if is_scalar(wrt):
        return from_elements(shape_of(expr), [derivative(e, wrt) for e in elements(expr)])
    symbols = elements(wrt)
    return sp.ImmutableMatrix([gradient_list(e, symbols) for e in elements(expr)])


def hessian(expr, wrt):
    """Matrix of second partials: reverse over reverse, one pass per gradient entry."""
    if is_scalar(wrt):
        return derivative(expr, wrt, 2)
    symbols = elements(wrt)
    first = reverse_grad(expr, symbols)
    return sp.ImmutableMatrix([gradient_list(g, symbols) for g in first])
