"""explain(request): every component derivation of one derivative call.

Components whose derivations are identical are grouped under one step; the
summary line and what the stops blocked (the language reference (docs/language.md), section 4, `blocked`)
come with them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.derive import derivatives as derive
from gradlang.expr.bounded import tidy
from gradlang.expr.values import elementwise
from gradlang.expr.values import to_symbolic
from gradlang.explain.components import component_steps
from gradlang.explain.ledger import ledger
from gradlang.explain.stops import phrase
from gradlang.explain.summary import summarize
from gradlang.explain.vector import vector_derivation
from gradlang.explain.text import plain

DEFAULT_DEPTH = 2    # levels of substeps shown below each component (None: all); issue 14: little by default
SIMPLER_NODES = 200  # tree nodes of a result explain tries to simplify for the reader


@dataclass(frozen=True)
class Explanation:
    """The explanation of one diff/grad/jacobian/hessian/blocked call.

    steps holds one root Step per distinct component derivation and
    components, at the same index, the labels of the components it gives
    (e.g. ("∂/∂x[0]",)); blocked is the part of the true derivative the
    stops removed, in the shape of the derivative; ledger has one
    ledger.StopEntry per stop (the path it cuts, the adjoint arriving, what
    it removes, its verdict); depth limits how many levels of substeps
    renderers show (None: all); simplified[i] is a simpler form of
    steps[i].result found by a size-bounded simplify, or None.
    """

    request: object
    summary: str
    steps: tuple
    components: tuple
    blocked: object
    ledger: tuple = ()
    depth: int | None = None
    simplified: tuple = ()
    vector: object = None   # a formula.VectorDerivation when the derivative was derived in vector form


def _group(pairs) -> tuple[tuple, tuple]:
    """Identical derivations shown once, with all the components they give."""
    groups: dict = {}
    for label, step in pairs:
        groups.setdefault(step, []).append(label)
    return tuple(groups), tuple(tuple(labels) for labels in groups.values())


def _take(request):
    """The derivative the request takes, as a function of the expression."""
    if request.operation == "diff":
        return lambda e: derive.diff(e, list(request.specs))
    operation = {"grad": derive.grad, "jacobian": derive.jacobian, "hessian": derive.hessian,
                 "blocked": derive.derivative_like}[request.operation]
    return lambda e: operation(e, to_symbolic(request.wrt))


def blocked_part(request):
    """What the stops removed, in the shape of the derivative (derive.blocked, bounded by size).

    Simplified only when small (SIMPLER_NODES): sp.simplify on the full
    bound of `blocked` took minutes for the EM M-step's eight stops.
    """
    courtesy = lambda value: elementwise(lambda e: tidy(e, limit=SIMPLER_NODES), value)  # noqa: E731
    return derive.blocked(to_symbolic(request.expr), to_symbolic(request.wrt), courtesy, _take(request))


def explain(request, depth: int | None = DEFAULT_DEPTH) -> Explanation:
    """The step-by-step explanation of a derivative call recorded inside `explain`.

    A gradient or Jacobian that a vector identity covers is derived once in
    vector form (vector.py); anything else component by component.
    """
    entries = ledger(request)
    vector = vector_derivation(request)
    if vector is not None and depth is not None:
        summary = "; ".join(p for p in (vector.identity, phrase(entries)) if p)
        return Explanation(request, summary, (), (), blocked_part(request), entries, depth, (), vector)
    steps, components = _group(component_steps(request))
    if vector is not None:  # every step asked for: the vector derivation, then the components
        summary = "; ".join(p for p in (vector.identity, summarize(steps, entries)) if p)
        return Explanation(request, summary, steps, components, blocked_part(request), entries, depth,
                           tuple(simpler(step.result) for step in steps), vector)
    simplified = tuple(simpler(step.result) for step in steps)
    return Explanation(request, summarize(steps, entries), steps, components, blocked_part(request), entries,
                       depth, simplified)


def simpler(result):
    """A shorter equal form of a result (log cos x gives -tan(x)), or None; bounded by size."""
    simplified = tidy(result, limit=SIMPLER_NODES)
    if simplified == result:
        return None
    shortest = min([simplified, tidy(simplified, sp.factor, SIMPLER_NODES)], key=lambda e: len(plain(e)))
    return shortest if len(plain(shortest)) < len(plain(result)) else None
