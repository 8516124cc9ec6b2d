"""Reverse-mode tapes (gradlang.dag.tape) and `explain backward` views in the four formats.

The printers' `_print_Tape` and `_print_BackwardView` methods call these.

The forward table is the program TF or JAX would run, one value per line; the
backward table its adjoints in reverse order. A stopped value is marked
"cut": its input edge carries no adjoint, so the backward table skips what
only it reaches. Expressions go through SymPy's printers (str for plain
text, latex for LaTeX) on the local forms v_i = op(v_j, ...).
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.dag.tape import Tape
from gradlang.render.latex import to_latex as expr_latex
from gradlang.render.plain import to_plain as expr_plain
from gradlang.expr.walk import dag_atoms

CUT = "cut: no gradient flows back"


def _forward_lines(tape: Tape, show=expr_plain) -> list[tuple[str, str, str, str]]:
    return [
        (f"v{r.index}", r.operation, show(r.local), CUT if r.stopped and r.inputs else "")
        for r in tape.forward
    ]


def _sources(row) -> str:
    return ", ".join("output" if parent is None else f"v{parent}" for parent, _ in row.contributions)


def plain_text(tape: Tape) -> str:
    """The two tables as aligned plain text."""
    lines = ["forward:"]
    for name, operation, local, note in _forward_lines(tape):
        lines.append(f"  {name} = {local}".ljust(39) + f" # {operation}" + (f"  ({note})" if note else ""))
    lines.append("backward:")
    for row in tape.backward:
        lines.append(f"  v̄{row.index} = {expr_plain(row.local)}".ljust(39) + f" # from {_sources(row)}")
    lines.append("gradient:")
    for (symbol, number), value in zip(tape.variables, tape.gradient):
        source = f"v̄{number}" if number else "0 (does not occur)"
        lines.append(f"  d/d{symbol} = {source} = {expr_plain(value)}")
    return "\n".join(lines)


def _latex(expr) -> str:
    """LaTeX with v3 as v_{3} and v̄3 as \\bar{v}_{3}."""
    names = {}
    for symbol in dag_atoms(expr, sp.Symbol):
        name = symbol.name
        if name.startswith("v̄") and name[2:].isdigit():
            names[symbol] = sp.Symbol(rf"\bar{{v}}_{{{name[2:]}}}")
        elif name.startswith("v") and name[1:].isdigit():
            names[symbol] = sp.Symbol(f"v_{{{name[1:]}}}")
    return expr_latex(expr.xreplace(names))


def latex_text(tape: Tape) -> str:
    """The tables as two LaTeX aligned environments."""
    forward = []
    for r in tape.forward:
        note = r.operation.replace("_", r"\_") + (", cut" if r.stopped and r.inputs else "")
        forward.append(rf"v_{{{r.index}}} &= {_latex(r.local)} && \text{{{note}}}")
    backward = [rf"\bar{{v}}_{{{r.index}}} &= {_latex(r.local)}" for r in tape.backward]
    return (
        "\\begin{aligned}\n" + " \\\\\n".join(forward) + "\n\\end{aligned}\n"
        "\\begin{aligned}\n" + " \\\\\n".join(backward) + "\n\\end{aligned}"
    )


def rich_tables(tape: Tape):
    """Two rich Tables (forward, backward) in a Group, cut edges in red."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    # Text objects, not markup strings: consoles may have markup turned off.
    forward = Table(title="forward", show_lines=False)
    for column in ("value", "operation", "computes", "note"):
        forward.add_column(column)
    for name, operation, local, note in _forward_lines(tape):
        forward.add_row(name, operation, Text(local), Text(note, style="red") if note else "")
    backward = Table(title="backward (adjoints, last value first)")
    for column in ("adjoint", "sum of", "from"):
        backward.add_column(column)
    for row in tape.backward:
        backward.add_row(f"v̄{row.index}", Text(expr_plain(row.local)), _sources(row))
    return Group(forward, backward)


def json_data(tape: Tape) -> dict:
    """Plain data: forward rows, backward rows, the gradient, all expressions as text."""
    return {
        "forward": [
            {"index": r.index, "operation": r.operation, "inputs": list(r.inputs), "expr": expr_plain(r.expr),
             "local": expr_plain(r.local), "stopped": r.stopped}
            for r in tape.forward
        ],
        "backward": [
            {"index": r.index, "local": expr_plain(r.local), "adjoint": expr_plain(r.adjoint),
             "contributions": [{"from": p, "local": expr_plain(c)} for p, c in r.contributions]}
            for r in tape.backward
        ],
        "output": tape.output,
        "gradient": [{"variable": str(s), "row": n, "value": expr_plain(v)} for (s, n), v in zip(tape.variables, tape.gradient)],
    }


