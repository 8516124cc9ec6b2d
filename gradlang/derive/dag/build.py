"""Cheap constructors for derivative DAGs: sums and products that keep sharing.

SymPy's evaluated `Mul(a, b)` splices the factors of `a` into the new product
when `a` is itself a product, so a chain of adjoints a_k = a_(k-1) * c_k
becomes k flat products of 1, 2, ..., k factors: quadratic, where reverse mode
promises linear. These constructors do the algebra SymPy would do for free on
numbers (drop 0 and 1, fold numeric coefficients) and otherwise build the node
unevaluated, so a shared argument stays one shared node.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.domain import Written, non_finite

ZERO = sp.S.Zero
ONE = sp.S.One


def mul(*factors) -> sp.Expr:
    """The product, unevaluated except for numbers; 0 if any factor is 0."""
    coefficient = ONE
    rest = []
    for f in factors:
        if f.is_Number:
            if f == 0:  # not f.is_zero: an assumption query, slow on every new Float
                return ZERO
            coefficient *= f
        else:
            rest.append(f)
    if not rest:
        return coefficient
    if coefficient != 1:
        rest.insert(0, coefficient)
    return rest[0] if len(rest) == 1 else sp.Mul(*rest, evaluate=False)


def add(*terms) -> sp.Expr:
    """The sum, unevaluated except for numbers.

    An infinite or nan constant beside other terms is held (expr/domain.py
    Written): once the sum is evaluated, SymPy would absorb cos(y) into
    cos(y) + oo, and the next derivative would lose -sin(y) (differential
    fuzzer, seed 115: diff(sin(y) + y/0.0, y, 3) was 0, JAX's -cos(y))."""
    constant = ZERO
    rest = []
    for t in terms:
        if t.is_Number:
            constant += t
        else:
            rest.append(t)
    if constant != 0:
        rest.append(Written(constant) if rest and non_finite(constant) else constant)
    if not rest:
        return constant
    return rest[0] if len(rest) == 1 else sp.Add(*rest, evaluate=False)


def neg(expr: sp.Expr) -> sp.Expr:
    return mul(sp.S.NegativeOne, expr)


def power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    """base**exponent, with the trivial exponents folded."""
    if exponent == 0:
        return ONE
    if exponent == 1:
        return base
    return sp.Pow(base, exponent, evaluate=False) if not base.is_Atom else sp.Pow(base, exponent)


def reciprocal(expr: sp.Expr) -> sp.Expr:
    return power(expr, sp.S.NegativeOne)
