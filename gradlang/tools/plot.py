"""plot(e1, e2, …, t, a, b): expressions of one scalar symbol drawn on [a, b].

`make_plot` evaluates every expression through the compiled NumPy path
(`gradlang.numeric`, where stop_gradient is the identity) on a fine grid and
returns a `Plot` record: plain data. gradlang.render prints it (a Unicode
chart in render/chart.py, a PNG through matplotlib in render/image.py). The
legend names each expression in gradlang source with stops written `sg(…)`,
so the reader sees where the gradient was stopped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import sympy as sp

from gradlang.expr import numeric
from gradlang.errors import LimitError, ValueError
from gradlang.expr.source import to_source

MAX_SERIES = 16
MAX_POINTS = 100_000
INSTALL_HINT = "pip install 'gradlang[plot]'"


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
    if not 2 <= int(points) <= MAX_POINTS:
        raise LimitError(f"plot takes between 2 and {MAX_POINTS} points, got {points}")
    labels = list(labels or [])
    labels += [None] * (len(exprs) - len(labels))
    labels = [legend_label(text or _plain(e)) for text, e in zip(labels, exprs)]
    xs = np.linspace(a, b, int(points))
    ys = np.stack(numeric.evaluate(exprs, [t], [xs]))
    xs.setflags(write=False)
    ys.setflags(write=False)
    return Plot(tuple(exprs), tuple(labels), t, a, b, xs, ys)


def _checked(expr, t: sp.Symbol) -> sp.Expr:
    """A scalar expression whose only free symbol is t, or a ValueError saying what is wrong."""
    if isinstance(expr, (int, float)):
        return sp.Float(expr)
    if not isinstance(expr, sp.Expr):
        raise ValueError(f"plot draws numbers, and {_plain(expr)} is not a number")
    others = sorted(str(s) for s in expr.free_symbols - {t})
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

    def __repr__(self) -> str:
        return f"Plot({list(self.labels)!r}, {self.t}, {self.a:g}, {self.b:g})"
