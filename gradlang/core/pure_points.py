"""Lists of points without NumPy (the browser page, docs/web.md): one point at a time.

With NumPy, `at t = [0.0, 0.25, 4.0]` and `linspace` make NumPy arrays, and
substitute._batch evaluates over them at once. Where NumPy cannot be imported
the same statements evaluate each point with numeric.evaluate on Python floats
(expr/pure_numeric.py), and the result is a SymPy vector or matrix of floats,
which every printer shows as the same list of floats. Lists are
one-dimensional here (a scalar given a vector of numbers); the kink warnings
count the points that hit, as the NumPy path does.
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang import limits
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.exact import to_sympy_number
from gradlang.expr.values import describe_shape, elements, from_elements, shape_of


def linspace(a: float, b: float, n: int):
    """numpy.linspace's numbers (i * step + a, the last exactly b) as a SymPy vector of floats."""
    if n == 1:
        return from_elements((1,), [to_sympy_number(a)])
    delta = b - a
    step = delta / (n - 1) if math.isfinite(delta) else math.nan
    if not math.isfinite(delta):  # as _evenly_spaced: a*(1 - t) + b*t where b - a overflows (JAX's formula)
        numbers = [a * (1 - i / (n - 1)) + b * (i / (n - 1)) for i in range(n - 1)]
    elif step == 0:
        numbers = [i / (n - 1) * delta + a for i in range(n - 1)]
    else:
        numbers = [i * step + a for i in range(n - 1)]
    return from_elements((n,), [to_sympy_number(x) for x in numbers + [b]])


def float_list(given, name: str) -> list[float]:
    """The numbers given to a scalar: a vector of numbers (a matrix of points needs NumPy)."""
    items = elements(given)
    if not all(isinstance(e, sp.Expr) and e.is_number and e.is_comparable for e in items):
        raise ValueError(f"a list given to the scalar '{name}' must hold numbers")
    if len(shape_of(given)) != 1:
        raise ValueError("a matrix of points needs NumPy, which is not available here (the browser page); "
                         "give a list of points")
    return [float(e) for e in items]


def batch(value, pairs: list, batch: list, notes: list | None, substitute):
    """The value at each point of the lists in `batch`: shape (points, value...), as substitute._batch.

    `substitute` is substitute.substitute, passed in by it: one point at a time is its own work."""
    from gradlang.tools.kinks import kink_warnings_points

    count = _points(value, batch)
    symbols = [s for s, _ in batch]
    points = [[numbers[i] if len(numbers) > 1 else numbers[0] for _, numbers in batch] for i in range(count)]
    if notes is not None:
        items = [e for e in elements(substitute(value, pairs, [])) if isinstance(e, sp.Expr)]
        notes.extend(w for w in kink_warnings_points(items, symbols, points) if w not in notes)
    outputs = []
    for point in points:
        at = pairs + [(s, sp.Float(x) if math.isfinite(x) else to_sympy_number(x)) for s, x in zip(symbols, point)]
        outputs.extend(_floats(substitute(value, at, [])))
    return from_elements((count,) + shape_of(value), outputs)


def _points(value, batch: list) -> int:
    """How many points the lists make (equal lengths, or length 1), within the limits."""
    lengths = {len(numbers) for _, numbers in batch} - {1}
    if len(lengths) > 1:
        shown = " and ".join(str(len(numbers)) for _, numbers in batch)
        raise ShapeError(f"lists of lengths {shown} cannot be evaluated together (equal lengths, or length 1)")
    count = lengths.pop() if lengths else 1
    if 1 + len(shape_of(value)) > 2:
        raise ShapeError(f"{describe_shape(shape_of(value))} at {count} points would have "
                         f"{1 + len(shape_of(value))} axes; values are at most matrices")
    if count * max(1, len(elements(value))) > limits.MAX_NUMERIC_POINTS:
        raise LimitError(f"evaluating at more than {limits.MAX_NUMERIC_POINTS} points is above the limit")
    return count


def _floats(value) -> list:
    """Each component as a float, as NumPy's array would hold it (a symbol left over is an error there too)."""
    out = []
    for e in elements(value):
        if isinstance(e, sp.Expr) and e.free_symbols:
            names = ", ".join(sorted(str(s) for s in e.free_symbols))
            raise ValueError(f"a list is given, so every symbol needs a value; {names} has none")
        out.append(to_sympy_number(float(e)) if not isinstance(e, sp.Float) else e)
    return out
