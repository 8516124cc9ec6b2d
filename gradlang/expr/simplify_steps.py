"""SymPy's simplify, step by step, each step paid for from a budget of work before it runs (issue #41).

`sympy.simplify` is one call with no bound: a layer norm's derivative over
five scalars (227 nodes, under the size bound) took 4 s, 0.5 or 1/2 alike,
nearly all of it in one step, `cancel(_mexpand(cancel(e)))`, whose input was
32 000 nodes. So gradlang runs the same steps, in the same order and with the
same choice of the shortest form at each, as SymPy 1.14's `simplify` does for
a sum, product or power, but each step first pays for its work from a `Meter`
(simplify_work.py): a tree walk the nodes of its input (times WALK), a
polynomial step the monomials it creates, counted before it runs. When a step
cannot be paid for, the simplification stops there and keeps the shortest
form it has (the same `shorter` choice SymPy makes), and says so
(`Meter.spent == Meter.budget`). Every count is of the formula, none of a
clock, so the result is the same on every machine, load and run.

A formula holding what this sequence does not handle (Piecewise, sums and
integrals, gamma, Bessel functions, a class with its own `_eval_simplify`,
non-commuting symbols) goes to `sympy.simplify` whole, once its nodes are paid
for at FOREIGN units each: gradlang builds such formulas rarely and small.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.exprtools import factor_terms
from sympy.core.function import _mexpand, count_ops, expand_log, expand_mul, expand_power_exp
from sympy.core.rules import Transform
from sympy.core.traversal import bottom_up
from sympy.functions.elementary.exponential import ExpBase
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.trigonometric import TrigonometricFunction
from sympy.simplify.powsimp import powsimp
from sympy.simplify.radsimp import collect_abs, fraction, radsimp
from sympy.simplify.simplify import logcombine, signsimp
from sympy.simplify.trigsimp import exptrigsimp, trigsimp

from gradlang.expr.simplify_work import Meter, OutOfWork, expansion_work, polynomial_work
from gradlang.expr.walk import tree_size

WALK = 4  # units per node of a tree walk (factor_terms, powsimp, together: several passes each)
FOREIGN = 200  # units per node of a formula sympy.simplify takes whole
_HANDLED = (sp.Add, sp.Mul, sp.Pow, ExpBase)
_FOREIGN = (sp.Piecewise, sp.Sum, sp.Product, sp.Integral, sp.gamma, sp.functions.special.bessel.BesselBase,
            sp.KroneckerDelta, sp.functions.combinatorial.factorials.CombinatorialFunction)


def simplify(expr, meter: Meter):
    """expr simplified as sympy.simplify does, within the meter's budget (see the module's docstring)."""
    if not isinstance(expr, sp.Basic) or not expr.args:
        return expr
    if isinstance(expr, sp.Expr) and _walked(meter, expr, WALK) and expr.is_zero:  # an assumption query: a walk
        return sp.S.Zero if not expr.is_Number else expr
    if _foreign(expr):
        return sp.simplify(expr) if _walked(meter, expr, FOREIGN) else expr
    original = expr = _step(meter, expr, lambda e: collect_abs(signsimp(e)))
    expr = _step(meter, expr, lambda e: e.replace(
        lambda x: isinstance(x, sp.Expr) and x.args and not isinstance(x, _HANDLED),
        lambda x: x.func(*[simplify(a, meter) for a in x.args]), simultaneous=False))
    if not isinstance(expr, _HANDLED):
        return _done(expr, meter)
    expr = _rational(meter, expr)
    expr = _functions(meter, expr)
    return _done(_tidied(meter, expr, original), meter)


def _foreign(expr) -> bool:
    return (getattr(expr, "_eval_simplify", None) is not None or not expr.is_commutative
            or expr.has(*_FOREIGN))


def _rational(meter: Meter, expr):
    """simplify's rational part: normal forms bottom up, cancel, cancel multiplied out, together."""
    expr = _step(meter, expr, lambda e: bottom_up(e, lambda w: getattr(w, "normal", lambda: w)()))
    expr = _step(meter, expr, lambda e: sp.Mul(*powsimp(e).as_content_primitive()))
    cancelled = _step(meter, expr, sp.cancel, polynomial_work)
    expanded = cancelled
    if meter.afford(expansion_work, cancelled):
        multiplied = _mexpand(cancelled)  # paid for by its count; cancelling it pays for its walk too
        if meter.afford(polynomial_work, multiplied) and _walked(meter, multiplied, WALK):
            expanded = _shorter(cancelled, multiplied.cancel())
    together = [_step(meter, e, lambda e: sp.together(e, deep=True)) for e in (expr, expanded)]
    return _step(meter, _shorter(_shorter(*together), expanded, expr), lambda e: factor_terms(e, sign=False))


def _functions(meter: Meter, expr):
    """simplify's rules for trigonometric functions and logarithms (what gradlang's formulas hold)."""
    if expr.has(sp.sign):
        expr = _step(meter, expr, lambda e: e.rewrite(sp.Abs))
    if expr.has(TrigonometricFunction, HyperbolicFunction):
        expr = _step(meter, expr, lambda e: trigsimp(e, deep=True))
    if expr.has(sp.log):
        expr = _step(meter, expr, lambda e: _shorter(expand_log(e, deep=True), logcombine(e)))
    return expr


def _tidied(meter: Meter, expr, original):
    """simplify's closing steps: powers combined, cancelled again, factored, a sum's denominator
    rationalised, a leading minus sign taken out; the original kept when the result is longer."""
    short = _step(meter, expr, lambda e: _shorter(powsimp(e, combine="exp", deep=True), powsimp(e), e))
    short = _step(meter, short, lambda e: _shorter(e, sp.cancel(e)), polynomial_work)
    short = _step(meter, short, lambda e: _shorter(e, factor_terms(e), expand_power_exp(expand_mul(e))))
    if short.has(TrigonometricFunction, HyperbolicFunction, ExpBase, sp.exp):
        short = _step(meter, short, exptrigsimp)
    expr = short.xreplace(Transform(lambda x: sp.Mul(*x.args), lambda x: x.is_Mul and len(x.args) == 2 and
                                    x.args[0].is_Number and x.args[1].is_Add and x.is_commutative))
    expr = _step(meter, expr, _denominator_rationalised)
    if expr.could_extract_minus_sign():
        n, d = fraction(expr)
        if d != 0:
            expr = _step(meter, expr, lambda e: signsimp(-n / (-d)))
    return original if count_ops(expr) > 1.7 * count_ops(original) else expr


def _denominator_rationalised(expr):
    numer, denom = expr.as_numer_denom()
    if denom.is_Add:
        n, d = fraction(radsimp(1 / denom, symbolic=False, max_terms=1))
        if n is not sp.S.One:
            return (numer * n).expand() / d
    return expr


def _done(expr, meter: Meter):
    rv = _step(meter, expr, lambda e: e.doit())
    return _shorter(rv, _step(meter, rv, collect_abs))


def _step(meter: Meter, expr, function, count=None):
    """function(expr) when its work is paid for (a tree walk, or `count`'s estimate); else expr as it is."""
    if count is not None and not meter.afford(count, expr):
        return expr
    return function(expr) if _walked(meter, expr, WALK) else expr


def _walked(meter: Meter, expr, weight: int) -> bool:
    try:
        meter.pay(weight * tree_size(expr, cap=meter.budget + 1))
    except OutOfWork:
        return False
    return True


def _shorter(*choices):
    """The choice with the fewest operations, the first on a tie (simplify's `shorter`)."""
    return min(choices, key=count_ops) if len(set(choices)) > 1 else choices[0]
