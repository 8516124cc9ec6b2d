"""Plots as a Unicode chart: one character per series, y and x ticks, a legend.

Written here rather than borrowed, because a few dozen lines give exactly
the fixed width, distinct characters per series and colour-free output that
tests and plain-text transcripts need. `chart_lines` gives (text, style)
pieces; the plain printer drops the styles, the pretty printer keeps them.
"""

from __future__ import annotations

from gradlang.lazy import np
from gradlang.render.report import tick
from gradlang.render.records import renders
from gradlang.tools.plot import DRAWABLE, y_limits

CHART_WIDTH = 72          # characters in each line of the Unicode chart, at most
CHART_ROWS = 21           # rows of the plotting area: five y ticks at the quarters
MARKERS = "•×+o*^~="      # one per series, in order
OVERLAP = "#"             # a cell that several series pass through
STYLES = ("cyan", "magenta", "yellow", "green", "red", "blue", "bright_white", "bright_black")


def chart_lines(plot, width: int = CHART_WIDTH, rows: int = CHART_ROWS) -> list:
    """The chart as lines of (text, style) pieces."""
    return _Chart(plot, width, rows).lines()


@renders("Plot", "plain")
def chart_plain(printer, plot, width: int = CHART_WIDTH, rows: int = CHART_ROWS) -> str:
    """The chart without styles, trailing blanks removed."""
    return "\n".join("".join(text for text, _ in line).rstrip() for line in chart_lines(plot, width, rows))


@renders("Plot", "pretty")
def chart_rich(printer, plot, width: int = CHART_WIDTH, rows: int = CHART_ROWS):
    """The same chart as rich Text, each series in its own colour."""
    from rich.text import Text

    text = Text()
    for number, line in enumerate(chart_lines(plot, width, rows)):
        if number:
            text.append("\n")
        kept = len("".join(piece for piece, _ in line).rstrip())
        for piece, style in line:
            text.append(piece[: max(kept, 0)], style=style or "")
            kept -= len(piece)
    return text


# --- scales ---------------------------------------------------------------------


def padded(low: float, high: float) -> tuple[float, float]:
    margin = 0.05 * (high - low)
    return low - margin, high + margin


# --- the Unicode chart ------------------------------------------------------------


class _Chart:
    """A character grid: each sample a cell, consecutive samples joined, ticks and legend around it."""

    def __init__(self, plot, width: int, rows: int):
        self.plot = plot
        self.rows = rows
        self.low, self.high = y_limits(plot.ys)
        self.y_ticks = [self.high - (self.high - self.low) * k / 4 for k in range(5)]
        self.margin = max(len(tick(v, self.high - self.low)) for v in self.y_ticks)
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
            label = tick(value, self.high - self.low) if value is not None else ""
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
            label = tick(self.plot.a + (self.plot.b - self.plot.a) * k / 4, self.plot.b - self.plot.a)
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
