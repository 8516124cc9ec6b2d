"""plot(e1, e2, …, t, a, b): expressions of one scalar symbol drawn on [a, b].

`make_plot` evaluates every expression through the compiled NumPy path
(`gradlang.numeric`, where stop_gradient is the identity) on a fine grid and
returns a `Plot` record. The record renders itself the ways a Result's
attachment must: a Unicode chart for terminals (`to_plain`, `to_rich`; written
here rather than borrowed, because a few dozen lines give exactly the fixed
width, distinct characters per series and colour-free output that tests and
plain-text transcripts need), a one-line LaTeX description, JSON numbers, and a
PNG through matplotlib — an optional extra, imported only when an image is
asked for. The legend names each expression in gradlang source with stops
written `sg(…)`, so the reader sees where the gradient was stopped.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass

import numpy as np
import sympy as sp

from gradlang.expr import numeric
from gradlang.errors import LimitError, ValueError
from gradlang.expr.walk import dag_atoms

CHART_WIDTH = 72          # characters in each line of the Unicode chart, at most
CHART_ROWS = 21           # rows of the plotting area: five y ticks at the quarters
MARKERS = "•×+o*^~="      # one per series, in order
OVERLAP = "#"             # a cell that several series pass through
STYLES = ("cyan", "magenta", "yellow", "green", "red", "blue", "bright_white", "bright_black")
LINESTYLES = ("-", "--", ":", "-.")  # PNG: overlapping curves stay visible
MAX_SERIES = 16
MAX_POINTS = 100_000
DRAWABLE = 1e300          # values and interval widths beyond this cannot be scaled onto a chart
INSTALL_HINT = "pip install matplotlib"  # gradlang is installed from a clone, so no extra to name


class MissingExtraError(ValueError):
    """An optional dependency (matplotlib) is needed and not installed."""


def legend_label(text: str) -> str:
    """An expression's text for a legend: stop_gradient(…) written as sg(…)."""
    return re.sub(r"\bstop_gradient\(", "sg(", " ".join(text.split()))


def make_plot(exprs: list, labels: list | None, t: sp.Symbol, a: float, b: float, points: int = 400) -> "Plot":
    """Evaluate scalar expressions of `t` on `points` evenly spaced values in [a, b]."""
    exprs = [_checked(e, t) for e in exprs]
    if not exprs:
        raise ValueError("plot needs at least one expression: plot(e1, …, t, a, b)")
    if len(exprs) > MAX_SERIES:
        raise LimitError(f"plot draws at most {MAX_SERIES} expressions, got {len(exprs)}")
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"plot needs a finite interval with a < b, got [{a:g}, {b:g}]")
    if not 1 / DRAWABLE <= b - a <= DRAWABLE:
        raise ValueError(
            f"plot draws intervals between {1 / DRAWABLE:g} and {DRAWABLE:g} wide, got [{a:g}, {b:g}]"
        )
    if not 2 <= int(points) <= MAX_POINTS:
        raise LimitError(f"plot takes between 2 and {MAX_POINTS} points, got {points}")
    labels = list(labels or [])
    labels += [None] * (len(exprs) - len(labels))
    labels = [legend_label(text or _plain(e)) for text, e in zip(labels, exprs)]
    xs = np.linspace(a, b, int(points))
    ys = np.stack(numeric.evaluate(exprs, [t], [xs]))
    xs, ys = break_at_jumps(exprs, t, xs, ys)
    xs.setflags(write=False)
    ys.setflags(write=False)
    return Plot(tuple(exprs), tuple(labels), t, a, b, xs, ys)


JUMP_SHARE = 0.01   # a step between samples smaller than this share of the y range is never a break
BEND_SHARE = 0.25   # a curve whose thirds stray this far from the chord has jumped between the samples


