"""The stop ledger of a Jacobian at the tensor level: one entry per stop the user wrote, whatever its size.

For jacobian(f, x) with a stop sg(u) in f, the entry holds, as formulas from
forward mode (derive/tensor/forward.py):

- what arrives at the stop: ∂f/∂sg(u), the Jacobian of f by the stopped
  value (the stop itself standing for its value), which forward mode would
  have multiplied by ∂u/∂x;
- the term it removes: the Jacobian with this one stop taken away, less the
  Jacobian with it, with the stops evaluated (as `blocked` has it);
- its verdict, decided as for a gradient (ledger/tensor.py's verdict_of): by the
  rewrites when they reduce the removed term to 0, else at random points.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor import forward, rewrite
from gradlang.derive.tensor.rewrite import Tidier
from gradlang.errors import GradlangError
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.tensor.nodes import Var, Zeros, rank, shape_of
from gradlang.expr.walk import dag_has
from gradlang.explain.ledger.arithmetic import zero_form
from gradlang.explain.ledger.components import StopEntry, outermost_stops
from gradlang.explain.ledger.tensor import verdict_of


def jacobian_ledger(expr, wrt, kept) -> tuple:
    """One StopEntry per outermost stop of `expr` for jacobian(expr, wrt), whose surrogate Jacobian is `kept`."""
    return tuple(_entry(stop, expr, wrt, kept) for stop in outermost_stops([expr]))


def _entry(stop, expr, wrt, kept) -> StopEntry:
    tidy = Tidier()
    if not dag_has(unstopped(stop.args[0]), wrt):
        return StopEntry(stop, (), (), (), (), "irrelevant", level="tensor")
    raw = _arriving(stop, expr)
    arriving = tidy(raw) if raw is not sp.S.NaN else raw
    removed = _removed(stop, expr, wrt, kept, tidy)
    arriving, removed = (sp.S.Zero if _zero(v) else v for v in (arriving, removed))  # zeros(n): 0, as words say it
    verdict, evidence = verdict_of(arriving, removed, kept)
    held = zero_form(_no_zero_terms(raw), rewrite.tidy) if arriving == 0 and raw is not sp.S.NaN else ()
    return StopEntry(stop, (wrt,), (arriving,), ((removed,),), ((kept,),), verdict, level="tensor", evidence=evidence,
                     zero_form=held)  # a 0 by an identity (Σₖ sₖ = 1) shown as the gradient's ledger shows it


def _removed(stop, expr, wrt, kept, tidy):
    """The Jacobian with this one stop taken away, less `kept`; NaN (the term named, not computed, as the
    gradient's ledger has it) when forward mode cannot derive it: `jacobian(sum(stack([y, sg(x)], 1), 1), x)`
    at a symbolic size is zeros(n, n), but without the stop the stack's derivative by x has rank three."""
    try:
        without = forward.tangent(expr.xreplace({stop: stop.args[0]}), wrt)
    except GradlangError:
        return sp.S.NaN
    return tidy(_no_zero_terms(unstopped(without - kept)))


def _arriving(stop, expr):
    """∂f/∂c at c = the stop, as forward mode gives it: the Jacobian of f by the stopped value (NaN when that
    is a tensor of rank three)."""
    value = Var("c·", shape_of(stop)) if rank(stop) else sp.Symbol("c·", real=True)
    try:
        return forward.tangent(expr.xreplace({stop: value}), value, tidied=False).xreplace({value: stop})
    except GradlangError:
        return sp.S.NaN


def _no_zero_terms(expr):
    """A sum without its zeros(m, n) terms (a Jacobian that is 0 is written zeros by forward mode)."""
    return expr.replace(lambda e: isinstance(e, sp.Add) and any(isinstance(a, Zeros) for a in e.args),
                        lambda e: sp.Add(*[a for a in e.args if not isinstance(a, Zeros)]))



def _zero(value) -> bool:
    return value == 0 or isinstance(value, Zeros)
