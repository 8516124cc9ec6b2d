"""Reverse-mode tapes (gradlang.dag.tape) and `explain backward` views in the four formats.

Registered as the renderers of `Tape` (records.py); tape_view.py's, of `BackwardView`, draw these tables.

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
from gradlang.render.plain import derivation_text as expr_plain
from gradlang.render.records import renders
from gradlang.expr.walk import dag_atoms

CUT = "cut: no gradient flows back"


def size_text(row) -> str:
    """ℝ³ for a vector row of a folded tape (explain/backward/fold.py), "" for a scalar row."""
    size = getattr(row, "size", 1)
    return "" if size == 1 else " ℝ" + str(size).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _forward_lines(tape: Tape, show=expr_plain) -> list[tuple[str, str, str, str]]:
    return [
        (f"v{r.index}", r.operation + size_text(r), show(r.local), CUT if r.stopped and r.inputs else "")
        for r in tape.forward
    ]


def _sources(row) -> str:
    return ", ".join("output" if parent is None else f"v{parent}" for parent, _ in row.contributions)


@renders("Tape", "plain")
def plain_text(printer, tape: Tape) -> str:
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


@renders("Tape", "latex")
def latex_text(printer, tape: Tape) -> str:
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


@renders("Tape", "pretty")
def rich_tables(printer, tape: Tape):
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


@renders("Tape", "json")
def json_data(printer, tape: Tape) -> dict:
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
