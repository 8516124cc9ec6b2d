"""The one-line summary of a derivation and the sentence about what the stops blocked.

"product rule, then the power rule; one stop_gradient removed one term":
rules in the order a reader meets them, each counted once per distinct
sub-derivation (repeats are shown once, so they are counted once), then
what the stops did.
"""

from __future__ import annotations

from gradlang.expr.functions import Maximum, Minimum
from gradlang.expr.stopgrad import StopGradient, unstopped
from gradlang.expr.values import elements, from_elements, shape_of
from gradlang.explain.steps import is_trivial, walk
from gradlang.explain.text import plain
from gradlang.expr.walk import dag_atoms

_COUNTS = {1: "", 2: " twice"}
_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
_MOST_RULES = 5
_SILENT = {"stop_gradient"}


def _distinct(roots, by_variable: bool = False):
    """Steps of all derivations in reading order, each expression and rule once.

    The same rule on the same expression for another variable (the components
    of a gradient) is counted once, as a reader learns it once.
    """
    seen, out = set(), []
    for root in roots:
        for step in walk(root):
            key = (step.expr, step.rule) + ((step.variable,) if by_variable else ())
            if key not in seen:
                seen.add(key)
                out.append(step)
    return out


def _rule_counts(steps) -> dict:
    counts: dict = {}
    for step in steps:
        if not is_trivial(step) and step.rule not in _SILENT:
            counts[step.rule] = counts.get(step.rule, 0) + 1
    return counts


def _rules_phrase(counts: dict) -> str:
    names = [f"{rule} rule" + _COUNTS.get(n, f" {n} times") for rule, n in counts.items()]
    if not names:
        return ""
    shown = names[:_MOST_RULES]
    text = shown[0] + "".join(f", then the {name}" for name in shown[1:])
    hidden = len(names) - len(shown)
    return text + (f", and {hidden} more rule{'s' if hidden > 1 else ''}" if hidden else "")


def _number(n: int) -> str:
    return _NUMBERS.get(n, str(n))


def _cutting(steps):
    return [s for s in steps if s.rule == "stop_gradient" and s.blocked is not None and s.blocked != 0]


def _stops_phrase(roots, blocked_nothing: bool) -> str:
    """How many stops removed how many terms (one per variable they cut)."""
    terms = len(_cutting(_distinct(roots, by_variable=True)))
    if not terms:
        return ""
    n = len({s.expr for s in _cutting(_distinct(roots))})
    text = f"{_number(n)} stop_gradient{'s' if n > 1 else ''} removed {_number(terms)} term{'s' if terms > 1 else ''}"
    if blocked_nothing:
        text += ", which cancel: nothing is blocked"
    return text


def summarize(roots, blocked_nothing: bool) -> str:
    """The one-line summary over the component derivations."""
    steps = _distinct(roots)
    parts = [_rules_phrase(_rule_counts(steps)), _stops_phrase(roots, blocked_nothing)]
    parts = [p for p in parts if p]
    if not parts:
        return "nothing to differentiate" if all(is_trivial(s) for s in steps) else ""
    return "; ".join(parts)


def _what(stopped) -> str:
    """How to name a stopped expression in a sentence."""
    if isinstance(stopped, Maximum):
        return "the maximum"
    if isinstance(stopped, Minimum):
        return "the minimum"
    return plain(stopped)


def blocked_note(expr, blocked, decided: bool = True) -> str:
    """A sentence about the contribution the stops blocked."""
    stops = sorted({s.args[0] for e in elements(expr) for s in dag_atoms(e, StopGradient)}, key=str)
    if not stops:
        return "nothing — there is no stop_gradient"
    if not decided:
        return f"{plain(blocked)} (not simplified in time; it may be zero)"
    if all(e == 0 for e in elements(blocked)):
        what = ", ".join(_what(s) for s in stops)
        these = "this stop only keeps" if len(stops) == 1 else "these stops only keep"
        return f"nothing — {these} {what} out of the gradient's path"
    text = f"{plain(blocked)} — the part of the true derivative that the stops removed"
    value = _evaluated(blocked)
    if value != blocked:
        text += f"; with the stops evaluated, {plain(value)}"
    return text


def _evaluated(value):
    """unstopped on every component of a value, simplified (what the stops removed at a point)."""
    import sympy as sp

    shape = shape_of(value)
    items = [sp.simplify(unstopped(e)) for e in elements(value)]
    return from_elements(shape, items) if shape else items[0]
