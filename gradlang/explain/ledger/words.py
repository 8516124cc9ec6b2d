"""The ledger in words: one head and one verdict per stop, and the summary phrase.

Each sentence is a Note (explain/note.py), composed once when explain runs
(explanation.said) with the expressions kept apart, so every format says the
same thing about every stop and LaTeX sets its expressions as mathematics.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.source import to_source
from gradlang.expr.values import is_scalar, to_symbolic
from gradlang.expr.walk import tree_size
from gradlang.explain.formula import Math, latex_math
from gradlang.explain.ledger.arithmetic import in_builtins, in_names
from gradlang.explain.ledger.closing import letters, removed_names
from gradlang.explain.ledger.components import adjoint_value, is_zero, removed_value, variables_of
from gradlang.explain.note import Note, equals, listed, note

_LONG = 72        # characters of a term that stands on the line it is named in
_TERM = 72        # characters of a removed term on its entry's line (100 columns less the words before it)
_INVENTED = 31    # characters of the words after an invented term (", a gradient the function lacks")
_ARRIVING = 76    # characters of an adjoint arriving on a line of its own
_CONTINUED = 92   # characters of a removed term's further lines (98 less their indent: render/plain_break.py)
_TERM_LINES = 4   # lines a removed term may take, broken between its outermost terms, before it is given by rule
_NODES_PER_COLUMN = 2  # a formula's tree nodes per printed column, at most (_long)
_WIDTH = 94       # characters of a ledger head above which the adjoint arriving gets a line of its own
_COMPACT = 98     # characters of a compact entry's one line (100 columns, less the "# " of a comment line)
GROUPED = 8      # stops in a ledger above which each entry is compact: one line (two if wide) without the
                 # adjoint arriving (every written stop keeps its own entry: a ledger counts written stops)
# a Jacobian's adjoint arriving or removed term that forward mode cannot write at symbolic size: NaN (ledger/jacobian.py)
_RANK_THREE = "a tensor of rank three at this size (literal sizes derive it)"
_THROUGH_RANK_THREE = "not written: it passes a tensor of rank three at this size (literal sizes derive it)"
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
    if entry.inside:
        return note("stop ", name, ": inside the stop ", entry.inside)
    if entry.same:
        return note("stop ", *_same_names(entry, display or ()), " (one value: that entry counts it)")
    if entry.verdict == "irrelevant":
        return note("stop ", name, ": no path from ", over(request), " reaches it")
    if entry.order >= 2:  # no adjoint arrives at a stop of a higher derivative's ledger (ledger/higher.py)
        return note("stop ", name, ": cuts the path from ", _path(entry))
    zero = adjoint_is_zero(entry)
    value = sp.S.Zero if zero else in_builtins(adjoint_value(entry))
    cuts = note("stop ", name, ": cuts the path from ", _path(entry), "; adjoint arriving: ")
    if value is sp.S.NaN:
        return note(cuts, _RANK_THREE)
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


def _same_names(entry, display) -> tuple:
    """'t24: the same stop as t27' for a stop whose value another written stop gave: the other named as the
    derivation names the formula node (its let), so a stop that is that name speaks of the first one written."""
    shown = dict(display).get(entry.stop)
    this, first = entry.written, entry.same[1]
    if not this:  # unnamed (sg(x^2)*x + sg(x^2)*x^2): by what it stops, as mathematics in LaTeX too
        this = note(Math("sg(", r"\operatorname{sg}("), entry.stop.args[0], Math(")", ")"))
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
    if entry.inside:
        return note("irrelevant: no adjoint flows inside a stop")
    if entry.same:
        return note(f"{entry.verdict}: the same value as that stop's; what it removes is counted there, once")
    if entry.verdict == "irrelevant":
        return note("irrelevant: the stopped value does not depend on ", over(request))
    if entry.verdict == "neutral":
        return neutral(entry)
    removed = written_term(entry, expr, display)
    if removed is sp.S.NaN:
        return note("blocking: removes ", Math(name, latex_math(name)), ", " if name else "", _THROUGH_RANK_THREE)
    named = note(Math(name, latex_math(name)), equals()) if name else note()
    if entry.verdict == "inventing":
        invented = removed.applyfunc(lambda e: -e) if hasattr(removed, "applyfunc") else -removed
        minus = note(Math("−" + name, "-" + latex_math(name)), equals()) if name else note()
        shown = _by_rule(entry, display, expr) if name and _long_term(invented, display, _INVENTED) else (invented,)
        lacks = "a gradient" if entry.order < 2 else "a derivative"
        return note("inventing: adds ", minus, *shown, f", {lacks} the function lacks")
    if removes:
        return note("blocking: removes ", named, *removes)
    if name and _long_term(removed, display):  # in the ledger (a named term), not in explain backward's cuts
        return note("blocking: removes ", named, *_by_rule(entry, display, expr))
    return note("blocking: removes ", named, removed)


def written_term(entry, expr=None, display=()):
    """The removed term in the derivation's words, each stopped value the user named written as its stop, in
    the language's builtins: the shorter of its two spellings in the derivation's names, as the pass writes
    it (ledger/tensor.py's `shown`: the adjoint with its stops, DiCE's R*u/sum(exp(theta)), where `blocked`
    spells u out as exp(log(sum(exp(theta))))) or with every stop evaluated (REINFORCE's pi[0] for
    sg(pi[0])). Without the formula, the term as `blocked` has it."""
    if expr is None:
        return removed_value(entry)
    spellings = [in_builtins(in_names(term, expr, display)) for term in (entry.shown, removed_value(entry))
                 if term is not None]
    if len(spellings) == 1 or _long(spellings[0], display, _TERM_LINES * _CONTINUED):
        return spellings[0]
    return min(spellings, key=lambda term: len(_short_source(term, display)))


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


def _long_term(value, display, after: int = 0) -> bool:
    """Too long to write out as a removed term: more than _TERM_LINES lines when broken between its outermost
    terms as the printers break it (the first line after the entry's words, `after` columns of words after the
    last), or a term alone wider than a line. TD3's and DiCE's terms (120–150 columns) are written out;
    a DreamerV3 twohot term (hundreds of thousands of columns as a tree) is given by its rule."""
    if _long(value, display, _TERM + (_TERM_LINES - 1) * _CONTINUED):
        return True
    lines = term_lines(_short_source(value, display) + "x" * after, _TERM, _CONTINUED)
    return len(lines) > _TERM_LINES or any(len(line) > (_CONTINUED if k else _TERM) for k, line in enumerate(lines))


def term_lines(text: str, first: int, rest: int, allowed=None) -> list:
    """The text in lines (the first of `first` columns, each further one of `rest`), broken before a ` + `
    or ` - ` (pretty's ` − `) outside every bracket, or between a matrix's rows, where a line would pass its width, as
    render/plain_break.terms_broken breaks a derivation's line; a term wider than a line stands alone, wider.
    allowed, when given: the (start, end) spans of the text where it may break (a note's formulas, never
    its words: "true = kept + removed")."""
    level, breaks = 0, []
    for i, char in enumerate(text):
        level += (char in "([") - (char in ")]")
        inside = allowed is None or any(start <= i < end for start, end in allowed)
        if level == 0 and text[i:i + 3] in (" + ", " - ", " − ") and inside:
            breaks.append(i)
        elif level == 1 and text[i - 1:i + 3] == "], [" and inside:  # between a matrix's rows: a row a line
            breaks.append(i + 1)
    lines, start = [], 0
    while breaks and len(text) - start > (rest if lines else first):
        room = rest if lines else first
        cut = next((b for b in reversed(breaks) if b - start <= room), breaks[0])
        lines.append(text[start:cut])
        start, breaks = cut + 1, [b for b in breaks if b > cut]
    return lines + [text[start:]]


def _short_source(value, display) -> str:
    """The value as gradlang source with the derivation's names (the user's), never longer than a printer
    shows it: the measure of a line, never printed. A stop a printer may give a letter is measured whole."""
    return to_source(_in_names(value, display), sg=True)


def _in_names(value, display):
    """The value with the derivation's names in it, where they can be put (else as it is), as the printers put
    them (explain/layout.shorten): a named product in a longer one too, so DiCE's invented term is measured as
    R*magic*exp(theta)/sum(exp(theta)) − R*magic*x, the spelling it prints."""
    from gradlang.explain.layout import shorten

    if not isinstance(value, sp.Basic):
        return value
    try:
        return shorten(value, dict(display))
    except (TypeError, AttributeError, ValueError):
        return value


def _by_rule(entry, display=(), expr=None) -> tuple:
    """A removed term too long to write out, as the rule that gives it: the adjoint arriving times the
    stopped value's derivative (JSON's `removed` holds the formula). The stopped value's letter is none the
    derivation or the formula uses (a let u beside `u stopped` read as one value). A higher derivative's
    term has no such rule (ledger/higher.py): it is given by its length."""
    if entry.order >= 2:
        length = len(_short_source(removed_value(entry), display))
        return (f"a term of {length} characters (JSON's removed gives it)",)
    several = len(entry.reaching) > 1
    taken = {str(name) for _, name in display} | {str(s) for s in getattr(expr, "free_symbols", ())}
    u = next((letter for letter in ("u", "v", "w", "q") if letter not in taken), "u")
    return (Math(f"ā·∂{u}/∂" + "(" * several, rf"\bar{{a}} \cdot \partial {u} / \partial " + "(" * several),
            listed(entry.reaching), Math(")" * several, ")" * several), f" (ā arriving, {u} stopped)")


def neutral(entry) -> Note:
    """Why a neutral stop blocks nothing: its adjoint is 0, or the term it removes is (at the points, if so decided)."""
    where = f" {entry.evidence}" if entry.evidence else ""
    if entry.order >= 2:  # ledger/higher.py: the derivative is the same with the stop and without it
        return note(f"neutral: it removes 0{where} (the derivative is the same with the stop and without it)")
    if adjoint_is_zero(entry) and not entry.evidence:
        return note("neutral: the adjoint arriving is 0, so it removes 0 (it blocks nothing)")
    return note(f"neutral: it removes 0{where} (the adjoint times the stopped value's derivative)")


def lines(explanation) -> tuple:
    """(head, verdict) Notes for every stop of the explanation's ledger (a long head split in two: the
    path, then the adjoint arriving): computed once, by explain."""
    request = explanation.request
    if not explanation.ledger:
        return ()
    vector = getattr(explanation, "vector", None)
    forms, removes = (dict(vector.adjoints), dict(vector.removes)) if vector is not None else ({}, {})
    display = getattr(vector, "display", ()) or ()
    expr = to_symbolic(request.expr)
    expr = expr if isinstance(expr, sp.Basic) else None
    named = zip(explanation.ledger, removed_names(explanation.ledger, letters(request, display)[1]))
    lets = {str(let.name) for let in getattr(vector, "lets", ()) or ()}
    if len(explanation.ledger) > GROUPED:
        return tuple(_compact(e, request, name, expr, display, lets) for e, name in named)
    # a stop inside another has nothing of its own to say but where it is, and a stop written again (its value
    # one node with an earlier stop's) nothing but which stop it repeats: one line each, as a compact entry
    said = tuple(_compact(e, request, name, expr, display, lets) if e.inside or e.same else
                 (*_split(head(e, request, () if e.parts else forms.get(e.stop, ()), display), display),
                  verdict(e, request, () if e.parts else removes.get(e.stop, ()), name, expr, display))
                 for e, name in named)
    return said


def _split(head_note: Note, display=()) -> tuple:
    """A head too long for a line of _WIDTH columns (as gradlang source with the derivation's names, which a
    printer never makes longer) as two: the stop and its path, then the adjoint arriving (or the stop, then
    which stop it is the same as: the stable softmax's second stop_gradient(max(v)))."""
    parts = head_note.parts
    at = next((k for k, p in enumerate(parts) if isinstance(p, str) and p.endswith(_BREAKS)), None)
    if at is None or len(head_note.spelled(lambda v: _short_source(v, display))) <= _WIDTH:
        return (head_note,)
    cut = next(b for b in _BREAKS if parts[at].endswith(b))
    return Note(parts[:at] + (parts[at][: -len(cut)] + cut[:1].strip(';'),)), Note((cut[2:],) + parts[at + 1:])


_BREAKS = ("; adjoint arriving: ", ": the same stop as ")  # where a long head breaks; a colon stays before


def _compact(entry, request, name: str, expr, display, lets=frozenset()) -> tuple:
    """A stop's entry in a long ledger (more than GROUPED stops written): the stop, the path it cuts and its
    verdict on one line, or the verdict on a second line when they do not fit; the adjoint arriving is left
    to JSON (its `adjoint`). DreamerV3's KL balance writes 12 stops: each keeps its own entry. A stop the
    let block introduces, or the program binds to a name (t33 = stop_gradient(…)), is called by its name;
    the path from the only variable is "the path"."""
    named = dict(display).get(entry.stop)
    bound = {site.bound for site in getattr(request, "written", None) or () if site.bound}  # the program's names
    by_name = named is not None and (str(named) in lets or str(named) in bound) and not entry.written
    label_ = note(named) if by_name else label(entry, display)
    only = len(entry.reaching) == 1 and str(over(request)) == str(entry.reaching[0])
    if entry.untaken:
        said = note("stop ", label_, ": never reached: ", entry.untaken)
    elif entry.inside:
        said = note("stop ", label_, ": inside the stop ", entry.inside)
    elif entry.same:
        said = note("stop ", *_same_names(entry, display))
    elif entry.verdict == "irrelevant" or entry.constant:
        said = note("stop ", label_)
    else:
        said = note("stop ", label_, ": cuts the path", *(() if only else (" from ", _path(entry))))
    why = _brief_verdict(entry, request, name, expr, display)
    one = note(said, "; ", why)
    if len(one.spelled(lambda v: _short_source(v, display))) <= _COMPACT:
        return (one,)
    return (said, why)


def _brief_verdict(entry, request, name: str, expr, display) -> Note:
    """The verdict of a compact entry: as a full entry says it, in fewer words."""
    if entry.same:
        return note(f"{entry.verdict}: counted at that entry, once")
    if entry.verdict == "irrelevant" and not (entry.constant or entry.untaken or entry.inside):
        return note("irrelevant: it does not depend on ", over(request))
    if entry.verdict == "neutral" and entry.evidence and not entry.same:
        return note(f"neutral: it removes 0 {entry.evidence}")
    return verdict(entry, request, (), name, expr, display)


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
