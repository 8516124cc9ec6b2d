"""gradcheck reports and plots, as attachments to a Result, in the four formats.

Registered as the renderers of `GradcheckReport` and `Plot` (records.py; the text charts are chart.py's).
A report is a table (component, symbolic value, frozen and true finite
differences, relative error) under a one-line verdict; a plot is the Unicode
chart of chart.py in the text formats, one line of LaTeX, and every sampled
number in JSON.
"""

from __future__ import annotations

import math

from gradlang.render.json import json_number
from gradlang.render.records import renders


def tick(value: float, spread: float = 0.0) -> str:
    """A tick label: four significant digits, rounded to a thousandth of the range shown."""
    if spread > 0:
        unit = 10.0 ** (math.floor(math.log10(spread)) - 3)
        value = round(value / unit) * unit
    text = f"{value:.4g}"
    return "0" if text == "-0" else text


HEADINGS = ("component", "symbolic", "frozen finite diff.", "true finite diff.", "rel. error")


def _fmt(x) -> str:
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.6g}" if abs(x) >= 1e-4 or x == 0 else f"{x:.2e}"


# --- gradcheck ----------------------------------------------------------------------


def header(report) -> str:
    verdict = "agrees" if report.passed else "DISAGREES"
    return (
        f"gradcheck: the surrogate gradient {verdict} with frozen finite differences "
        f"(largest relative error {_fmt(report.value)})"
    )


def footer(report) -> str:
    changed = [r.component for r in report.rows if r.stops_changed]
    if not changed:
        return "the stops change nothing here: true finite differences equal the frozen ones"
    return (
        "* the true finite difference differs in " + ", ".join(changed)
        + ": the stops (or a jump of a piecewise-constant function) change the gradient there"
    )


def cells(report) -> list[list[str]]:
    return [
        [r.component, _fmt(r.symbolic), _fmt(r.frozen_fd), _fmt(r.true_fd) + (" *" if r.stops_changed else ""),
         _fmt(r.relative_error)]
        for r in report.rows
    ]


@renders("GradcheckReport", "plain")
def gradcheck_plain(printer, report) -> str:
    table = [list(HEADINGS)] + cells(report)
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADINGS))]
    lines = [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([header(report), *lines, footer(report)])


def _escape(text: str) -> str:
    return text.replace("_", r"\_").replace("*", r"{}^{*}")


@renders("GradcheckReport", "latex")
def gradcheck_latex(printer, report) -> str:
    rows = [" & ".join(r"\text{" + _escape(c) + "}" for c in HEADINGS)]
    rows += [
        " & ".join([r"\mathtt{" + _escape(row[0]) + "}"] + [_escape(c) for c in row[1:]]) for row in cells(report)
    ]
    return r"\begin{array}{lrrrr} " + r" \\ ".join(rows) + r" \end{array}"


@renders("GradcheckReport", "pretty")
def gradcheck_rich(printer, report):
    from rich.table import Table

    table = Table(title=header(report), caption=footer(report))
    for i, heading in enumerate(HEADINGS):
        table.add_column(heading, justify="left" if i == 0 else "right")
    for row, shown in zip(report.rows, cells(report)):
        table.add_row(*shown, style="yellow" if row.stops_changed else None)
    return table


@renders("GradcheckReport", "json")
def gradcheck_json(printer, report) -> dict:
    return {
        "kind": "gradcheck",
        "max_relative_error": json_number(float(report.value)),
        "passed": report.passed,
        "point": {name: json_number(v) for name, v in report.point},
        "rows": [_row_json(r) for r in report.rows],
    }


def _row_json(row) -> dict:
    numbers = {key: json_number(getattr(row, key)) for key in ("symbolic", "frozen_fd", "true_fd", "relative_error", "step")}
    return {"component": row.component, **numbers, "stops_changed": row.stops_changed}


# --- plots ------------------------------------------------------------------------------


@renders("Plot", "latex")
def plot_latex(printer, plot) -> str:
    """A one-line description: which expressions, over which interval, through the calling printer."""
    show = printer._print
    shown = r",\ ".join(show(e) for e in plot.exprs)
    return rf"\text{{plot of }} {shown} \text{{ for }} {show(plot.t)} \in [{tick(plot.a)}, {tick(plot.b)}]"


@renders("Plot", "json")
def plot_json(printer, plot) -> dict:
    return {
        "kind": "plot",
        "variable": str(plot.t),
        "interval": [plot.a, plot.b],
        "x": [json_number(x) for x in plot.xs],
        "series": [{"label": label, "y": [json_number(y) for y in row]} for label, row in zip(plot.labels, plot.ys)],
    }
