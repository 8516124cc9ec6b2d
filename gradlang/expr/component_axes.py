"""Reductions and normalisations of a matrix along one axis (language reference, section 6).

As NumPy and JAX count axes: axis 0 runs down each column (one result per
column), axis 1 along each row (one result per row). `sum(M, 1)` sums each
row; `softmax(M, 1)` normalises each row and keeps M's shape. Each line is
handed to the same function the whole-value builtin uses (sp.Add, Maximum,
LogSumExp, Softmax), so an axis form is made of the same primitives as the
form without one.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.component_vectors import log_softmax_line
from gradlang.expr.values import describe_shape, elements, from_elements, shape_of, to_symbolic
from gradlang.lazy import deferred_module

primitives = deferred_module("gradlang.expr.primitives")  # the records on first use (issue #41)


def axis_number(value) -> int:
    """0 or 1 from an exact integer value, or -1, -2 counting from the end (section 3b); else a ValueError."""
    if not (isinstance(value, sp.Expr) and value.is_Integer and int(value) in (-2, -1, 0, 1)):
        raise ValueError(f"an axis is 0 (down each column) or 1 (along each row), or -1, -2 from the end, not {value}")
    return int(value)


def lines(value, axis: int, name: str) -> list[list]:
    """The columns (axis 0) or rows (axis 1) of a matrix; a vector is one line along its axis 0."""
    value = to_symbolic(value)
    shape = shape_of(value)
    if len(shape) == 1 and axis == 0:
        return [elements(value)]
    if len(shape) != 2:
        raise ShapeError(f"{name} with axis {axis} takes a matrix, not {describe_shape(shape)}")
    rows, columns = shape
    if axis == 1:
        return [[value[i, j] for j in range(columns)] for i in range(rows)]
    return [[value[i, j] for i in range(rows)] for j in range(columns)]


def _reduced(value, axis: int, name: str, reduce) -> object:
    """One result per line: a vector (a vector's axis 0 gives a scalar, as NumPy's does)."""
    results = [reduce(line) for line in lines(value, axis, name)]
    if len(shape_of(to_symbolic(value))) == 1:
        return results[0]
    return from_elements((len(results),), results)


def _normalised(value, axis: int, name: str, normalise):
    """normalise(line) -> one value per component, put back where the line came from."""
    value = to_symbolic(value)
    parts = [normalise(line) for line in lines(value, axis, name)]
    shape = shape_of(value)
    if len(shape) == 1:
        return from_elements(shape, parts[0])
    if axis == 1:
        return from_elements(shape, [e for part in parts for e in part])
    return from_elements(shape, [parts[j][i] for i in range(shape[0]) for j in range(shape[1])])


def _build(name: str):
    return primitives.lookup(name).build


def softmax_line(items: list) -> list:
    """softmax of one line: each component Softmax(k, line), the primitive's own."""
    return _build("softmax")(*items)


def check_row_arguments(shape) -> None:
    """Each of a row's n results holds the whole row (softmax(k, v0, …, vn)): n² arguments a row, bounded."""
    rows, length = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0] if shape else 1)
    if rows * length * length > limits.MAX_ROW_ARGUMENTS:
        raise LimitError(f"its {rows * length} components would hold {rows * length * length} arguments together "
                         f"(each holds its whole row), above the limit of {limits.MAX_ROW_ARGUMENTS}")


REDUCE = {
    "sum": lambda line: sp.Add(*line),
    "mean": lambda line: sp.Add(*line) / len(line),
    "max": lambda line: _build("max")(*line),
    "min": lambda line: _build("min")(*line),
    "logsumexp": lambda line: _build("logsumexp")(*line),
}
NORMALISE = {"softmax": softmax_line, "log_softmax": log_softmax_line}
NAMES = frozenset(REDUCE) | frozenset(NORMALISE)


def along(name: str, value, axis: int):
    """name(value, axis) for a name of NAMES: sum(M, 1) is the vector of row sums, softmax(M, -1) normalises rows."""
    if axis < 0:  # counted from the end, as NumPy: -1 is a matrix's axis 1 and a vector's axis 0
        rank = len(shape_of(to_symbolic(value)))
        if axis + rank < 0:
            raise ValueError(f"{name} has no axis {axis} on {describe_shape(shape_of(to_symbolic(value)))}")
        axis += rank
    if name in REDUCE:
        return _reduced(value, axis, name, REDUCE[name])
    return _normalised(value, axis, name, NORMALISE[name])


def rows_of(value, name: str, normalise=log_softmax_line):
    """A normalisation without an axis: each row of a matrix (as softmax(M) is), or the vector."""
    value = to_symbolic(value)
    if not shape_of(value):
        raise ShapeError(f"{name} takes a vector or a matrix, not a scalar")
    return _normalised(value, 1 if len(shape_of(value)) == 2 else 0, name, normalise)


__all__ = ["NAMES", "along", "axis_number", "check_row_arguments", "lines", "rows_of", "softmax_line"]
