"""The one-line summary of a derivation.

"product rule, then the power rule; one stop, blocking": rules in the
order a reader meets them, each counted once per distinct sub-derivation
(repeats are shown once, so they are counted once), then the stops'
verdicts (ledger/components.py).
"""

from __future__ import annotations

from gradlang.explain.scalar.steps import is_trivial, walk
from gradlang.explain.ledger.words import phrase

_COUNTS = {1: "", 2: " twice"}
_MOST_RULES = 5
_SILENT = {"stop_gradient"}


def _distinct(roots):
    """Steps of all derivations in reading order, each expression and rule once.

    The same rule on the same expression for another variable (the components
    of a gradient) is counted once, as a reader learns it once.
    """
    seen, out = set(), []
    for root in roots:
        for step in walk(root):
            key = (step.expr, step.rule)
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


def summarize(roots, entries=()) -> str:
    """The one-line summary over the component derivations, and the stops' verdicts."""
    steps = _distinct(roots)
    parts = [_rules_phrase(_rule_counts(steps)), phrase(entries)]
    parts = [p for p in parts if p]
    if not parts:
        return "nothing to differentiate" if all(is_trivial(s) for s in steps) else ""
    return "; ".join(parts)


