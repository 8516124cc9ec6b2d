"""Simplification bounded by size and by a count of work, never by seconds: same program, same bytes.

`simplify`, `expand`, `factor` and the tidying inside `blocked` and `explain`
used to run under a wall-clock budget and quietly keep the unsimplified value
when it expired, so `blocked(stable_softmax(x), x)` printed the zero matrix on
an idle machine and a 6.7 KB expression on a loaded one. Now what is printed
depends only on the expression: each component is simplified when its tree
has at most `limits.SIMPLIFY_MAX_NODES` nodes and kept as it is otherwise,
and each of SymPy's steps is paid for, before it runs, from a budget of work
counted from the formula (`limits.SIMPLIFY_WORK`: simplify_steps.py,
simplify_work.py); where it runs out, simplify keeps the shortest form it had.
Seconds still bound the statement (its time limit stops it with a LimitError),
but they never change a printed result.
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang import limits
from gradlang.expr.equal import formula_cache
from gradlang.expr.graph import build_dag
from gradlang.lazy import np
from gradlang.expr.simplify_steps import simplify
from gradlang.expr.simplify_work import Meter, expansion_work, polynomial_work
from gradlang.expr.speakable import speakable
from gradlang.expr.values import elementwise, elements, shape_of
from gradlang.expr.walk import tree_size


def small_enough(expr, limit=None, work=None) -> bool:
    """True when an expression is small enough to simplify (a size bound, not a clock).

    `work` also bounds nodes times generators (see `generators`) and the
    number of symbols: simplify's `cancel` multiplies out rational functions
    over every generator, so 277 nodes over 22 generators took 5 s a component
    where 224 over 9 take 0.1 s; and trigsimp factors polynomials in every
    symbol, 1.5 s for 27 nodes over W and v (9 symbols, differential seed 116).
    """
    if not isinstance(expr, sp.Basic):
        return True
    size = tree_size(expr)
    if size > (limit or limits.SIMPLIFY_MAX_NODES) or expanded_terms(expr) > limits.MAX_EXPANDED_TERMS:
        return False
    if work is None:
        return True
    return size * generators(expr) <= work and len(expr.free_symbols) <= limits.BLOCKED_SIMPLIFY_SYMBOLS


def expanded_terms(expr: sp.Basic) -> int:
    """At most how many terms multiplying out any part of an expression gives (above the bound: the bound + 1).

    A small tree can expand to a huge sum: `(x + y + z + w + 1)^60` has 5 nodes
    and 635 376 terms, which expand, factor and simplify would all build. The
    count is bottom-up over the DAG: a sum adds its terms' counts, a product
    multiplies them, an integer power n of k terms gives the multinomial count
    C(n + k - 1, k - 1), and a function is one term (its argument is counted
    on its own, since expand multiplies out inside functions too)."""
    cap = limits.MAX_EXPANDED_TERMS + 1
    dag = build_dag([expr])
    terms: list[int] = []
    for node, kids in zip(dag.nodes, dag.children):
        if isinstance(node, sp.Add):
            count = sum(terms[k] for k in kids)
        elif isinstance(node, sp.Mul):
            count = math.prod(min(terms[k], cap) for k in kids)
        elif isinstance(node, sp.Pow) and node.exp.is_Integer and terms[kids[0]] > 1:
            count = _multinomial(abs(int(node.exp)), terms[kids[0]], cap)
        else:
            count = 1
        terms.append(min(count, cap))
    return max(terms, default=1)


def _multinomial(n: int, k: int, cap: int) -> int:
    """The number of monomials of (a_1 + … + a_k)^n, or cap when it is larger (computed only when small)."""
    if n >= cap or k >= cap:
        return cap
    return min(math.comb(n + k - 1, k - 1), cap)


def generators(expr: sp.Basic) -> int:
    """The generators SymPy's polynomial algebra would take: symbols, function applications, fractional powers."""
    parts = set(expr.free_symbols) | expr.atoms(sp.Function)
    parts |= {p for p in expr.atoms(sp.Pow) if not p.exp.is_Integer}
    return len(parts)


