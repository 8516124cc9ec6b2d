"""One ledger entry per stop the user wrote: the formula's stops grouped by where they were written.

The ledger is computed on the formula (ledger/tensor.py, ledger/components.py), where a stop the user wrote
may be several nodes (EM's sg(resp(m1, m2)) over four data points is four scalar stops) or none (sg(2), a
stop of a constant, is 2). The evaluator records each written stop with the values it gave
(core/written_stops.py); here the entries of one written stop become one entry, named as written, with the
adjoints arriving at its parts, the sum of what they remove and the strongest of their verdicts, and a
stop written on a constant gets its entry too: irrelevant, since nothing reaches a constant.

A stop written in a case that a where with a fixed condition does not take (the JAX importer's rlax
select(False, sg(a), a)) is never reached, though its value may be another stop's: its own entry says so.

A stop of the formula that no site wrote is a builtin's own (a definition's, a lesson's), and LANGUAGE.md
section 6 promises "no stop the user sees". It gets no entry. A written stop is found in the formula as
evaluated, or in components (a request at literal sizes explained by components is lowered first).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.errors import GradlangError
from gradlang.expr.floated import Forms
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor.lower import lowered
from gradlang.expr.walk import dag_nodes
from gradlang.explain.ledger.components import StopEntry, adjoint_value, removed_value

_STRENGTH = ("blocking", "inventing", "neutral", "irrelevant")


def _stops_of(values, lower: bool = True) -> list:
    """The stop nodes a written stop gave: the value itself, or the components of an array of them, as
    evaluated and, with lower, as their components (sg(x_fgsm) of a literal-size x is sg(x[0] − …),
    sg(x[1] − …) once the request is lowered)."""
    found: list = []
    for value in [form for value in values for form in (_forms(value) if lower else [value])]:
        items = list(value) if isinstance(value, (sp.NDimArray, list, tuple)) else [value]
        for item in items:
            if isinstance(item, StopGradient) and item not in found:
                found.append(item)
            elif isinstance(item, sp.Basic) and not isinstance(item, StopGradient):
                found += [n for n in dag_nodes([item]) if isinstance(n, StopGradient) and n not in found]
    return found


def _forms(value) -> list:
    """The value as evaluated, and as the component engine holds it when it has literal sizes."""
    try:
        low = lowered(value)
    except GradlangError:  # too many components to lower: the request is not lowered either
        return [value]
    return [value] if low is value or low == value else [value, low]


def named_stops(request) -> dict:
    """{a stop of the formula: the stop of the user's name} for each stop written on a name the user bound
    (sg(x_fgsm)): the whole stop as sg(x_fgsm), each of its components (a request lowered to components) as
    sg(x_fgsm[0]), so a derivation names a stop by what it stops, one name per written stop."""
    from gradlang.expr.tensor.nodes import Var, shape_of

    out: dict = {}
    for site in getattr(request, "written", None) or ():
        for value in site.values if site.named else ():
            for form in _forms(value):
                if isinstance(form, StopGradient):
                    shape = shape_of(form)
                    out.setdefault(form, StopGradient(Var(site.named, shape) if shape else
                                                      sp.Symbol(site.named, real=True)))
                elif isinstance(form, sp.NDimArray):
                    out.update({item: StopGradient(sp.Symbol(f"{site.named}[{', '.join(map(str, index))}]", real=True))
                                for index, item in _indexed(form) if isinstance(item, StopGradient) and item not in out})
    return out


def _indexed(array) -> list:
    """(index, entry) for each entry of an array, in order."""
    import itertools

    return [(index, array[index]) for index in itertools.product(*(range(n) for n in array.shape))]


def regrouped(entries: tuple, written) -> tuple:
    """The entries, one per stop written, in the order written: those of one written stop merged, a written
    stop of a constant given its entry (irrelevant); a stop no site wrote (a builtin's) has none. written is
    None when no evaluator recorded the stops (a request built by hand): the entries stay as they are."""
    if written is None:
        return entries
    owner, place, of_site = {}, {}, {}
    constants = []
    lower = any(entry.level == "components" for entry in entries)  # the request was lowered: so are the sites
    for site in written:
        if site.untaken:  # in a case a fixed condition does not take: its own entry, whatever its value
            continue
        stops = of_site[site.key] = _stops_of(site.values, lower)
        if not stops:  # sg(A) written twice: two stops written, each its entry (irrelevant)
            constants.append(site)
        for k, stop in enumerate(stops):
            owner.setdefault(stop, site)
            place.setdefault(stop, k)
    groups: dict = {site.key: [] for site in written}  # in the order written (met by the evaluator)
    by_key = {_integral(stop): site for stop, site in reversed(owner.items())}
    form = Forms()
    by_form = {}
    for entry in entries:
        if not (entry.stop in owner or _integral(entry.stop) in by_key):
            by_form = by_form or {form(stop): site for stop, site in reversed(owner.items())}
        site = owner.get(entry.stop) or by_key.get(_integral(entry.stop)) or by_form.get(form(entry.stop))
        if site is not None:  # else a builtin's own stop: no entry
            groups[site.key].append(entry)
    made = {key: members[0] if len(members) == 1 else _merged(sorted(members, key=lambda m: place.get(m.stop, 0)),
                                                              next(w.text for w in written if w.key == key))
            for key, members in groups.items() if members}
    within = _Within(made, {site.key: site for site in written}, form)
    return tuple(entry for site in written
                 for owners in [[owner[s] for s in of_site.get(site.key, ())]]
                 for entry in _site_entries(site, made, constants, owners)
                 or (within(site, of_site[site.key]) if owners else []))


class _Within:
    """The entry of a written stop that is inside another written stop (MoCo v3's momentum update,
    t23 = sg(t21*0.99 + t22*0.01) under no_grad, read only inside the stopped keys t61 and t62): no adjoint
    reaches it, so it is irrelevant, and its entry names the first written stop (in the order written)
    that holds it. Each stop's parts are walked once, as a DAG, and compared by their forms with floats
    (expr/floated.py): the formula explained is folded, the stops recorded as evaluated."""

    def __init__(self, made: dict, sites: dict, form):
        self.outer = [(sites[key], entry) for key, entry in made.items() if isinstance(entry.stop, StopGradient)]
        self.parts: dict = {}
        self.form = form

    def __call__(self, site, stops: list) -> list:
        if site.untaken or not stops:
            return []
        for outer, entry in self.outer:
            if outer.key != site.key and self.form(stops[0]) in self._parts(entry.stop):
                return [_inside(site, stops[0], outer.bound or entry.written or outer.text)]
        return []

    def _parts(self, stop) -> set:
        if stop not in self.parts:
            self.parts[stop] = {self.form(n) for n in dag_nodes([stop.args[0]])}
        return self.parts[stop]


def _inside(site, stop, outer: str) -> StopEntry:
    """A written stop inside the stop `outer`: irrelevant, since no adjoint flows inside a stop."""
    return StopEntry(stop, (), (), (), (), "irrelevant", level="tensor", written=site.bound or site.text,
                     inside=outer)


def _site_entries(site, made: dict, constants: list, owners: list) -> list:
    """The entry of one written stop: its own (from the formula's stops it gave), a constant's, an untaken
    case's; or, for a stop whose value another written stop gave first (A2C's t24 = sg(max(t23, axis=1))
    beside t17's, or sg(x^2)*x + sg(x^2)*x^2: one formula node), one that says so, since the ledger owes an
    entry to every stop the user wrote (LANGUAGE.md); else none (a stop found only inside another stop is
    _Within's)."""
    if site.untaken:
        return [_constant(site, site.untaken)]
    if site.key in made:
        return [made[site.key]]
    if site in constants:
        return [_constant(site)]
    first = next((o for o in owners if o.key in made), None)
    return [_same(site, first, made[first.key])] if first is not None and first.key != site.key else []


def _same(site, first, entry: StopEntry) -> StopEntry:
    """A stop whose value another written stop (first) gave: named by its own name (else as sg(…) of its value),
    pointing at that stop's entry (by its name, else by where it is written); it removes nothing of its
    own, since the closing identity counts the one formula node once."""
    verdict = "neutral" if entry.verdict in ("blocking", "inventing") else entry.verdict
    return StopEntry(entry.stop, entry.reaching, entry.adjoint, ((sp.S.Zero,),), (), verdict, level="tensor",
                     written=site.bound, same=(entry.verdict, first.bound or _where(first, site)))


def _where(first, site) -> str:
    """'the one at line 3' for the first writing of a stop; its column too when both are on one line."""
    at, here = getattr(first.node, "span", None), getattr(site.node, "span", None)
    if at is None:
        return first.text
    if here is not None and here.line == at.line:
        return f"the one at line {at.line}, column {at.column}"
    return f"the one at line {at.line}"


def _integral(stop):
    """The stop with its whole-number floats as integers: a formula with a float in it is explained with its
    integers made floats (-x as -1.0*x), and its stops are still the ones the user wrote."""
    return stop.xreplace({f: sp.Integer(int(f)) for f in stop.atoms(sp.Float) if float(f).is_integer()})


def _merged(members: list, text: str) -> StopEntry:
    """One entry for the parts of one written stop: the adjoints arriving at its parts as one list, what they
    remove added up, the strongest of their verdicts."""
    verdict = next(v for v in _STRENGTH if any(m.verdict == v for m in members))
    reaching = tuple(dict.fromkeys(v for m in members for v in m.reaching))
    removing = [m for m in members if m.verdict in ("blocking", "inventing")]
    removed = _total([removed_value(m) for m in removing])
    shown = _total([removed_value(m) if m.shown is None else m.shown for m in removing])
    adjoint = sp.Array([adjoint_value(m) for m in members if m.adjoint]) if any(m.adjoint for m in members) else ()
    evidence = next((m.evidence for m in members if m.verdict == verdict and m.evidence), "")
    return StopEntry(members[0].stop, reaching, (adjoint,) if adjoint != () else (), ((removed,),),
                     members[0].kept, verdict, level="tensor", evidence=evidence, written=text,
                     parts=tuple(m.stop for m in members), shown=shown if removing else None)


def _total(terms: list):
    """The terms added up (arrays too: a grad by a list of scalars has one term per scalar), or 0."""
    return sum(terms[1:], terms[0]) if terms else sp.S.Zero


def _constant(site, untaken: str = "") -> StopEntry:
    """A stop written on a constant (sg(2), sg(b) of data b): the formula keeps the constant, and no
    variable reaches it; or a stop in a case a fixed condition does not take (untaken says why): the value
    never reaches it, whatever it stops."""
    value = site.values[0]
    return StopEntry(StopGradient(value) if isinstance(value, sp.Basic) and value.free_symbols else value,
                     (), (), (), (), "irrelevant", level="tensor", written=untaken and site.bound or site.text, constant=not untaken,
                     untaken=untaken)


def with_written(explanation, phrase):
    """The explanation with its ledger one entry per stop written (and its summary's count to match)."""
    written = getattr(explanation.request, "written", None)
    entries = regrouped(explanation.ledger, written)
    if entries == explanation.ledger:
        return explanation
    old, new = phrase(explanation.ledger), phrase(entries)
    parts = explanation.summary.split("; ")
    parts = [new if p == old else p for p in parts] if old in parts else [*parts, new]
    summary = "; ".join(p for p in parts if p)  # the count of the stops written in its place, or none
    return replace(explanation, ledger=entries, summary=summary)
