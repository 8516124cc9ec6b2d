"""Plots as PNG images, through matplotlib (an optional extra, imported only when an image is asked for).

`--plot-dir` and the notebook ask for images; the text formats draw the
Unicode chart of chart.py instead.
"""

from __future__ import annotations

import io

from gradlang.lazy import np
from gradlang.render.chart import padded
from gradlang.tools.plot import INSTALL_HINT, MissingExtraError, drawable, y_limits

LINESTYLES = ("-", "--", ":", "-.")  # overlapping curves stay visible


def write_png(plot, path, width_px: int = 800, height_px: int = 500, dpi: int = 100):
    """Write a PNG of exactly width_px × height_px pixels (matplotlib, Agg); returns the path."""
    figure = _figure(plot, width_px, height_px, dpi)
    figure.savefig(path, format="png", dpi=dpi)
    return path


def png_bytes(plot, width_px: int = 800, height_px: int = 500, dpi: int = 100) -> bytes:
    buffer = io.BytesIO()
    write_png(plot, buffer, width_px, height_px, dpi)
    return buffer.getvalue()


def _figure(plot, width_px: int, height_px: int, dpi: int):
    Figure, FigureCanvasAgg = _matplotlib()
    figure = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for k, (label, row) in enumerate(zip(plot.labels, plot.ys)):
        shown = np.where(drawable(row), row, np.nan)
        axes.plot(plot.xs, shown, LINESTYLES[k % len(LINESTYLES)], label=label, linewidth=2)
    low, high = y_limits(plot.ys)
    axes.set_xlim(plot.a, plot.b)
    axes.set_ylim(*padded(low, high))
    axes.axhline(0.0, color="0.6", linewidth=0.8, zorder=0)
    axes.grid(True, alpha=0.3)
    axes.set_xlabel(str(plot.t))
    axes.set_ylabel(plot.labels[0] if len(plot.labels) == 1 else "value")
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