def tidy(expr, function=None, limit=None, work=None):
    """function(expr) (default sp.simplify) for a small scalar expression; a large one as it is.

    An answer in a form gradlang cannot print or export (Piecewise, cot, …)
    is refused (expr.speakable). `limit` lowers the size bound where a simplification is only a courtesy
    to the reader (explain's closing "= −tan(x)", the ledger's terms); `work` bounds size times
    generators, where it is a courtesy over many variables (blocked).
    """
    if not isinstance(expr, sp.Basic) or not small_enough(expr, limit, work):
        return expr
    return _simplified(expr, function)[0]


_COUNTED = {sp.cancel: polynomial_work, sp.factor: polynomial_work, sp.expand: expansion_work}


@formula_cache(1 << 10)
def _simplified(expr, function):
    """function(expr), once per formula: explain's ledger simplifies the same term for several stops and
    components (explain blocked(where(b != 0, max(W @ sg(x)), 0), x) asked 84 times for 40 formulas).

    simplify, cancel, factor and expand pay for their work from a budget (limits.SIMPLIFY_WORK); a
    formula they cannot pay for is kept as far as they got, and the answer says so: (value, stopped).
    A sign is held as it is (a symbol to simplify): SymPy writes sign(w) as w/|w| and then a Piecewise on
    w = 0, which is no answer gradlang can print (speakable refuses it), after seconds of piecewise
    simplification (the FGSM attack's sign(∇) in adversarial_training.grad: 8 s for 4 formulas)."""
    meter = Meter(limits.SIMPLIFY_WORK)
    try:
        answer = _within(expr, function, meter)
    except TypeError:
        return expr, False  # SymPy's comparison of a nan inside a condition ("Invalid NaN comparison"): kept
    except RecursionError:
        return expr, False  # SymPy's simplify of a condition holding sqrt(-1.5) recursed without end (seed 113)
    return speakable(expr, answer), meter.spent >= meter.budget


def _within(expr, function, meter: Meter):
    """function(expr) paid for from the meter: simplify step by step, cancel, factor and expand when
    their count is paid for (else expr as it is); any other function as it is."""
    if function is None:
        opaque = {s: sp.Dummy(real=True) for s in expr.atoms(sp.sign)}
        answer = simplify(expr.xreplace(opaque), meter)
        return answer.xreplace({v: k for k, v in opaque.items()}) if opaque else answer
    if function is sp.simplify:
        return simplify(expr, meter)
    count = _COUNTED.get(function)
    if count is not None and not meter.afford(count, expr):
        return expr
    return function(expr)


def tidy_each(value, function=None, work=None):
    """tidy on every component of a scalar, vector or matrix value (numbers pass through)."""
    if isinstance(value, np.ndarray):
        return value
    return elementwise(lambda e: tidy(e, function, work=work), value)


def too_large(value) -> int:
    """How many components of a value are above the size bounds (kept unsimplified)."""
    items = elements(value) if shape_of(value) else [value]
    return sum(1 for e in items if not small_enough(e))


def out_of_work(value, function=None) -> int:
    """How many components of a value `function` (tidy's) stopped where its budget of work ran out
    (asked after tidy_each: each answer is remembered, so none is computed again)."""
    items = elements(value) if shape_of(value) else [value]
    return sum(1 for e in items if isinstance(e, sp.Basic) and small_enough(e) and _simplified(e, function)[1])


def why_too_large(value) -> str:
    """The bound the first component kept unsimplified passes, for the note that says so."""
    items = elements(value) if shape_of(value) else [value]
    first = next(e for e in items if not small_enough(e))
    if tree_size(first, cap=limits.SIMPLIFY_MAX_NODES + 1) > limits.SIMPLIFY_MAX_NODES:
        return f"above {limits.SIMPLIFY_MAX_NODES} nodes"
    return f"multiplied out it would have more than {limits.MAX_EXPANDED_TERMS} terms"