def break_at_jumps(exprs: list, t: sp.Symbol, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Samples with a gap (NaN) wherever a curve jumps or has a pole between two samples.

    Joining consecutive samples would draw one stroke through the pole of 1/t
    or up the step of sign(t). Each interval is probed at its thirds: a
    continuous curve sampled this finely stays near the chord between the two
    samples, a jump or a pole does not. Where any curve breaks, one sample is
    inserted at the interval's first third: NaN for the curves that break
    there (both drawings leave a gap at NaN), the probed value for the others.
    """
    if len(xs) < 2:
        return xs, ys
    step = xs[1:] - xs[:-1]
    probes = [xs[:-1] + step * share for share in (1 / 3, 2 / 3)]
    with np.errstate(all="ignore"):
        first, second = (np.stack(numeric.evaluate(exprs, [t], [p])).reshape(ys.shape[0], -1) for p in probes)
        breaks = _breaks(ys, first, second)
    where = np.flatnonzero(breaks.any(axis=0))
    if where.size == 0:
        return xs, ys
    inserted = np.where(breaks[:, where], np.nan, first[:, where])
    return np.insert(xs, where + 1, probes[0][where]), np.insert(ys, where + 1, inserted, axis=1)


def _breaks(ys: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """(series, intervals) booleans: where the curve leaves the chord between two finite samples."""
    left, right = ys[:, :-1], ys[:, 1:]
    jump = np.abs(right - left)
    low, high = y_limits(ys)
    chord = [left + (right - left) * share for share in (1 / 3, 2 / 3)]
    stray = np.maximum(np.abs(first - chord[0]), np.abs(second - chord[1]))
    finite = np.isfinite(left) & np.isfinite(right)
    unfinished = ~(np.isfinite(first) & np.isfinite(second))
    return finite & (jump > JUMP_SHARE * (high - low)) & (unfinished | (stray > BEND_SHARE * jump))


def _checked(expr, t: sp.Symbol) -> sp.Expr:
    """A scalar expression whose only free symbol is t, or a ValueError saying what is wrong."""
    if isinstance(expr, (int, float)):
        return sp.Float(expr)
    if not isinstance(expr, sp.Expr):
        raise ValueError(f"plot draws numbers, and {_plain(expr)} is not a number")
    others = sorted(str(s) for s in dag_atoms(expr, sp.Symbol) - {t})
    if others:
        raise ValueError(
            f"plot draws expressions of {t} alone, and {_plain(expr)} also depends on {', '.join(others)}: "
            "give it a value first (for example `x = 2` before the plot)"
        )
    return expr


def _plain(value) -> str:
    from gradlang.render.plain import to_plain

    return to_plain(value)


@dataclass(frozen=True, eq=False)
class Plot:
    """Expressions of `t` sampled on [a, b]: xs has shape (n,), ys shape (series, n)."""

    exprs: tuple
    labels: tuple
    t: sp.Symbol
    a: float
    b: float
    xs: np.ndarray
    ys: np.ndarray

    def __repr__(self) -> str:
        return f"Plot({list(self.labels)!r}, {self.t}, {self.a:g}, {self.b:g})"

    # --- text ---------------------------------------------------------------

    def to_plain(self, width: int = CHART_WIDTH, rows: int = CHART_ROWS) -> str:
        """The Unicode chart: one character per series, y and x ticks, a legend."""
        return "\n".join("".join(text for text, _ in line).rstrip() for line in self._chart(width, rows))

    def to_rich(self, width: int = CHART_WIDTH, rows: int = CHART_ROWS):
        """The same chart as rich Text, each series in its own colour."""
        from rich.text import Text

        text = Text()
        for number, line in enumerate(self._chart(width, rows)):
            if number:
                text.append("\n")
            kept = len("".join(piece for piece, _ in line).rstrip())
            for piece, style in line:
                text.append(piece[: max(kept, 0)], style=style or "")
                kept -= len(piece)
        return text

    def _chart(self, width: int, rows: int) -> list:
        return _Chart(self, width, rows).lines()

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.to_plain())

    # --- LaTeX, JSON ------------------------------------------------------------

    def to_latex(self) -> str:
        """A one-line description: which expressions, over which interval."""
        from gradlang.render.latex import to_latex

        shown = r",\ ".join(to_latex(e) for e in self.exprs)
        return rf"\text{{plot of }} {shown} \text{{ for }} {to_latex(self.t)} \in [{_tick(self.a)}, {_tick(self.b)}]"

    def to_json(self) -> dict:
        from gradlang.render.json import encode_float

        return {
            "kind": "plot",
            "variable": str(self.t),
            "interval": [self.a, self.b],
            "x": [encode_float(x) for x in self.xs],
            "series": [
                {"label": label, "y": [encode_float(y) for y in row]} for label, row in zip(self.labels, self.ys)
            ],
        }

    # --- images -------------------------------------------------------------

    def to_png(self, path, width_px: int = 800, height_px: int = 500, dpi: int = 100):
        """Write a PNG of exactly width_px × height_px pixels (matplotlib, Agg); returns the path."""
        figure = self._figure(width_px, height_px, dpi)
        figure.savefig(path, format="png", dpi=dpi)
        return path

    def png_bytes(self, width_px: int = 800, height_px: int = 500, dpi: int = 100) -> bytes:
        buffer = io.BytesIO()
        self.to_png(buffer, width_px, height_px, dpi)
        return buffer.getvalue()

    def _repr_png_(self):
        """The image for Jupyter; None without matplotlib, so the text chart is shown instead."""
        try:
            return self.png_bytes()
        except MissingExtraError:
            return None

    def _figure(self, width_px: int, height_px: int, dpi: int):
        Figure, FigureCanvasAgg = _matplotlib()
        figure = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        for k, (label, row) in enumerate(zip(self.labels, self.ys)):
            shown = np.where(drawable(row), row, np.nan)
            axes.plot(self.xs, shown, LINESTYLES[k % len(LINESTYLES)], label=label, linewidth=2)
        low, high = y_limits(self.ys)
        axes.set_xlim(self.a, self.b)
        axes.set_ylim(*_padded(low, high))
        axes.axhline(0.0, color="0.6", linewidth=0.8, zorder=0)
        axes.grid(True, alpha=0.3)
        axes.set_xlabel(str(self.t))
        axes.set_ylabel(self.labels[0] if len(self.labels) == 1 else "value")
        axes.legend(loc="best")
        figure.tight_layout()
        return figure


def _matplotlib():
    """matplotlib's Figure and Agg canvas (no pyplot, no global backend), or an install hint."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError(f"plot images need matplotlib, which is not installed: {INSTALL_HINT}") from None
    return Figure, FigureCanvasAgg


# --- scales ---------------------------------------------------------------------


def drawable(ys: np.ndarray) -> np.ndarray:
    """Where values can be drawn: finite and small enough that their spread is finite too."""
    return np.abs(ys) <= DRAWABLE


def y_limits(ys: np.ndarray) -> tuple[float, float]:
    """The y range shown: all finite values, unless a few spikes would flatten the rest."""
    finite = ys[drawable(ys)]
    if finite.size == 0:
        return -1.0, 1.0
    low, high = float(finite.min()), float(finite.max())
    inner_low, inner_high = (float(q) for q in np.percentile(finite, [2, 98]))
    if inner_high > inner_low and high - low > 20 * (inner_high - inner_low):
        # Near a pole (1/t at 0) the full range hides the curve; clip as a human would.
        margin = 0.25 * (inner_high - inner_low)
        low, high = inner_low - margin, inner_high + margin
    if high == low:
        spread = max(abs(low) * 0.1, 1.0)
        low, high = low - spread, high + spread
    return low, high


def _padded(low: float, high: float) -> tuple[float, float]:
    margin = 0.05 * (high - low)
    return low - margin, high + margin


def _tick(value: float, spread: float = 0.0) -> str:
    """A tick label: four significant digits, rounded to a thousandth of the range shown."""
    if spread > 0:
        unit = 10.0 ** (math.floor(math.log10(spread)) - 3)
        value = round(value / unit) * unit
    text = f"{value:.4g}"
    return "0" if text == "-0" else text


# --- the Unicode chart ------------------------------------------------------------


class _Chart:
    """A character grid: each sample a cell, consecutive samples joined, ticks and legend around it."""

    def __init__(self, plot: Plot, width: int, rows: int):
        self.plot = plot
        self.rows = rows
        self.low, self.high = y_limits(plot.ys)
        self.y_ticks = [self.high - (self.high - self.low) * k / 4 for k in range(5)]
        self.margin = max(len(_tick(v, self.high - self.low)) for v in self.y_ticks)
        # Columns: 4k + 1 of them, so the five x ticks fall exactly on cells.
        room = width - self.margin - 2 - 4
        self.columns = max(5, (room - 1) // 4 * 4 + 1)
        self.cells: dict = {}

    def lines(self) -> list:
        for k, row in enumerate(self.plot.ys):
            self._draw(k, row)
        return self._grid() + [self._axis(), self._x_labels(), self._x_name()] + self._legend()

    # --- drawing ------------------------------------------------------------

    def _position(self, x: float, y: float) -> tuple[float, float]:
        column = (x - self.plot.a) / (self.plot.b - self.plot.a) * (self.columns - 1)
        row = (self.high - y) / (self.high - self.low) * (self.rows - 1)
        return column, row

    def _draw(self, series: int, ys: np.ndarray) -> None:
        previous = None
        for x, y in zip(self.plot.xs, ys):
            if not abs(y) <= DRAWABLE:
                previous = None
                continue
            point = self._position(x, y)
            self._segment(series, previous or point, point)
            previous = point

    def _segment(self, series: int, start, end) -> None:
        """Cells on the straight line from start to end (a DDA line), clipped to the chart."""
        clipped = self._clip(start, end)
        if clipped is None:
            return
        (c0, r0), (c1, r1) = clipped
        steps = int(max(abs(c1 - c0), abs(r1 - r0), 1.0) * 2)
        for i in range(steps + 1):
            column = round(c0 + (c1 - c0) * i / steps)
            row = round(r0 + (r1 - r0) * i / steps)
            if 0 <= row < self.rows and 0 <= column < self.columns:
                self.cells.setdefault((row, column), set()).add(series)

    def _clip(self, start, end):
        """The part of the segment within the chart's rows (values past a clipped range are far off)."""
        (c0, r0), (c1, r1) = start, end
        low, high = -0.5, self.rows - 0.5
        if r0 == r1:
            return (start, end) if low <= r0 <= high else None
        s0, s1 = sorted(((low - r0) / (r1 - r0), (high - r0) / (r1 - r0)))
        s0, s1 = max(s0, 0.0), min(s1, 1.0)
        if s0 > s1:
            return None
        return [(c0 + (c1 - c0) * s, r0 + (r1 - r0) * s) for s in (s0, s1)]

    # --- text -----------------------------------------------------------------

    def _cell(self, row: int, column: int, zero_row) -> tuple:
        series = self.cells.get((row, column))
        if not series:
            return ("┈", "dim") if row == zero_row else (" ", None)
        if len(series) > 1:
            return OVERLAP, "bold"
        k = next(iter(series))
        return MARKERS[k % len(MARKERS)], STYLES[k % len(STYLES)]

    def _grid(self) -> list:
        tick_rows = {round(k * (self.rows - 1) / 4): value for k, value in enumerate(self.y_ticks)}
        zero_row = None
        if self.low < 0 < self.high:
            zero_row = round(self._position(self.plot.a, 0.0)[1])
        lines = []
        for row in range(self.rows):
            value = tick_rows.get(row)
            label = _tick(value, self.high - self.low) if value is not None else ""
            line = [(f"{label:>{self.margin}} " + ("┤" if value is not None else "│"), "dim")]
            line += [self._cell(row, column, zero_row) for column in range(self.columns)]
            lines.append(line)
        return lines

    def _tick_columns(self) -> list[int]:
        return [k * (self.columns - 1) // 4 for k in range(5)]

    def _axis(self) -> list:
        ticks = set(self._tick_columns())
        axis = "".join("┬" if c in ticks else "─" for c in range(self.columns))
        return [(" " * (self.margin + 1) + "└" + axis, "dim")]

    def _x_labels(self) -> list:
        offset = self.margin + 2
        text = ""
        for k, column in enumerate(self._tick_columns()):
            label = _tick(self.plot.a + (self.plot.b - self.plot.a) * k / 4, self.plot.b - self.plot.a)
            start = max(offset + column - len(label) // 2, len(text) + 1 if text else 0)
            text = text.ljust(start) + label
        return [(text, "dim")]

    def _x_name(self) -> list:
        name = str(self.plot.t)
        return [(" " * (self.margin + 2 + (self.columns - len(name)) // 2) + name, "dim")]

    def _legend(self) -> list:
        room = self.margin + 2 + self.columns - 4
        lines = []
        for k, label in enumerate(self.plot.labels):
            shown = label if len(label) <= room else label[: room - 1] + "…"
            if not np.isfinite(self.plot.ys[k]).any():
                shown += " (no finite values)"
            lines.append([("  ", None), (MARKERS[k % len(MARKERS)], STYLES[k % len(STYLES)]), (" " + shown, None)])
        if any(len(s) > 1 for s in self.cells.values()):
            lines.append([("  ", None), (OVERLAP, "bold"), (" several series in one cell", "dim")])
        return lines