# --- explain backward(e, x) -------------------------------------------------------
# The view's tables add the rows of the paths into the cuts (explain/backward.py),
# marked, and after them what arrives at each cut and what it would have sent on.

ARRIVES = "arrives at a cut: dropped"
TOWARD = "toward a cut"


def _named(view, value):
    """A value with each long stop written as its row's value symbol (v5)."""
    names = dict(view.names)
    return value.xreplace(names) if names and isinstance(value, sp.Basic) else value


def call_text(view) -> str:
    """The call as written in gradlang, long stops by their rows: backward(x*stop_gradient(x), x)."""
    from gradlang.render.derivation import _variables

    return f"backward({expr_plain(_named(view, view.expr))}, {_variables(view.wrt, expr_plain)})"


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
    from gradlang.render.vector_lines import text

    if not cut.form:
        return "", ""
    names = ", ".join(f"{getattr(let.name, spelling, None) or show(let.name)} = {text(let.value, show, spelling)}"
                      for let in cut.lets)
    return text(cut.form, show, spelling) + " = ", names


def _sends(cut, view, show) -> str:
    """What the stop would have sent on: v̄5 on to v4 = max(v1, v2, v3), adding … to the gradient."""
    from gradlang.explain.stops import brief
    from gradlang.render.vector_lines import text

    rows = {r.index: r for r in view.tape.forward}
    target = f" on to v{cut.argument} = {show(rows[cut.argument].local)}" if cut.argument in rows else ""
    where = ", ".join(f"d/d{show(v)}" for v, _ in cut.adds[:3]) + (f" and {len(cut.adds) - 3} more" if len(cut.adds) > 3 else "")
    if not cut.adds:
        added = "adding 0 to the gradient"
    elif cut.removes:
        added = f"adding {text(cut.removes, lambda e: show(_named(view, e)))} to the gradient"
    elif all(brief(term, show) == show(term) for _, term in cut.adds) and len(cut.adds) <= 3:
        added = "adding " + ", ".join(f"{show(term)} to d/d{show(v)}" for v, term in cut.adds)
    else:
        added = f"adding a non-zero term to {where} (blocked(e, x) gives them)"
    return f"v̄{cut.row}{target}, {added}"


def _states_value(cut) -> bool:
    """Does the identity's statement already end in the adjoint's value (δ·∂δ/∂m = 9*δ/10)? Then it is not repeated."""
    return bool(cut.form) and not hasattr(cut.form[-1], "plain") and cut.adjoint != 0


def cut_lines(view, show=expr_plain) -> list[tuple[str, list[str]]]:
    """For each cut: its head line and the lines under it (arriving, would send, verdict)."""
    from gradlang.explain.stops import brief

    out = []
    for cut in view.cuts:
        row = next(r for r in view.tape.forward if r.index == cut.row)
        head = f"v{cut.row} = {show(row.local)}" + (f" = {show(cut.stop)}" if show(row.local) != show(cut.stop) else "")
        if cut.local is None:
            out.append((head, ["arriving: nothing (no variable reaches the stopped value)", cut.words]))
            continue
        local = show(cut.local)
        stated, names = _form(cut, "plain", lambda e: show(_named(view, e)))
        value = "" if _states_value(cut) else brief(_named(view, cut.adjoint), show)
        arriving = f"v̄{cut.row} = {local} = {stated}{value}".rstrip(" =") + (f"   (where {names})" if names else "")
        out.append((head, [f"arriving: {arriving}", f"would send: {_sends(cut, view, show)}", cut.words]))
    return out


