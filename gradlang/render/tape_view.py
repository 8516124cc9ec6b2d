"""`explain backward(e, x)` views (explain/backward/view.py) in the four formats, on the folded tape.

The view's tape is vector-level (explain/backward/fold.py): a row stands for a whole
vector of the scalar tape's rows, written in tape_notation's symbols. Plain
text puts each forward row beside its adjoint (forward read down, backward
read up, as Baydin et al.'s survey tables do) when every line fits in 100
columns, and prints the two tables one after the other otherwise. The rows
of the paths into the cuts are marked, and after the tables come what
arrives at each cut and what it would have sent on.
"""

from __future__ import annotations

import sympy as sp

from gradlang.render.plain import derivation_text as expr_plain
from gradlang.explain.formula import Math
from gradlang.explain.note import Note, equals, note
from gradlang.render.notes import latex_note, plain_note
from gradlang.render.records import renders
from gradlang.render.tape import _forward_lines, _latex, _sources, rich_tables, size_text

# --- explain backward(e, x) -------------------------------------------------------
# The view's tables add the rows of the paths into the cuts (explain/backward/view.py),
# marked, and after them what arrives at each cut and what it would have sent on.

ARRIVES = "arrives at a cut: dropped"
TOWARD = "toward a cut"


def _named(view, value):
    """A value with each long stop written as its row's value symbol (v5), and the shares of a max or min
    in the language's builtins (explain's ledger/arithmetic.in_builtins)."""
    from gradlang.explain.ledger.arithmetic import in_builtins

    names = dict(view.names)
    return in_builtins(value.xreplace(names) if names and isinstance(value, sp.Basic) else value)


def call_text(view) -> str:
    """The call as written in gradlang, long stops by their rows: backward(x*stop_gradient(x), x)."""
    from gradlang.render.derivation import _variables

    return f"backward({expr_plain(_named(view, view.expr))}, {_variables(view.wrt, expr_plain)})"


def _label(index, component) -> str:
    """A row's name in the folded tape: 3, or 3[0] for one component of a vector row."""
    return f"{index}" if component is None else f"{index}[{component}]"


def _rows(view) -> list[tuple[object, str]]:
    """The backward rows, the table's and those into the cuts, last value first, each with its mark."""
    arriving = {cut.row for cut in view.cuts if cut.local is not None}
    rows = [(r, "") for r in view.tape.backward]
    rows += [(r, ARRIVES if r.index in arriving else TOWARD) for r in view.toward]
    return sorted(rows, key=lambda pair: -pair[0].index)


def _gradient_lines(view) -> list[str]:
    """d/dx[0] = v̄1 = its value, in a shorter equal form when explain found one."""
    lines = []
    simplified = view.simplified or (None,) * len(view.tape.gradient)
    for (symbol, number), value, simpler in zip(view.tape.variables, view.tape.gradient, simplified):
        source = f"v̄{number}" if number else "0 (does not occur)"
        lines.append(f"  d/d{symbol} = {source} = {expr_plain(_named(view, value if simpler is None else simpler))}")
    return lines


def _form(cut, spelling: str, show) -> tuple[str, str]:
    """The vector identity's statement of the adjoint and the names it uses ("", "" if none)."""
    from gradlang.explain.formula import latex_chars
    from gradlang.render.vector_lines import text

    if not cut.form:
        return "", ""
    spell = latex_chars if spelling == "latex" else str  # a name like δ is a SymPy symbol: Unicode until spelled
    names = ", ".join(f"{spell(getattr(let.name, spelling, None) or show(let.name))} = {text(let.value, show, spelling)}"
                      for let in cut.lets)
    return text(cut.form, show, spelling) + " = ", names


def _v(index, component, bar: str = "") -> Math:
    """A row's value v3 (or its adjoint v̄3, with bar) as notation: v̄3 in text, \\bar{v}_{3} in LaTeX."""
    label = _label(index, component)
    return Math(f"v{bar}{label}", rf"\bar{{v}}_{{{label}}}" if bar else f"v_{{{label}}}")


