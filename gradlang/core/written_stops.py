"""The stops the user wrote, as the evaluator meets them: one site per `sg(…)` written.

A stop is a node of the formula only while its argument varies: `sg(2)` is 2, and `sg(resp(m1, m2))` of a
four-point data list is four scalar stops, one per component. The ledger owes one entry per stop the user
wrote (issue #40), so the evaluator records, for each `sg`/`stop_gradient` call it evaluates, where it is
written and the value it gave, and passes them up: into the value a name is bound to (the session keeps
the sites of each binding), and into each derivative request, whose explanation groups its formula stops
by site (explain/ledger/written.py). Nothing here changes a value.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from gradlang.lazy import deferred

STOPS = ("sg", "stop_gradient")
DERIVATIVES = ("diff", "grad", "jacobian", "hessian", "blocked", "backward")
CHOICES = ("where",)  # a choice whose fixed condition leaves a case, and the stops written in it, untaken
RECORDED = frozenset(STOPS + DERIVATIVES + CHOICES)  # the calls the evaluator records stops around
# The records (core/stop_records.py), made at the first stop or where met: `1 + 1` makes none (issue #41)
WrittenStop = deferred("gradlang.core.stop_records", "WrittenStop")
Choice = deferred("gradlang.core.stop_records", "Choice")


class StopSites:
    """The sites met while evaluating, gathered by every collector open (a binding, a derivative call)."""

    def __init__(self, bound: dict):
        self.bound = bound  # name -> the sites written into the value bound to it
        self.open: list = []

    @contextmanager
    def collecting(self):
        """A collector of the sites met inside (by evaluation or through a name), in the order met."""
        found: dict = {}
        self.open.append(found)
        try:
            yield found
        finally:  # by identity: two collectors that met the same stops are equal dicts
            self.open[:] = [other for other in self.open if other is not found]

    def met(self, node, text: str, value, named: str = "") -> None:
        for found in self.open:
            site = found.get(id(node))
            values = (site.values if site is not None else ()) + (value,)
            found[id(node)] = WrittenStop(id(node), text, values, node, named)

    def named(self, name: str) -> None:
        """A name read: the sites of its value are met again (a stop bound once, used twice, is one; a stop
        the value reaches is reached, though another value left it untaken)."""
        for site in self.bound.get(name, ()):
            for found in self.open:
                if site.key not in found or not site.untaken and found[site.key].untaken:
                    found[site.key] = site

    def with_same_stops(self, found: dict) -> dict:
        """The sites found, each stop bound to a name (t68 = sg(t67)) preceded by the other stops the session
        bound to a name with the same stop as value, which the value may not read (DreamerV3's critic: its
        softmax's t23 = sg(max(t22, axis=2)) that no line reads, beside the logsumexps' t43 and t68): one
        stop written three times, each given its entry ("the same stop as t68")."""
        same: dict = {}
        for sites in self.bound.values():
            for site in sites:
                if site.bound and site.values and not site.untaken:
                    same.setdefault(site.values[-1], {}).setdefault(site.key, site)
        out: dict = {}
        for key, site in found.items():
            if site.bound and site.values:
                out.update({k: other for k, other in same.get(site.values[-1], {}).items() if k not in found})
            out.setdefault(key, site)
        return out

    @contextmanager
    def choosing(self):
        """Around a choice's arguments (where(c, a, b)): yields a Choice whose `met` gets the sites met in each
        argument and whose `untaken` the case a fixed condition does not take, if any. The stops met only in
        that case become untaken in every collector that had not met them before, so the ledger can say the
        value never reaches them (a stop the user wrote, with no effect)."""
        before = [(found, set(found)) for found in self.open]
        choice = Choice()
        yield choice
        if choice.untaken is None:
            return
        others = {key for k, found in enumerate(choice.met) if k != choice.untaken for key in found}
        for found, had in before:
            for key in set(choice.met[choice.untaken]) - others - had:
                site = found.get(key)
                if site is not None and not site.untaken:
                    found[key] = replace(site, untaken=choice.why)


def text_in(definition, span) -> str:
    """The text at `span` inside a user function's definition (its source starts at definition.span)."""
    lines = definition.source.split("\n")
    first = definition.span.line

    def offset(line: int, column: int) -> int:
        k = line - first
        column -= definition.span.column - 1 if k == 0 else 0
        return sum(len(text) + 1 for text in lines[:k]) + column - 1

    try:
        return definition.source[offset(span.line, span.column):offset(span.end_line, span.end_column)]
    except (TypeError, AttributeError):
        return ""


def as_in_formula(sites: tuple, formula) -> tuple:
    """The sites, each value also in the form the formula holds it: a value with a float in it is settled in
    float64 (core/floats.py), so in `sum(tanh((X - mu)/sqrt(s2 + 0.00001)))` the stop written as
    mu = sg(mean(X, axis=-1)) is sg(0.25*sum(X, axis=2)) at d = 4, where the site met sg(sum(X, axis=2)/4).
    The ledger finds a written stop in the formula by its value, so it is given both."""
    import sympy as sp

    from gradlang.expr.walk import dag_has

    if not sites or not isinstance(formula, sp.Basic) or not dag_has(formula, sp.Float):
        return sites
    from gradlang.core.floats import fold_floats

    out = []
    for site in sites:
        values = [v for v in site.values if isinstance(v, sp.Expr)]
        folded = [f for f, v in zip(fold_floats(values), values) if f != v] if values else []
        out.append(replace(site, values=site.values + tuple(folded)) if folded else site)
    return tuple(out)