def view_plain(view) -> str:
    lines = [f"{call_text(view)}: the reverse-mode computation"]
    lines += [f"definition: {text}" for text in view.definitions] + ["forward:"]
    for name, operation, local, note in _forward_lines(view.tape):
        lines.append(f"  {name} = {local}".ljust(39) + f" # {operation}" + (f"  ({note})" if note else ""))
    lines.append("backward:")
    for row, mark in _rows(view):
        lines.append(f"  v̄{row.index} = {expr_plain(row.local)}".ljust(39) + f" # from {_sources(row)}"
                     + (f"; {mark}" if mark else ""))
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
    from gradlang.explain.stops import brief

    show = lambda e: _latex(_named(view, e))  # noqa: E731
    head = _latex_words(f"At the cut v{cut.row} = {expr_plain(cut.stop)}:")
    if cut.local is None:
        return [head, _latex_words(cut.words)]
    named = _named(view, cut.adjoint)
    value = show(cut.adjoint) if brief(named, expr_plain) == expr_plain(named) else (
        rf"\text{{(a term of {len(expr_plain(named))} characters)}}")
    stated, names = _form(cut, "latex", show)
    value = "" if _states_value(cut) else value
    equation = rf"\bar{{v}}_{{{cut.row}}} = {_latex(cut.local)} = {stated}{value}".rstrip(" =") + (
        rf",\quad \text{{where }} {names}" if names else "")
    sends = _latex_words("would send: " + _sends(cut, view, expr_plain))
    return [head, "\\[\n" + equation + "\n\\]", sends + "\n", _latex_words(cut.words)]


def view_latex(view) -> str:
    """Each table in its own display (aligned needs math mode), the cuts as displays and text."""
    forward = []
    for r in view.tape.forward:
        note = r.operation.replace("_", r"\_") + (", cut" if r.stopped and r.inputs else "")
        forward.append(rf"v_{{{r.index}}} &= {_latex(r.local)} && \text{{{note}}}")
    backward = [rf"\bar{{v}}_{{{r.index}}} &= {_latex(r.local)}" + (rf" && \text{{{mark}}}" if mark else "")
                for r, mark in _rows(view)]
    shown = [f"\\[\n\\begin{{aligned}}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}\n\\]"
             for rows in (forward, backward) if rows]
    definitions = [rf"{{\sloppy definition: \texttt{{{_latex_words(text)}}}\par}}" for text in view.definitions]
    return "\n".join(definitions + shown + [line for cut in view.cuts for line in _latex_cut(cut, view)])


def view_rich(view):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    forward, _ = rich_tables(view.tape).renderables
    backward = Table(title="backward (adjoints, last value first)")
    for column in ("adjoint", "sum of", "from", "note"):
        backward.add_column(column)
    for row, mark in _rows(view):
        backward.add_row(f"v̄{row.index}", Text(expr_plain(row.local)), _sources(row), Text(mark, style="red"))
    lines = []
    for head, under in cut_lines(view):
        lines += [Text(head, style="bold red")] + [Text(f"  {line}") for line in under]
    definitions = [Text(f"definition: {text}") for text in view.definitions]
    return Group(*definitions, forward, backward, *lines)


def _json_cut(cut, view) -> dict:
    from gradlang.render.vector_lines import text

    data = {"row": cut.row, "argument": cut.argument, "stop": expr_plain(cut.stop), "verdict": cut.verdict,
            "text": cut.words}
    if cut.local is None:
        return data
    show = lambda e: expr_plain(_named(view, e))  # noqa: E731
    return {**data, "arriving": expr_plain(cut.local), "adjoint": show(cut.adjoint),
            "form": (_form(cut, "plain", show)[0] + ("" if _states_value(cut) else show(cut.adjoint))).rstrip(" =")
            if cut.form else None,
            "removes": text(cut.removes, show) if cut.removes else None,
            "adds": [{"variable": expr_plain(v), "term": show(t)} for v, t in cut.adds]}


def view_json(view) -> dict:
    """The tables as data (the rows into the cuts marked), and each cut as data."""
    data = json_data(view.tape)
    marks = {row.index: mark for row, mark in _rows(view) if mark}
    data["backward"] = [
        {"index": r.index, "local": expr_plain(r.local), "adjoint": expr_plain(r.adjoint),
         "contributions": [{"from": p, "local": expr_plain(c)} for p, c in r.contributions],
         **({"mark": marks[r.index]} if r.index in marks else {})}
        for r, _ in _rows(view)
    ]
    for entry, simpler in zip(data["gradient"], view.simplified):
        if simpler is not None:
            entry["simplified"] = expr_plain(simpler)
    names = {str(symbol): expr_plain(stop) for stop, symbol in view.names}
    return {"rule": "backward", "call": call_text(view), "definitions": list(view.definitions), **data, "names": names,
            "cuts": [_json_cut(cut, view) for cut in view.cuts]}
