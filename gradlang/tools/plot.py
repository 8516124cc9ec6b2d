"""plot(e1, e2, …, t, a, b): expressions of one scalar symbol drawn on [a, b].

`make_plot` evaluates every expression through the compiled NumPy path
(`gradlang.numeric`, where stop_gradient is the identity) on a fine grid and
returns a `Plot` record: plain data. gradlang.render prints it (a Unicode
chart in render/chart.py, a PNG through matplotlib in render/image.py). The
legend names each expression in gradlang source with stops written `sg(…)`,
so the reader sees where the gradient was stopped. The y range a drawing shows
(`y_limits`) is decided here, because breaking the curves at jumps needs it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import sympy as sp

from gradlang.expr import numeric
from gradlang.errors import LimitError, ValueError
from gradlang.expr.walk import dag_atoms
from gradlang.expr.source import to_source
from gradlang.expr.values import from_elements

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
    return to_source(value)


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

    @property
    def value(self):
        """What `plot(…)` evaluates to: the vector of its expressions (`_` in the REPL)."""
        return from_elements((len(self.exprs),), list(self.exprs))

    def __repr__(self) -> str:
        return f"Plot({list(self.labels)!r}, {self.t}, {self.a:g}, {self.b:g})"


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
