"""The stop ledger at the tensor level: one entry per stop the user wrote, whatever its size.

For grad(L, x) with a stop sg(u) in L, the entry holds what the tensor
reverse pass (derive/tensor/reverse.py) gives, as formulas:

- the adjoint arriving at the stop, ū = ∂L/∂sg(u), what reverse mode would
  send into the cut edge (the stop itself standing for its value);
- the term it removes from the gradient: ū pulled back through u to x, with
  every stop evaluated, as `blocked` has it;
- its verdict: irrelevant (no path from x reaches u), neutral (the removed
  term is 0), blocking (it removes a non-zero term), inventing (the removed
  term only cancels gradient the surrogate has and the function lacks).

A verdict is decided by the bounded rewrites when they reduce the removed
term to 0, else numerically at random points (random_points.py), and the
entry says which: "neutral: … 0 at 8 random points". A stop written twice
the same way is one node, so one entry and one verdict.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.derive.tensor.reverse import adjoints_of
from gradlang.derive.tensor import rewrite
from gradlang.derive.tensor.rewrite import Tidier
from gradlang.errors import GradlangError
from gradlang.expr.graph import build_dag
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.tensor.broadcast import full
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor.nodes import OneHot, shape_of
from gradlang.expr.walk import dag_has
from gradlang.explain.ledger import random_points
from gradlang.explain.ledger.arithmetic import zero_form
from gradlang.explain.ledger.components import StopEntry, outermost_stops

REMOVING = ("blocking", "inventing")


def tensor_ledger(expr, wrt, kept) -> tuple:
    """One StopEntry per outermost stop of `expr` for grad(expr, wrt), whose surrogate gradient is `kept`."""
    return tuple(_entry(stop, expr, wrt, kept) for stop in outermost_stops([expr]))


def _entry(stop, expr, wrt, kept) -> StopEntry:
    tidy = Tidier()  # one budget for the entry's formulas, as for a derivation's lines
    argument = unstopped(stop.args[0])
    variables = wrt if isinstance(wrt, tuple) else (wrt,)
    reaching = tuple(v for v in variables if dag_has(argument, v))
    if not reaching:
        return StopEntry(stop, (), (), (), (), "irrelevant", level="tensor")
    adjoint = tidy(adjoints_of(expr, [stop], tidy_each=tidy)[stop])
    if adjoint == 0:
        return replace(_entry_of(stop, expr, wrt, kept, variables, reaching, adjoint, tidy),
                       zero_form=zero_form(adjoints_of(expr, [stop])[stop], rewrite.tidy))
    return _entry_of(stop, expr, wrt, kept, variables, reaching, adjoint, tidy)


def _entry_of(stop, expr, wrt, kept, variables, reaching, adjoint, tidy) -> StopEntry:
    """The entry of a stop a variable reaches, its adjoint found: what it removes and its verdict."""
    argument = unstopped(stop.args[0])
    removed = tuple(_pulled_back(argument, v, unstopped(adjoint), tidy) for v in variables)
    each = [_beside(stop, expr, v, tidy) for v in variables]
    if isinstance(wrt, tuple) and any(shape_of(v) for v in variables):  # grad(L, [W, b]), [b]: a list
        return _listed_entry(stop, variables, reaching, adjoint, removed, each, kept)
    beside = kept if any(b is None for b in each) else (each[0] if len(variables) == 1 else tuple(each))
    if len(variables) == 1:
        verdict, evidence = verdict_of(adjoint, removed[0], beside)
        shown = _written_term(argument, wrt, adjoint, removed[0], tidy) if verdict in REMOVING else None
        return StopEntry(stop, (wrt,), (adjoint,), ((removed[0],),), ((kept,),), verdict, level="tensor",
                         evidence=evidence, shown=shown)
    verdict, evidence = verdict_of(adjoint, _stacked(removed), _stacked(beside))
    return StopEntry(stop, reaching, (adjoint,), ((sp.Array(removed),),), ((sp.Array(kept),),), verdict,
                     level="tensor", evidence=evidence)


def _written_term(argument, wrt, adjoint, removed, tidy):
    """The removed term as the derivation writes it: the adjoint arriving as its head line prints it (its
    stops kept, so the let names it: TD3's 2*gamma*u2, DiCE's R*u/sum(exp(theta))) sent through the stopped
    value. The same value as `removed` (a stop has its argument's value; the seed is not differentiated),
    which evaluates every stop: DiCE's u became exp(log(sum(exp(theta)))), TD3's u2 its sum spelled out."""
    if adjoint == unstopped(adjoint):
        return removed
    shown = _pulled_back(argument, wrt, adjoint, tidy)
    return removed if shown is sp.S.NaN else shown


def _listed_entry(stop, variables, reaching, adjoint, removed, beside, kept) -> StopEntry:
    """The entry of a grad by a list of tensors: the removed terms as a list, one per variable in its shape
    (zeros(n), never a scalar 0), and one verdict for the stop, the strongest of its verdicts by each
    variable (blocking, inventing, neutral)."""
    found = [verdict_of(adjoint, r, kept[k] if b is None else b) for k, (r, b) in enumerate(zip(removed, beside))]
    verdicts = [v for v, _ in found]
    verdict = next(v for v in ("blocking", "inventing", "neutral") if v in verdicts)
    evidence = next((e for v, e in found if v == verdict and e), "")
    shaped = TensorList(*(r if r is sp.S.NaN else full(r, shape_of(v)) for r, v in zip(removed, variables)))
    return StopEntry(stop, reaching, (adjoint,), ((shaped,),), ((TensorList(*kept),),), verdict,
                     level="tensor", evidence=evidence)


def _stacked(terms):
    """Scalar terms, one per variable of a grad by a list, as one vector formula (for the random points)."""
    if any(t is sp.S.NaN for t in terms):
        return sp.S.NaN
    if all(t == 0 for t in terms):
        return sp.S.Zero
    return sp.Add(*[t * OneHot(k, len(terms)) for k, t in enumerate(terms) if t != 0])


def _pulled_back(argument, wrt, adjoint, tidy):
    """The adjoint arriving at the stop, sent on through its argument to the variable: the term the stop removes."""
    if adjoint == 0:
        return sp.S.Zero
    try:
        term = adjoints_of(argument, [wrt], seed=adjoint, tidy_each=tidy)[wrt]
    except GradlangError:  # a form with no tensor-level rule inside the stop: the term is named, not computed
        return sp.S.NaN
    term = tidy(term)
    return term if term == 0 else full(term, shape_of(wrt))


def _beside(stop, expr, wrt, tidy):
    """The gradient the stop's own sum sends the variable, when the stop is a term of one sum (u + sg(g − u)):
    what a straight-through stop's removed term cancels, so it is inventing, not blocking. None otherwise."""
    parents = [node for node in build_dag([expr]).nodes if stop in node.args]
    if len(parents) != 1 or not isinstance(parents[0], sp.Add):
        return None
    total = parents[0]
    arriving = tidy(adjoints_of(expr, [total], tidy_each=tidy)[total])
    return tidy(adjoints_of(total, [wrt], seed=arriving, tidy_each=tidy)[wrt]) if arriving != 0 else None


def verdict_of(adjoint, removed, kept) -> tuple[str, str]:
    """(verdict, how it was decided): "" when the rewrites decided it, else the random points that did.
    Shared by the ledger of a Jacobian (ledger/jacobian.py)."""
    if adjoint == 0:
        return "neutral", ""
    return removed_verdict(removed, kept)


def removed_verdict(removed, kept) -> tuple[str, str]:
    """(verdict, how it was decided) of a removed term beside the kept derivative: 0, neutral; a term that
    only cancels part of the kept one, inventing; else blocking. Also the verdict of a higher derivative's
    term (higher.py), which has no adjoint arriving."""
    if removed == 0:
        return "neutral", ""
    if removed is sp.S.NaN:
        return "blocking", ""
    points = random_points.zero_at(removed, [kept])
    if points:
        return "neutral", f"at {points} random points"
    return ("inventing" if random_points.cancels(removed, kept) else "blocking"), ""
