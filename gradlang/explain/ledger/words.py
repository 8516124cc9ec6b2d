"""The ledger in words: one head and one verdict per stop, and the summary phrase.

Each sentence is a Note (explain/note.py), composed once when explain runs
(explanation.said) with the expressions kept apart, so every format says the
same thing about every stop and LaTeX sets its expressions as mathematics.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.source import to_source
from gradlang.expr.values import is_scalar, to_symbolic
from gradlang.expr.walk import rebuild, tree_size
from gradlang.explain.formula import Math, latex_math
from gradlang.explain.ledger.arithmetic import in_builtins, in_names
from gradlang.explain.ledger.closing import letters, removed_names
from gradlang.explain.ledger.components import adjoint_value, is_zero, removed_value, variables_of
from gradlang.explain.note import Note, equals, listed, note

_LONG = 72        # characters of a term that stands on the line it is named in
_TERM = 72        # characters of a removed term written out on its line (100 columns less the words before it)
_INVENTED = 44    # the same for an invented term, which has words after it too
_ARRIVING = 76    # the same for an adjoint arriving on a line of its own
_NODES_PER_COLUMN = 2  # a formula's tree nodes per printed column, at most (_long)
_WIDTH = 94       # characters of a ledger head above which the adjoint arriving gets a line of its own
_LISTED = 3       # variables named on a path before "and n more"
GROUPED = 8      # stops in a ledger above which stops with the same verdict and path share one entry
                 # (each written stop its own entry up to here: a ledger counts written stops, not components)
_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


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


def label(entry, display=()) -> Note:
    """What the stop stops, as the user wrote it: sg(max(x)), sg(p) for the user's p = softmax(z), and
    mu = sg(mean(x)) when the user named the stopped value itself (display: the derivation's names)."""
    named = dict(display).get(entry.stop)
    if entry.written:  # several stops of the formula, or none (a constant): the stop as the user wrote it
        return note(entry.written)
    written = note(Math("sg(", r"\operatorname{sg}("), entry.stop.args[0], Math(")", ")"))
    return note(named, Math(" = ", " = "), written) if named is not None else written


def head(entry, request, form=(), display=None) -> Note:
    """stop sg(max(x)): cuts the path from x; adjoint arriving: sum(softmax(x − c)) − 1 = 0  (Σₖ sₖ = 1)

    form is the adjoint as a vector derivation states it (formula.py parts), if it does;
    its value follows unless the form already ends in one (δ·∂δ/∂m = 9*δ/10) and is not 0.
    """
    name = label(entry, display or ())
    if entry.untaken:
        return note("stop ", name, ": never reached: ", entry.untaken)
    if entry.same:
        return note("stop ", *_same_names(entry, display or ()), " (one value: that entry counts it)")
    if entry.inside:
        return note("stop ", name, ": inside the stop ", _called(entry.inside[0], display or ()),
                    f": no path of its own ({entry.verdict})")
    if entry.verdict == "irrelevant":
        return note("stop ", name, ": no path from ", over(request), " reaches it")
    zero = adjoint_is_zero(entry)
    value = sp.S.Zero if zero else in_builtins(adjoint_value(entry))
    cuts = note("stop ", name, ": cuts the path from ", _path(entry), "; adjoint arriving: ")
    if form and not zero and not hasattr(form[-1], "plain"):
        return note(cuts, *form)
    if form:
        return note(cuts, *form, equals(), value)
    if zero and entry.zero_form:
        shown, identities = entry.zero_form
        return note(cuts, shown, equals(), value, f"  ({', '.join(identities)})" if identities else "")
    if zero and not _zero_as_written(entry):
        return note(cuts, adjoint_value(entry), equals(), value)  # s₀ + s₁ + s₂ − 1 = 0: say why it is 0
    if display is not None and _long(value, display, _ARRIVING):  # a wall: named, its formula in JSON's adjoint
        return note(cuts, Math("ā", r"\bar{a}"), f", a formula of {len(_short_source(value, display))} characters "
                    "(JSON's adjoint gives it)")
    return note(cuts, value)


def _called(entry, display) -> Note:
    """A stop by its name alone: the user's (t36), as written (a stop of several parts), else sg(u)."""
    named = dict(display).get(entry.stop)
    if named is not None:
        return note(named)
    return note(entry.written) if entry.written else note(Math("sg(", r"\operatorname{sg}("), entry.stop.args[0], Math(")", ")"))


def _same_names(entry, display) -> tuple:
    """'t24: the same stop as t27' for a stop whose value another written stop gave: the other named as the
    derivation names the formula node (its let), so a stop that is that name speaks of the first one written."""
    shown = dict(display).get(entry.stop)
    this, first = entry.written, entry.same[1]
    if shown is not None and str(shown) == this:
        this = first
    return (this, ": the same stop as ", shown if shown is not None else first)


def _zero_as_written(entry) -> bool:
    return all(a == 0 for a in entry.adjoint)


def adjoint_is_zero(entry) -> bool:
    """Zero as written, or once simplified (Σₖ softmaxₖ − 1 is 0 only by softmax's definition)."""
    if entry.level == "tensor":
        return _zero_as_written(entry)
    return _zero_as_written(entry) or all(is_zero(a) is True for a in entry.adjoint)


def verdict(entry, request, removes=(), name="", expr=None, display=()) -> Note:
    """The verdict in words, e.g. "blocking: removes r₁ = x"; removes, the removed term as an identity
    states it; name, the removed term's name in the closing identity (r₁); expr, the differentiated formula,
    whose stops write the removed term in the user's names."""
    if entry.constant:
        return note("irrelevant: it stops a constant, which has no gradient to stop")
    if entry.untaken:
        return note("irrelevant: the value does not depend on it, so it has no effect")
    if entry.same:
        return note(f"{entry.verdict}: the same value as that stop's; what it removes is counted there, once")
    if entry.inside:  # its head says it all: nothing arrives but through the outer stop, which cuts it
        return note()
    if entry.verdict == "irrelevant":
        return note("irrelevant: the stopped value does not depend on ", over(request))
    if entry.verdict == "neutral":
        return neutral(entry)
    removed = removed_value(entry) if expr is None else in_builtins(in_names(removed_value(entry), expr, display))
    named = note(Math(name, latex_math(name)), equals()) if name else note()
    if entry.verdict == "inventing":
        invented = removed.applyfunc(lambda e: -e) if hasattr(removed, "applyfunc") else -removed
        minus = note(Math("−" + name, "-" + latex_math(name)), equals()) if name else note()
        shown = _by_rule(entry, display, expr) if name and _long(invented, display, _INVENTED) else (invented,)
        return note("inventing: adds ", minus, *shown, ", a gradient the function lacks")
    if removes:
        return note("blocking: removes ", named, *removes)
    if name and _long(removed, display):  # in the ledger (a named term), not in explain backward's cuts
        return note("blocking: removes ", named, *_by_rule(entry, display, expr))
    return note("blocking: removes ", named, removed)


def _long(value, display, room: int = _TERM) -> bool:
    """Too long to read on a ledger line (room: the columns its line leaves it), even in the derivation's
    names. A formula of more than _NODES_PER_COLUMN × room tree nodes is, without printing it: a tree node
    prints as at least half a column (-x: 3 nodes, 2 columns), and printing the removed term of a blocking
    stop whole (DreamerV3's twohot critic: a DAG that is hundreds of thousands of columns as a tree) took 60 s
    of its explain's 90."""
    most = _NODES_PER_COLUMN * room
    if isinstance(value, sp.Basic) and tree_size(_in_names(value, display), cap=most + 1) > most:
        return True
    return len(_short_source(value, display)) > room


def _short_source(value, display) -> str:
    """The value as gradlang source with the derivation's names (the user's), never longer than a printer
    shows it: the measure of a line, never printed. A stop a printer may give a letter is measured whole."""
    return to_source(_in_names(value, display), sg=True)


def _in_names(value, display):
    """The value with the derivation's names in it, where they can be put (else as it is)."""
    if not isinstance(value, sp.Basic):
        return value
    try:
        return rebuild(value, dict(display))
    except (TypeError, AttributeError, ValueError):
        return value


def _by_rule(entry, display=(), expr=None) -> tuple:
    """A removed term too long to write out, as the rule that gives it: the adjoint arriving times the
    stopped value's derivative (JSON's `removed` holds the formula). The stopped value's letter is none the
    derivation or the formula uses (a let u beside `u stopped` read as one value)."""
    several = len(entry.reaching) > 1
    taken = {str(name) for _, name in display} | {str(s) for s in getattr(expr, "free_symbols", ())}
    u = next((letter for letter in ("u", "v", "w", "q") if letter not in taken), "u")
    return (Math(f"ā·∂{u}/∂" + "(" * several, rf"\bar{{a}} \cdot \partial {u} / \partial " + "(" * several),
            listed(entry.reaching), Math(")" * several, ")" * several), f" (ā arriving, {u} stopped)")


def neutral(entry) -> Note:
    """Why a neutral stop blocks nothing: its adjoint is 0, or the term it removes is (at the points, if so decided)."""
    where = f" {entry.evidence}" if entry.evidence else ""
    if adjoint_is_zero(entry) and not entry.evidence:
        return note("neutral: the adjoint arriving is 0, so it removes 0 (it blocks nothing)")
    return note(f"neutral: it removes 0{where} (the adjoint times the stopped value's derivative)")


def lines(explanation) -> tuple:
    """(head, verdict) Notes for every stop of the explanation's ledger (a long head split in two: the
    path, then the adjoint arriving): computed once, by explain."""
    request = explanation.request
    if not explanation.ledger:
        return ()
    if len(explanation.ledger) > GROUPED:
        return _grouped(explanation.ledger, request)
    vector = getattr(explanation, "vector", None)
    forms, removes = (dict(vector.adjoints), dict(vector.removes)) if vector is not None else ({}, {})
    display = getattr(vector, "display", ()) or ()
    expr = to_symbolic(request.expr)
    said = tuple((*_split(head(e, request, () if e.parts else forms.get(e.stop, ()), display), display),
                  verdict(e, request, () if e.parts else removes.get(e.stop, ()), name,
                          expr if isinstance(expr, sp.Basic) else None, display))
                 for e, name in zip(explanation.ledger, removed_names(explanation.ledger, letters(request)[1])))
    return tuple(tuple(part for part in sentence if part) for sentence in said)  # an entry inside a stop: one line


def _split(head_note: Note, display=()) -> tuple:
    """A head too long for a line of _WIDTH columns (as gradlang source with the derivation's names, which a
    printer never makes longer) as two: the stop and its path, then the adjoint arriving."""
    parts = head_note.parts
    at = next((k for k, p in enumerate(parts) if isinstance(p, str) and p.endswith("; adjoint arriving: ")), None)
    if at is None or len(head_note.spelled(lambda v: _short_source(v, display))) <= _WIDTH:
        return (head_note,)
    return Note(parts[:at] + (parts[at][: -len("; adjoint arriving: ")],)), Note(("adjoint arriving: ",) + parts[at + 1:])


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
