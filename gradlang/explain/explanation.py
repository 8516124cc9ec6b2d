"""explain(request): every component derivation of one derivative call.

Components whose derivations are identical are grouped under one step; the
summary line and what the stops blocked (the language reference (docs/language.md), section 4, `blocked`)
come with them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.derive import derivatives as derive
from gradlang.expr.bounded import tidy, tidy_each
from gradlang.expr.values import to_symbolic
from gradlang.explain.components import component_steps
from gradlang.explain.ledger import ledger
from gradlang.explain.summary import summarize
from gradlang.explain.text import plain

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
    """What the stops removed, in the shape of the derivative (derive.blocked, bounded by size)."""
    return derive.blocked(to_symbolic(request.expr), to_symbolic(request.wrt), tidy_each, _take(request))


def explain(request, depth: int | None = None) -> Explanation:
    """The step-by-step explanation of a derivative call recorded inside `explain`."""
    steps, components = _group(component_steps(request))
    entries = ledger(request)
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