def _sends(cut, view) -> Note:
    """What the stop would have sent on: v̄5 on to v4 = max(v1, v2, v3), adding … to the gradient."""
    from gradlang.explain.ledger.words import short

    rows = {r.index: r for r in view.tape.forward}
    target = note() if cut.argument not in rows else note(" on to ", _v(cut.argument, cut.argument_component), *(
        (equals(), rows[cut.argument].local) if cut.argument_component is None else ()))
    if not cut.adds:
        added = note("adding 0 to the gradient")
    elif cut.removes:
        added = note("adding ", *(_named(view, p) for p in cut.removes), " to the gradient")
    elif all(short(term, expr_plain) for _, term in cut.adds) and len(cut.adds) <= 3 and width(
            plain_note(listed := note("adding ", *_each(cut.adds, lambda v, term: (term, " to ", _d(v)))),
                       expr_plain)) <= WIDTH // 2:
        added = listed
    else:
        more = f" and {len(cut.adds) - 3} more" if len(cut.adds) > 3 else ""
        added = note("adding a non-zero term to ", *_each(cut.adds[:3], lambda v, _: (_d(v),)), more,
                     " (blocked(e, x) gives them)")
    return note(_v(cut.row, cut.component, "̄"), target, ", ", added)


def _d(variable) -> Note:
    return note(Math("d/d", r"\partial/\partial "), variable)


def _each(pairs, parts) -> list:
    """The parts of every pair, separated by commas."""
    return [part for k, pair in enumerate(pairs) for part in ((", ",) if k else ()) + tuple(parts(*pair))]


def _states_value(cut) -> bool:
    """Does the identity's statement already end in the adjoint's value (δ·∂δ/∂m = 9*δ/10)? Then it is not repeated."""
    return bool(cut.form) and not hasattr(cut.form[-1], "plain") and cut.adjoint != 0


def _computes(cut, view):
    """What the stop's row computes, for that component when the row is a vector."""
    if cut.computes is not None:
        return cut.computes
    return next(r for r in view.tape.forward if r.index == cut.row).local


def _one_cut(cut, view, show) -> tuple[str, list[str]]:
    """A cut's head line and the lines under it (arriving, would send, verdict)."""
    from gradlang.explain.ledger.words import brief

    computes = show(_computes(cut, view))
    head = f"v{_label(cut.row, cut.component)} = {computes}" + (f" = {show(cut.stop)}" if computes != show(cut.stop) else "")
    if cut.local is None:
        return head, [NOTHING, plain_note(cut.words, expr_plain)]
    local = show(cut.local)
    stated, names = _form(cut, "plain", lambda e: show(_named(view, e)))
    value = "" if _states_value(cut) else brief(_named(view, cut.adjoint), show)
    arriving = f"v̄{_label(cut.row, cut.component)} = {local} = {stated}{value}".rstrip(" =") + (f"   (where {names})" if names else "")
    return head, [f"arriving: {arriving}", f"would send: {plain_note(_sends(cut, view), show)}",
                  plain_note(cut.words, expr_plain)]


NOTHING = "arriving: nothing (no variable reaches the stopped value)"


def _vector_cut(cuts, view, show) -> tuple[str, list[str]]:
    """The stops of one vector row under one head: each component's lines, shared lines once."""
    row = next(r for r in view.tape.forward if r.index == cuts[0].row)
    head = f"v{row.index} = {show(row.local)}{size_text(row)}, one stop per component"
    under, verdicts = [], []
    for cut in cuts:
        *lines, words = _one_cut(cut, view, show)[1]
        under += [line for line in lines if line not in under]
        verdicts += [words] if words not in verdicts else []
    return head, under + verdicts


def cut_lines(view, show=expr_plain) -> list[tuple[str, list[str]]]:
    """For each stop, or each vector row of stops: its head line and the lines under it."""
    out, cuts = [], list(view.cuts)
    while cuts:
        cut = cuts.pop(0)
        if cut.component is None:
            out.append(_one_cut(cut, view, show))
            continue
        same = [cut] + [c for c in cuts if c.row == cut.row]
        cuts = [c for c in cuts if c.row != cut.row]
        out.append(_vector_cut(same, view, show))
    return out


WIDTH = 98  # 100 columns, less the "# " of a comment line


def width(text: str) -> int:
    """Columns a line takes: a combining mark (the bar of v̄) takes none."""
    import unicodedata

    return sum(not unicodedata.combining(c) for c in text)


def _forward_entries(view) -> list[tuple[str, str]]:
    """("  v6 = exp(v5)", "exp ℝ³") per forward row: the row, and its operation, size and cut."""
    return [(f"  {name} = {local}", operation + (f" ({note})" if note else ""))
            for name, operation, local, note in _forward_lines(view.tape)]


def _backward_entries(view) -> dict:
    """{row: ("v̄6 = v6*v̄7", "from v7; toward a cut")} for each backward row, the table's and those into the cuts."""
    return {row.index: (f"v̄{row.index} = {expr_plain(row.local)}", f"from {_sources(row)}" + (f"; {mark}" if mark else ""))
            for row, mark in _rows(view)}


