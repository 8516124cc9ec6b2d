"""SymPy's count_ops, counted over the DAG: the same number, each distinct part counted once.

`sympy.count_ops(e)` walks e as a tree and builds a SymPy sum of one symbol
per operation met (ADD, MUL, SIN, …) before it adds up the coefficients. A
formula that uses one part in many places (a layer norm's variance under every
term of its gradient) is walked again at every use, and the sum of symbols is
itself SymPy arithmetic, so the tensor rewrites' size test (derive/tensor/
work.py `ops`, asked of every product they try) cost as much as the rewrites.

`count_ops(e)` is that number computed as a sum of integers: the count of a
part is the operations SymPy counts at the part plus the counts of what SymPy
walks next from it (its arguments, or the negated, numerator and denominator
forms it reads a product or a sum as), each kept by formula_cache, so a part
met again costs one lookup. The counts are SymPy's own, step for step
(sympy/core/function.py, count_ops with visual=False): the sum of the
coefficients of a sum of symbols is the sum of the integers.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import _coeff_isneg
from sympy.core.operations import LatticeOp
from sympy.simplify.radsimp import fraction

from gradlang.expr.equal import formula_cache


def count_ops(expr) -> int:
    """sympy.count_ops(expr) (an int), each distinct part of the formula counted once."""
    if not isinstance(expr, sp.Expr) or expr.is_Relational:
        return sp.count_ops(expr)  # SymPy's other branches (a relation, a container) are not this walk
    try:
        return _part(expr)
    except RecursionError:
        return sp.count_ops(expr)


@formula_cache(1 << 14)
def _part(a) -> int:
    """The operations count_ops counts at `a` and below it (its loop body, one part at a time)."""
    if a.is_Rational:
        return 0 if a is sp.S.One else int(a.p < 0) + int(a.q != 1)
    if a.is_Add or a.is_MatAdd:
        return _sum(a.args)
    if a.is_Mul or a.is_MatMul:
        counted = _product(a)
        if counted is not None:
            return counted
    return _other(a)


def _sum(terms) -> int:
    """A sum: one ADD or SUB between terms, a negative term walked as its negation, and a NEG when
    every term is negative (SUB − ADD for a first negative term adds nothing)."""
    negatives = [_coeff_isneg(term) for term in terms]
    total = len(terms) - 1 + int(all(negatives))
    return total + sum(_part(-term if negative else term) for term, negative in zip(terms, negatives))


def _product(a):
    """A product: a NEG for a negative coefficient, then a DIV and the numerator and denominator when it
    is a quotient; None when it is none (the rest is counted as any product is, after the NEG)."""
    if _coeff_isneg(a):
        positive = a.as_two_terms()[1] if a.args[0] is sp.S.NegativeOne else -a
        return 1 + _positive_product(positive)
    return _positive_product(a)


def _positive_product(a) -> int:
    numerator, denominator = fraction(a)
    if numerator.is_Integer:
        return 1 + int(bool(numerator < 0)) + _part(denominator)
    if denominator is not sp.S.One:
        return 1 + (0 if denominator.is_Integer else _part(denominator)) + _part(numerator)
    return _other(a)


def _other(a) -> int:
    """A power, a function, a product that is no quotient, an atom: SymPy's rules after its first three."""
    if a.is_Pow and a.exp is sp.S.NegativeOne:
        return 1 + _part(a.base)
    if a == sp.S.Exp1:
        return 1
    if a.is_Pow and a.base == sp.S.Exp1:
        return 1 + _part(a.exp)
    here = 0
    if a.is_Mul or isinstance(a, LatticeOp):
        here = len(a.args) - 1
    elif a.args and (a.is_Pow or a.is_Function or isinstance(a, (sp.Derivative, sp.Integral, sp.Sum))):
        here = 1
    return here if a.is_Symbol else here + sum(_part(arg) for arg in a.args)
