"""The tensor rewrites' budget of work: nodes visited and terms created, counted, never timed.

A tidy (rewrite.py) opens a `Work` of units and every step pays from it: one
unit per node a rewrite visits, a SymPy tree walk (factor_terms, count_ops)
the nodes of its formula written out as a tree, and polynomial algebra
(cancel, factor, expand_mul) the terms it creates, estimated from the formula
before it runs (`terms_created`). When the units are spent the tidy stops
where it is, so the result is the same on every run and every machine,
whatever its speed or load, and no spelling of a formula costs hundreds of
times another: SymPy's time grows with the terms a polynomial has, about a
millisecond a term for cancel and factor, and a product of 13 sums of two
terms multiplies out to 8 192 of them from 40 nodes.
"""

from __future__ import annotations

import contextvars
import math

import sympy as sp

from gradlang.expr.equal import formula_cache
from gradlang.expr.operations import count_ops

MAX_TREE = 2000  # SymPy's factor_terms and count_ops walk a formula as a tree: a shared part at every use
TREE = contextvars.ContextVar("tree", default=MAX_TREE)  # a derivation's Tidier sets a smaller bound
WORK = contextvars.ContextVar("work", default=None)  # the running tidy's Work (rewrite.py sets it)

POLYNOMIAL_WEIGHT = 8  # cancel and factor cost several tree walks per node (measured on layer norms)
POLYNOMIAL_TREE = 200  # and more than linearly: 2 s for one of 340 nodes (two layer norms), 0.14 s for 136
TERM_WEIGHT = 8  # units per term polynomial algebra creates (cancel, factor, expand_mul)
MAX_TERMS = 256  # terms one step may create: cancel and factor take about 0.25 s of CPU for 256
_CAP = 1 << 20  # counts above this are all "too many"


@formula_cache(1 << 14)
def tree_size(expr) -> int:
    """Nodes of the formula written out as a tree, counted over its DAG (linear in the DAG's size)."""
    return 1 + sum(tree_size(a) for a in expr.args)


@formula_cache(1 << 14)
def ops(expr) -> int:
    """SymPy's count_ops, once per formula (a rule asks it of the same product at every pass of a tidy),
    counted over the DAG (expr/operations.py): the layer norm's variance under every term is counted once."""
    return count_ops(expr)


def small(expr) -> bool:
    """Small enough, as a tree, for SymPy's tree walks: an adjoint through nested softmaxes doubles at each one."""
    return tree_size(expr) <= TREE.get()


class Work:
    """A tidy's budget of work, in units (see the module's docstring). A formula's tree walk is paid
    for once per tidy (its results are cached)."""

    def __init__(self, units: int):
        self.left = units
        self.paid: set = set()


def spend(units: int) -> bool:
    """Take `units` from the running tidy's budget of work; False, taking nothing, when fewer are left."""
    work = WORK.get()
    if work is None:
        return True
    if work.left < units:
        return False
    work.left -= units
    return True


def affordable(expr, weight: int = 1) -> bool:
    """Small enough for SymPy's tree walks, and paid for: its tree's nodes times weight, once per tidy.

    Polynomial algebra (weight POLYNOMIAL_WEIGHT) also pays for the terms it will create, and is
    refused when one step would create more than MAX_TERMS."""
    polynomial = weight == POLYNOMIAL_WEIGHT
    if not small(expr) or (polynomial and tree_size(expr) > POLYNOMIAL_TREE):
        return False
    terms = terms_created(expr) if polynomial else 0
    return terms <= MAX_TERMS and _paid(expr, weight, weight * tree_size(expr) + TERM_WEIGHT * terms)


def expandable(expr) -> bool:
    """expand_mul(expr) creates at most MAX_TERMS terms, and they are paid for."""
    terms = expanded_terms(expr)
    return terms <= MAX_TERMS and _paid(expr, "expand", TERM_WEIGHT * terms)


def _paid(expr, kind, units: int) -> bool:
    work = WORK.get()
    if work is None or (expr, kind) in work.paid:
        return True
    if not spend(units):
        return False
    work.paid.add((expr, kind))
    return True


def terms_created(expr) -> int:
    """The terms cancel and factor build: the numerator and the denominator over one denominator,
    multiplied out (an upper bound, as if no two denominators had a common factor)."""
    numerator, denominator = _rational_terms(expr)
    return min(numerator + denominator, _CAP)


def expanded_terms(expr) -> int:
    """The terms expand_mul builds from expr: its numerator multiplied out (denominators stay as they are)."""
    return _polynomial_terms(expr)


@formula_cache(1 << 14)
def _polynomial_terms(expr) -> int:
    if isinstance(expr, sp.Add):
        return min(sum(_polynomial_terms(a) for a in expr.args), _CAP)
    if isinstance(expr, sp.Mul):
        return min(math.prod(min(_polynomial_terms(a), _CAP) for a in expr.args), _CAP)
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 0:
        return _multinomial(int(expr.exp), _polynomial_terms(expr.base))
    return 1


@formula_cache(1 << 14)
def _rational_terms(expr) -> tuple:
    """(terms of the numerator, of the denominator) of expr brought over one denominator, multiplied out."""
    if isinstance(expr, sp.Add):
        parts = [_rational_terms(a) for a in expr.args]
        denominator = _product(d for _, d in parts)
        return min(sum(_product([n, *(d for j, (_, d) in enumerate(parts) if j != i)]) for i, (n, _) in
                       enumerate(parts)), _CAP), denominator
    if isinstance(expr, sp.Mul):
        parts = [_rational_terms(a) for a in expr.args]
        return _product(n for n, _ in parts), _product(d for _, d in parts)
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer:
        numerator, denominator = _rational_terms(expr.base)
        power = abs(int(expr.exp))
        raised = (_multinomial(power, numerator), _multinomial(power, denominator))
        return raised if expr.exp > 0 else raised[::-1]
    return 1, 1  # a symbol, a number, a function, a tensor operation: one generator of the polynomials


def _product(counts) -> int:
    total = 1
    for count in counts:
        total = min(total * count, _CAP)
    return total


def _multinomial(n: int, k: int) -> int:
    """The monomials of (a_1 + … + a_k)^n, or _CAP when there are more."""
    if k == 1:
        return 1
    if n >= _CAP or k >= _CAP:
        return _CAP
    return min(math.comb(n + k - 1, k - 1), _CAP)