def _columns(entries, mark: str = "# ") -> list[str]:
    """Two-column entries as aligned text ("a   # b")."""
    wide = max((width(a) for a, _ in entries), default=0)
    return [f"{a}{' ' * (wide - width(a))}  {mark}{b}".rstrip() for a, b in entries]


def _side_by_side(view) -> list[str] | None:
    """One line per forward row with its adjoint beside it, or None when a line would pass 100 columns.

    Beside each other the forward rows say only what the row itself does not:
    its size and whether it is a cut (the operation is the row's own function).
    """
    notes = [("cut " if r.stopped and r.inputs else "") + size_text(r).strip() for r in view.tape.forward]
    forward = _columns([(f"  v{r.index} = {expr_plain(r.local)}", note) for r, note in zip(view.tape.forward, notes)], "")
    adjoints = _backward_entries(view)
    if not set(adjoints) <= {r.index for r in view.tape.forward}:
        return None
    backward = dict(zip(adjoints, _columns([(f"│ {a}", b) for a, b in adjoints.values()])))
    wide = max(width(line) for line in forward)
    lines = [(line + " " * (wide - width(line)) + "  " + backward.get(r.index, "│")).rstrip()
             for line, r in zip(forward, view.tape.forward)]
    if max(map(width, lines)) > WIDTH:
        return None
    return ["forward (read down)" + " " * (wide - 17) + "│ backward: the adjoints (read up)"] + lines


def _headed(text: str, tail: str) -> str:
    """text + tail, or text alone when both would pass 100 columns."""
    return text + tail if width(text + tail) <= WIDTH else text


@renders("BackwardView", "plain")
def view_plain(printer, view) -> str:
    lines = [_headed(call_text(view), ": the reverse-mode computation")]
    lines += [f"definition: {text}" if width(f"definition: {text}") <= WIDTH else text for text in view.definitions]
    beside = _side_by_side(view) if view.tape.forward else None
    if beside is not None:
        lines += beside
    else:
        lines += ["forward:"] + _columns(_forward_entries(view))
        lines += ["backward:"] + _columns([(f"  {a}", b) for a, b in _backward_entries(view).values()])
    lines += ["gradient:"] + _gradient_lines(view)
    if view.cuts:
        lines.append("at the cuts (what reaches each stop, and what it would have sent on):")
        for head, under in cut_lines(view):
            lines += [f"  {head}"] + [f"    {line}" for line in under]
    return "\n".join(lines)


def _latex_words(text: str) -> str:
    """Prose for LaTeX, each adjoint v̄5 set as math (text_escape would drop the bar)."""
    import re

    from gradlang.render.latex import text_escape

    marked = re.sub(r"v̄(\d+)", lambda m: f"\0{m.group(1)}\0", text)
    return re.sub("\0(\\d+)\0", lambda m: rf"$\bar{{v}}_{{{m.group(1)}}}$", text_escape(marked))


def _latex_cut(cut, view) -> list[str]:
    """A cut in LaTeX: the arriving adjoint as a display (a long value by its length), the rest as text."""
    from gradlang.explain.ledger.words import short

    show = lambda e: _latex(_named(view, e))  # noqa: E731
    head = _paragraph(latex_note(note("At the cut ", _v(cut.row, cut.component), equals(), cut.stop, ":"), _latex))
    if cut.local is None:
        return [head, _paragraph(latex_note(cut.words, _latex, display=True))]
    named = _named(view, cut.adjoint)
    value = show(cut.adjoint) if short(named, expr_plain) else (
        rf"\text{{(a term of {len(expr_plain(named))} characters)}}")
    stated, names = _form(cut, "latex", show)
    value = "" if _states_value(cut) else value
    picked = "" if cut.component is None else f"[{cut.component}]"
    equation = rf"\bar{{v}}_{{{cut.row}}}{picked} = {_latex(cut.local)} = {stated}{value}".rstrip(" =") + (
        rf",\quad \text{{where }} {names}" if names else "")
    sends = _paragraph("would send: " + latex_note(_sends(cut, view), _latex, display=True))
    return [head, "\\[\n" + equation + "\n\\]", sends, _paragraph(latex_note(cut.words, _latex, display=True))]


def _paragraph(text: str) -> str:
    """Prose as its own paragraph, set loosely: a long stop in it breaks only at its spaces."""
    return rf"{{\sloppy {text}\par}}"


