"""The targets of an `at` and the values given to them: `x = 2`, `v = [1, 2]`, `v[1] = 3`, `t = linspace(…)`.

A target is matched with its value here: a symbol with a number (a pair), a
declared vector or matrix with a list of its shape (one pair per component),
a scalar symbol with many numbers (a batch, evaluated by NumPy). A later
binding of the same name replaces an earlier one.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import ShapeError, ValueError
from gradlang.expr.values import describe_shape, elements, shape_of, to_symbolic
from gradlang.lazy import has_numpy, np


def _target_index(token) -> int:
    """The index written in an `at` target (`x[1] = …`): the grammar takes any number there."""
    text = str(token)
    if not text.isdigit():
        raise ShapeError(f"an index must be an integer, not {text}")
    if len(text) > 9:
        raise ShapeError(f"index {text[:12]}… is out of range")
    return int(text)


def _component(bound, name: str, indices: list):
    shape = shape_of(bound)
    if len(indices) != len(shape):
        raise ShapeError(f"'{name}' is {describe_shape(shape)}, so {name}[…] needs {len(shape)} indices")
    for index, length in zip(indices, shape):
        if index >= length:
            raise ShapeError(f"index {index} is out of range for length {length}")
    return bound[tuple(indices)] if len(indices) == 2 else bound[indices[0]]


def _pair_up(bound, given, name: str, pairs: list, batch: list) -> None:
    """Match a target with its value: symbol = number, vector = list, or symbol = many numbers."""
    target_shape, given_shape = shape_of(bound), shape_of(given)
    _forget(set(elements(to_symbolic(bound))), pairs, batch)
    if target_shape == ():
        if given_shape == ():
            pairs.append((bound, given))
        else:
            batch.append((bound, _float_array(given, name)))
        return
    if target_shape != given_shape:
        raise ShapeError(f"'{name}' is {describe_shape(target_shape)} but is given {describe_shape(given_shape)}")
    given = to_symbolic(given)
    pairs.extend(zip(elements(bound), elements(given)))


def _forget(symbols: set, pairs: list, batch: list) -> None:
    """Drop earlier values of these symbols: in `t at t = 5, t = [1, 2]` the last one is used, as the warning says."""
    pairs[:] = [(s, v) for s, v in pairs if s not in symbols]
    batch[:] = [(s, a) for s, a in batch if s not in symbols]


def _float_array(given, name: str) -> np.ndarray:
    if isinstance(given, np.ndarray):
        return given
    if not has_numpy():  # the browser page: a list of floats, evaluated point by point (pure_points.py)
        from gradlang.core.pure_points import float_list

        return float_list(given, name)
    items = elements(given)
    if not all(isinstance(e, sp.Expr) and e.is_number and (e.is_comparable or e is sp.nan) for e in items):
        raise ValueError(f"a list given to the scalar '{name}' must hold numbers")  # nan is one (IEEE), I is not
    return np.array([float(e) for e in items], dtype=float).reshape(shape_of(given))
