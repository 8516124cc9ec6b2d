"""Binary cross-entropy of a sigmoid: d/dz BCE(σ(u), y) = (σ(u) − y)·u′.

A student writes −(y·log σ(z) + (1 − y)·log(1 − σ(z))) and expects the
famous σ(z) − y, not a sum of two chain rules simplified at the end. The
expression is recognised by its meaning, not its spelling: the one sigmoid
argument u, the label y read off as −(coefficient of log σ(u)), and the
whole checked equal to the BCE formula (expanded); then the derivative is
stated once.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.derivatives import derivative
from gradlang.expr.primitives.elementwise import Sigmoid
from gradlang.explain.formula import formula


def _parts(expr, x):
    """(u, y) when expr is −y·log σ(u) − (1 − y)·log(1 − σ(u)) with y free of x, else None."""
    sigmoids = {s for s in expr.atoms(Sigmoid)}
    if len(sigmoids) != 1:
        return None
    sigma = sigmoids.pop()
    expanded = sp.expand(expr)
    y = -expanded.coeff(sp.log(sigma))
    if y == 0 or y.has(x) or y.has(sigma):
        return None
    bce = -y * sp.log(sigma) - (1 - y) * sp.log(1 - sigma)
    return (sigma.args[0], y) if sp.expand(expanded - bce) == 0 else None


def sigmoid_cross_entropy(build):
    """The derivative of a sigmoid's binary cross-entropy, stated as σ(u) − y (times u′)."""
    if len(build.xs) != 1 or build.shape:
        return None
    x = build.xs[0]
    found = _parts(build.expr, x)
    if found is None:
        return None
    u, y = found
    slope = derivative(u, x)
    sigma = Sigmoid(u)
    result = (sigma - y) * slope
    stated = formula(sigma, " − ", y) if slope == 1 else formula("(", sigma, " − ", y, ")·", slope)
    build.line(formula(f"d/d{x.name} BCE(", sigma, ", ", y, ")"), stated,
               rule="d/du BCE(σ(u), y) = σ(u) − y" + ("" if slope == 1 else "; chain: ·u′"))
    return build.finish("sigmoid cross-entropy identity", result)