@renders("BackwardView", "latex")
def view_latex(printer, view) -> str:
    """Each table in its own display (aligned needs math mode), the cuts as displays and text."""
    forward = []
    for r in view.tape.forward:
        note = r.operation.replace("_", r"\_") + (", cut" if r.stopped and r.inputs else "")
        size = rf"\ \mathbf{{R}}^{{{r.size}}}" if r.size > 1 else ""
        forward.append(rf"v_{{{r.index}}} &= {_latex(r.local)} && \text{{{note}}}{size}")
    backward = [rf"\bar{{v}}_{{{r.index}}} &= {_latex(r.local)}" + (rf" && \text{{{mark}}}" if mark else "")
                for r, mark in _rows(view)]
    shown = ["\\[\n\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}\n\\]"
             for rows in (forward, backward) if rows]
    definitions = [rf"{{\sloppy definition: \texttt{{{_latex_words(text)}}}\par}}" for text in view.definitions]
    return "\n".join(definitions + shown + [line for cut in view.cuts for line in _latex_cut(cut, view)])


@renders("BackwardView", "pretty")
def view_rich(printer, view):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    forward, _ = rich_tables(printer, view.tape).renderables
    backward = Table(title="backward (adjoints, last value first)")
    for column in ("adjoint", "sum of", "from", "note"):
        backward.add_column(column)
    for row, mark in _rows(view):
        backward.add_row(f"v̄{row.index}", Text(expr_plain(row.local)), _sources(row), Text(mark, style="red"))
    lines = []
    for head, under in cut_lines(view):
        lines += [Text(head, style="bold red")] + [Text(f"  {line}") for line in under]
    definitions = [Text(f"definition: {text}") for text in view.definitions]
    gradient = [Text("gradient:", style="bold")] + [Text(line) for line in _gradient_lines(view)]
    return Group(*definitions, forward, backward, *gradient, *lines)


def _json_cut(cut, view) -> dict:
    from gradlang.render.vector_lines import text

    data = {"row": cut.row, "argument": cut.argument, "stop": expr_plain(cut.stop), "verdict": cut.verdict,
            "text": plain_note(cut.words, expr_plain)}
    if cut.component is not None or cut.argument_component is not None:
        data.update(component=cut.component, argument_component=cut.argument_component)
    if cut.local is None:
        return data
    show = lambda e: expr_plain(_named(view, e))  # noqa: E731
    return {**data, "arriving": expr_plain(cut.local), "adjoint": show(cut.adjoint),
            "form": (_form(cut, "plain", show)[0] + ("" if _states_value(cut) else show(cut.adjoint))).rstrip(" =")
            if cut.form else None,
            "removes": text(cut.removes, show) if cut.removes else None,
            "adds": [{"variable": expr_plain(v), "term": show(t)} for v, t in cut.adds]}


def _json_tables(view) -> dict:
    """The folded tables as data: each row with its size, a vector row's expr and adjoint as lists."""
    marks = {row.index: mark for row, mark in _rows(view) if mark}
    forward = [{"index": r.index, "operation": r.operation, "inputs": list(r.inputs), "expr": expr_plain(r.expr),
                "local": expr_plain(r.local), "stopped": r.stopped, "size": r.size} for r in view.tape.forward]
    backward = [{"index": r.index, "local": expr_plain(r.local), "adjoint": expr_plain(r.adjoint), "size": r.size,
                 "contributions": [{"from": p, "local": expr_plain(c)} for p, c in r.contributions],
                 **({"mark": marks[r.index]} if r.index in marks else {})} for r, _ in _rows(view)]
    gradient = []
    for (symbol, ref), value, simpler in zip(view.tape.variables, view.tape.gradient, view.simplified or _nones(view)):
        entry = {"variable": str(symbol), "row": ref and ref.index, "value": expr_plain(value)}
        entry.update({"component": ref.component} if ref and ref.component is not None else {})
        entry.update({"simplified": expr_plain(simpler)} if simpler is not None else {})
        gradient.append(entry)
    return {"forward": forward, "backward": backward, "output": view.tape.output, "gradient": gradient}


def _nones(view) -> tuple:
    return (None,) * len(view.tape.gradient)


@renders("BackwardView", "json")
def view_json(printer, view) -> dict:
    """The tables as data (the rows into the cuts marked), and each cut as data."""
    names = {expr_plain(symbol): expr_plain(stop) for stop, symbol in view.names}
    return {"rule": "backward", "call": call_text(view), "definitions": list(view.definitions), **_json_tables(view),
            "names": names, "cuts": [_json_cut(cut, view) for cut in view.cuts]}
