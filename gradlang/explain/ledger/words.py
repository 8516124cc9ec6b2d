"""The ledger in words: one head and one verdict per stop, and the summary phrase.

Each sentence is a Note (explain/note.py), composed once when explain runs
(explanation.said) with the expressions kept apart, so every format says the
same thing about every stop and LaTeX sets its expressions as mathematics.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.values import is_scalar, to_symbolic
from gradlang.explain.ledger.components import adjoint_value, is_zero, removed_value, variables_of
from gradlang.explain.note import Note, equals, listed, note

_LONG = 72        # characters of a term that stands on the line it is named in
_LISTED = 3       # variables named on a path before "and n more"
_GROUPED = 4      # stops in a ledger above which stops with the same verdict and path share one entry
_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _number(n: int) -> str:
    return _NUMBERS.get(n, str(n))


def over(request) -> Note:
    """The variables of the request as the user wrote them: x, or W, or mu1, mu2."""
    if request.operation == "diff" or request.wrt is None:
        return _joined(variables_of(request))
    if isinstance(request.wrt, tuple):  # a grad by a list of scalars at the tensor level
        return _joined(request.wrt)
    return note(to_symbolic(request.wrt)) if is_scalar(request.wrt) else _vector_name(request)


def _joined(values) -> Note:
    return note(*[part for k, value in enumerate(values) for part in ((", ", value) if k else (value,))])


def _vector_name(request) -> Note:
    """W when the variables are all W's components (by their names: pretty shows W[0, 1] as W₀,₁)."""
    variables = variables_of(request)
    names = {s.name.split("[")[0] for s in variables}
    return note(sp.Symbol(names.pop(), real=True)) if len(names) == 1 else _joined(variables)


def short(value, show) -> bool:
    """Short enough to stand on the line it is named in."""
    return len(show(value)) <= _LONG


def brief(value, show) -> str:
    """An expression as a formula, always (a printer with names for repeated parts keeps it short)."""
    return show(value)


def _path(entry) -> Note:
    return listed(entry.reaching)


def head(entry, request, form=()) -> Note:
    """stop m: cuts the path from x[0], x[1], x[2]; adjoint arriving: −1ᵀ(e₀ − s) = −1 + Σₖ sₖ = 0

    form is the adjoint as a vector derivation states it (formula.py parts), if it does;
    its value follows unless the form already ends in one (δ·∂δ/∂m = 9*δ/10) and is not 0.
    """
    if entry.verdict == "irrelevant":
        return note("stop ", entry.stop, ": no path from ", over(request), " reaches it")
    zero = adjoint_is_zero(entry)
    value = sp.S.Zero if zero else adjoint_value(entry)
    cuts = note("stop ", entry.stop, ": cuts the path from ", _path(entry), "; adjoint arriving: ")
    if form and not zero and not hasattr(form[-1], "plain"):
        return note(cuts, *form)
    if form:
        return note(cuts, *form, equals(), value)
    if zero and not _zero_as_written(entry):
        return note(cuts, adjoint_value(entry), equals(), value)  # s₀ + s₁ + s₂ − 1 = 0: say why it is 0
    return note(cuts, value)


def _zero_as_written(entry) -> bool:
    return all(a == 0 for a in entry.adjoint)


def adjoint_is_zero(entry) -> bool:
    """Zero as written, or once simplified (Σₖ softmaxₖ − 1 is 0 only by softmax's definition)."""
    if entry.level == "tensor":
        return _zero_as_written(entry)
    return _zero_as_written(entry) or all(is_zero(a) is True for a in entry.adjoint)


def verdict(entry, request, removes=()) -> Note:
    """The verdict in words, e.g. "blocking: removes x"; removes, the removed term as an identity states it."""
    if entry.verdict == "irrelevant":
        return note("irrelevant: the stopped value does not depend on ", over(request))
    if entry.verdict == "neutral":
        return neutral(entry)
    removed = removed_value(entry)
    if entry.verdict == "inventing":
        invented = removed.applyfunc(lambda e: -e) if hasattr(removed, "applyfunc") else -removed
        return note("inventing: adds ", invented, ", a gradient the function itself does not have")
    return note("blocking: removes ", *removes) if removes else note("blocking: removes ", removed)


def neutral(entry) -> Note:
    """Why a neutral stop blocks nothing: its adjoint is 0, or the term it removes is (at the points, if so decided)."""
    where = f" {entry.evidence}" if entry.evidence else ""
    if adjoint_is_zero(entry) and not entry.evidence:
        return note("neutral: the adjoint arriving is 0, so it blocks nothing")
    return note(f"neutral: the term it removes (the adjoint times the stopped value's derivative) is 0{where}, "
                "so it blocks nothing")


def lines(explanation) -> tuple:
    """(head, verdict) Notes for every stop of the explanation's ledger: computed once, by explain."""
    request = explanation.request
    if len(explanation.ledger) > _GROUPED:
        return _grouped(explanation.ledger, request)
    vector = getattr(explanation, "vector", None)
    forms, removes = (dict(vector.adjoints), dict(vector.removes)) if vector is not None else ({}, {})
    return tuple((head(e, request, forms.get(e.stop, ())), verdict(e, request, removes.get(e.stop, ())))
                 for e in explanation.ledger)


def _grouped(entries, request) -> tuple:
    """Many stops (EM's eight weights): one entry per verdict and path, the stops listed."""
    groups: dict = {}
    for entry in entries:
        groups.setdefault((entry.verdict, entry.reaching), []).append(entry)
    out = []
    for (kind, _), members in groups.items():
        stops = [e.stop for e in members]
        shown = _joined(stops[:_LISTED + 1]) + (f", … ({len(stops)})" if len(stops) > _LISTED + 1 else "")
        if kind == "irrelevant":
            out.append((note("stops ", shown, ": no path from ", over(request), " reaches them"),
                        verdict(members[0], request)))
            continue
        out.append((note("stops ", shown, ": each cuts the path from ", _path(members[0])),
                    note(f"{kind}: each removes its own term (the true gradient differs by their sum)")
                    if kind == "blocking" else verdict(members[0], request)))
    return tuple(out)


def phrase(entries) -> str:
    """'one stop, neutral' or 'four stops: two blocking, two irrelevant' for the summary."""
    if not entries:
        return ""
    counts: dict = {}
    for entry in entries:
        counts[entry.verdict] = counts.get(entry.verdict, 0) + 1
    if len(entries) == 1:
        return f"one stop, {entries[0].verdict}"
    parts = ", ".join(f"{_number(n)} {v}" for v, n in counts.items())
    return f"{_number(len(entries))} stops: {parts}"
