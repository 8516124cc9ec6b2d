"""Simplification bounded by size, never by seconds: same program, same bytes.

`simplify`, `expand`, `factor` and the tidying inside `blocked` and `explain`
used to run under a wall-clock budget and quietly keep the unsimplified value
when it expired, so `blocked(stable_softmax(x), x)` printed the zero matrix on
an idle machine and a 6.7 KB expression on a loaded one. Now what is printed
depends only on the expression: each component is simplified when its tree
has at most `limits.SIMPLIFY_MAX_NODES` nodes and kept as it is otherwise.
Seconds still bound the statement (its time limit stops it with a LimitError),
but they never change a printed result.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.lazy import np
from gradlang.expr.speakable import speakable
from gradlang.expr.values import elementwise, elements, shape_of
from gradlang.expr.walk import tree_size


def small_enough(expr, limit=None) -> bool:
    """True when an expression is small enough to simplify (a size bound, not a clock)."""
    return not isinstance(expr, sp.Basic) or tree_size(expr) <= (limit or limits.SIMPLIFY_MAX_NODES)


def tidy(expr, function=None, limit=None):
    """function(expr) (default sp.simplify) for a small scalar expression; a large one as it is.

    An answer in a form gradlang cannot print or export (Piecewise, cot, …)
    is refused (expr.speakable). `limit` lowers the size bound where a simplification is only a courtesy
    to the reader (explain's closing "= −tan(x)", the ledger's terms).
    """
    if not isinstance(expr, sp.Basic) or not small_enough(expr, limit):
        return expr
    try:
        answer = (function or sp.simplify)(expr)
    except TypeError:
        return expr  # SymPy's own comparison of a nan inside a condition ("Invalid NaN comparison"): kept as it is
    return speakable(expr, answer)


def tidy_each(value, function=None):
    """tidy on every component of a scalar, vector or matrix value (numbers pass through)."""
    if isinstance(value, np.ndarray):
        return value
    return elementwise(lambda e: tidy(e, function), value)


def too_large(value) -> int:
    """How many components of a value are above the size bound (kept unsimplified)."""
    items = elements(value) if shape_of(value) else [value]
    return sum(1 for e in items if not small_enough(e))
