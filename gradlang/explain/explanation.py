"""explain(request): every component derivation of one derivative call.

Components whose derivations are identical are grouped under one step; the
summary line and what the stops blocked (the language reference (docs/language.md), section 4, `blocked`)
come with them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang import limits
from gradlang.derive import derivatives as derive
from gradlang.budget import OutOfTime, budget, is_mine
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.values import elements, from_elements, shape_of, to_symbolic
from gradlang.explain.components import component_steps
from gradlang.explain.summary import blocked_note, summarize


@dataclass(frozen=True)
class Explanation:
    """The explanation of one diff/grad/jacobian/hessian/blocked call.

    steps holds one root Step per distinct component derivation and
    components, at the same index, the labels of the components it gives
    (e.g. ("∂/∂x[0]",)); blocked is the part of the true derivative the
    stops removed, in the shape of the derivative, and blocked_note says it
    in words; depth limits how many levels of substeps renderers show
    (None: all).
    """

    request: object
    summary: str
    steps: tuple
    components: tuple
    blocked: object
    blocked_note: str
    depth: int | None = None


def _group(pairs) -> tuple[tuple, tuple]:
    """Identical derivations shown once, with all the components they give."""
    groups: dict = {}
    for label, step in pairs:
        groups.setdefault(step, []).append(label)
    return tuple(groups), tuple(tuple(labels) for labels in groups.values())


def _true_and_surrogate(request):
    expr = to_symbolic(request.expr)
    if request.operation == "diff":
        specs = list(request.specs)
        return derive.diff(unstopped_value(expr), specs), derive.diff(expr, specs)
    operation = {"grad": derive.grad, "jacobian": derive.jacobian, "hessian": derive.hessian,
                 "blocked": derive.derivative_like}[request.operation]
    wrt = to_symbolic(request.wrt)
    return operation(unstopped_value(expr), wrt), operation(expr, wrt)


def unstopped_value(value):
    """unstopped on every component of a value."""
    shape = shape_of(value)
    return from_elements(shape, [unstopped(e) for e in elements(value)]) if shape else unstopped(value)


def _simplified(items):
    """Simplify each component within the simplify budget; (items, decided)."""
    try:
        with budget(limits.SIMPLIFY_TIME_LIMIT) as token:
            return [sp.simplify(e) for e in items], True
    except OutOfTime as expiry:
        if not is_mine(expiry, token):
            raise
    return items, False


def _blocked(request):
    """What the stops removed, in the shape of the derivative; and whether it was decided.

    As derive.blocked: a value, so the stops left in it are evaluated (x*sg(x) gives x).
    """
    true, surrogate = _true_and_surrogate(request)
    difference = [unstopped(a - b) for a, b in zip(elements(true), elements(surrogate))]
    items, decided = _simplified(difference)
    shape = shape_of(true)
    return (from_elements(shape, items) if shape else items[0]), decided


def explain(request, depth: int | None = None) -> Explanation:
    """The step-by-step explanation of a derivative call recorded inside `explain`."""
    steps, components = _group(component_steps(request))
    blocked, decided = _blocked(request)
    nothing = decided and all(e == 0 for e in elements(blocked))
    note = blocked_note(to_symbolic(request.expr), blocked, decided)
    return Explanation(request, summarize(steps, nothing), steps, components, blocked, note, depth)
