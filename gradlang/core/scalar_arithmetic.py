"""The arithmetic of the evaluator on scalars and small arrays: sums of numbers folded without SymPy's
`Add.flatten` (which imports a sixth of SymPy that `1 + 1` does not need), division by zero as IEEE 754 or a
ValueError, the product operators and the comparisons. Kept apart from `evaluate.py` so the evaluator reads as
the walk over the lowered form."""

from __future__ import annotations

import functools

import sympy as sp

from gradlang.expr.engine import involves
from gradlang.lazy import deferred
from gradlang.errors import ValueError
from gradlang.expr.component_linalg import matmul
from gradlang.expr.domain import kept
from gradlang.expr.exact import checked as _checked, float_zero_kept
from gradlang.expr.values import elementwise, is_scalar
from gradlang.expr.walk import dag_has, relation


def _is_scalar_expr(value) -> bool:
    """A SymPy scalar: an ImmutableMatrix is an Expr too, and its `*` is the matrix product."""
    return isinstance(value, sp.Expr) and is_scalar(value)


def _add(*terms):
    if all(_finite_number(t) for t in terms) and sp.core.parameters.global_parameters.evaluate:
        return _checked(_number_sum(terms))
    return _checked(sp.Add(*terms))


def _finite_number(value) -> bool:
    return isinstance(value, (sp.Rational, sp.Float)) and value.is_finite


def _number_sum(terms):
    """Add(*terms) of finite numbers, by the steps Add takes (drop exact zeros; one term is itself; else the
    numbers summed left to right from 0 by their own `+`, as Add.flatten sums its coefficient), so the same
    value and class; Add.flatten itself imports sympy.tensor.tensor and sympy.combinatorics, a sixth of
    SymPy's own start-up that `1 + 1` does not need (issue #41)."""
    terms = [t for t in terms if t is not sp.S.Zero]
    if len(terms) < 2:
        return terms[0] if terms else sp.S.Zero
    return functools.reduce(lambda total, term: total + term, terms, sp.S.Zero)


def _divide(a, b):
    if isinstance(b, sp.Expr) and b.is_number and b.is_zero:  # is_number first: is_zero of a big sum of symbols walks it
        if b.is_Float or (isinstance(a, sp.Expr) and dag_has(a, sp.Float)):
            return _ieee_divide(a)
        raise ValueError("division by zero")
    return _checked(a / b)


def _ieee_divide(a):
    """a / 0.0 as IEEE 754 gives it: ±inf, or nan for 0/0 (also once a symbol in a gets a value)."""
    if isinstance(a, sp.Expr) and a.is_number and a.is_comparable:
        numerator = float(a)
        return sp.nan if numerator == 0 else (sp.oo if numerator > 0 else -sp.oo)
    return _checked(a * sp.oo)


_matmul = deferred("gradlang.core.tensor_values", "matmul")  # @ of a tensor: the engine's (issue #41)

_PRODUCT_OPS = {
    "*": lambda a, b: elementwise(lambda x, y: kept(lambda u, v: float_zero_kept(_checked(u * v), [u, v]), [x, y]), a, b),
    "/": lambda a, b: elementwise(lambda x, y: kept(_divide, [x, y]), a, b),
    "@": lambda a, b: (_matmul(a, b) if involves(a) or involves(b)
                       else kept(matmul, [a, b])),
}

_COMPARISONS = {
    op: functools.partial(relation, func)  # IEEE: a comparison with nan is false
    for op, func in {
        "<": sp.StrictLessThan, "<=": sp.LessThan, ">": sp.StrictGreaterThan,
        ">=": sp.GreaterThan, "==": sp.Eq, "!=": sp.Ne,
    }.items()
}
