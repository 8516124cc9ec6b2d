"""Shapes of gradlang values: scalar, vector, matrix, and the elementwise rules.

Scalars are SymPy expressions, vectors rank-1 `ImmutableDenseNDimArray`s,
matrices `ImmutableMatrix`es, and many-numbers results NumPy arrays. Arithmetic
broadcasts as NumPy does (section 3b of version 3); any other mismatch is a
ShapeError naming both shapes.
"""

from __future__ import annotations

import itertools
import math
import warnings

import sympy as sp
from sympy.logic.boolalg import Boolean
from sympy.utilities.exceptions import SymPyDeprecationWarning

from gradlang import limits
from gradlang.errors import LimitError, ShapeError
from gradlang.lazy import np

Shape = tuple


def shape_of(value) -> Shape:
    if isinstance(value, np.ndarray):
        return value.shape
    if isinstance(value, sp.MatrixBase):
        return tuple(value.shape)
    if isinstance(value, sp.NDimArray):
        return tuple(value.shape)
    return ()


def is_scalar(value) -> bool:
    return shape_of(value) == ()


def is_condition(value) -> bool:
    return isinstance(value, Boolean) and not isinstance(value, sp.Expr)


def describe_shape(shape: Shape) -> str:
    if len(shape) == 0:
        return "a scalar"
    if len(shape) == 1:
        return f"a vector of length {shape[0]}"
    if len(shape) == 2:
        return f"a {shape[0]}×{shape[1]} matrix"
    return f"a {'×'.join(str(n) for n in shape)} tensor"  # rank 3 and more (section 3b)


def elements(value) -> list:
    """The components in row-major order (a scalar is its own single component)."""
    if isinstance(value, np.ndarray):
        return [sp.Float(float(v)) for v in value.ravel()]  # float(): SymPy converts NumPy scalars slowly
    if isinstance(value, sp.MatrixBase):
        return list(value)
    if isinstance(value, sp.ImmutableDenseNDimArray):
        return list(value._array)  # iterating the array parses an index per item: 100x slower
    if isinstance(value, sp.NDimArray):
        return list(value)
    return [value]


def check_count(count: int, limit: int = limits.MAX_ELEMENTS) -> None:
    if count > limit:
        raise LimitError(f"{count} components is above the limit of {limit}")


def from_elements(shape: Shape, items: list):
    """Build a value of the given shape from its row-major components."""
    if len(shape) == 0:
        return items[0]
    check_count(len(items))
    if len(shape) != 2:  # a vector, or a tensor of rank 3 or more (section 3b): an N-dimensional array
        return sp.ImmutableDenseNDimArray(items, shape)
    with warnings.catch_warnings():  # a matrix of conditions (where's first argument) is deprecated in SymPy
        warnings.simplefilter("ignore", SymPyDeprecationWarning)
        return sp.ImmutableMatrix(shape[0], shape[1], items)


def real_symbols(names) -> list:
    """sp.Symbol(name, real=True) for each name, about ten times faster.

    SymPy's constructor sanitises the assumptions, looks them up in two caches
    and sorts the deduced facts for every symbol: a 300×300 declaration spent
    a second there. Every real symbol has the same facts, so each new symbol
    takes them from one template (as SymPy itself shares the fact base); the
    result is equal to, and hashes as, SymPy's own.
    """
    return [_real_symbol(name) for name in names]


_TEMPLATE = sp.Symbol("_template", real=True)


def _real_symbol(name: str) -> sp.Symbol:
    symbol = sp.Expr.__new__(sp.Symbol)
    symbol.name = name
    symbol._assumptions = _TEMPLATE._assumptions
    symbol._assumptions_orig = _TEMPLATE._assumptions_orig
    symbol._assumptions0 = _TEMPLATE._assumptions0
    return symbol


if _real_symbol("x") != sp.Symbol("x", real=True) or hash(_real_symbol("x")) != hash(sp.Symbol("x", real=True)):
    _real_symbol = lambda name: sp.Symbol(name, real=True)  # noqa: E731  (a SymPy whose symbols differ inside)


def to_symbolic(value):
    """NumPy arrays become SymPy values (bounded in size); others pass through."""
    if isinstance(value, np.ndarray):
        check_count(value.size)
        return from_elements(value.shape, elements(value))
    return value


def broadcast_shape(shapes: list[Shape]) -> Shape:
    """The common shape of elementwise operands, as NumPy broadcasts (section 3b): aligned from the last axis,
    a size 1 stretches, other sizes must agree."""
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for k in range(1, rank + 1):
        sizes = {s[-k] for s in shapes if len(s) >= k} - {1}
        if len(sizes) > 1:
            a, b = _clash(shapes, k)
            raise ShapeError(f"shapes do not match: {describe_shape(a)} and {describe_shape(b)} (they align from "
                             "the last axis, where sizes must be equal or 1)")
        result.append(sizes.pop() if sizes else 1)
    return tuple(reversed(result))


def _clash(shapes: list, k: int) -> tuple:
    """Two shapes whose k-th axis from the end differ, neither being 1."""
    ranked = [s for s in shapes if len(s) >= k and s[-k] != 1]
    return next((p, q) for p in ranked for q in ranked if p[-k] != q[-k])


def _stretched(items: list, shape: Shape, target: Shape) -> list:
    """The row-major components of a value of `shape` broadcast to `target`."""
    if shape == target:
        return items
    lead = len(target) - len(shape)
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    strides = list(reversed(strides))
    out = []
    for index in itertools.product(*map(range, target)):
        out.append(items[sum(0 if n == 1 else i * st for i, n, st in zip(index[lead:], shape, strides))])
    return out


def elementwise(function, *values):
    """Apply a scalar function componentwise, broadcasting as NumPy does."""
    values = [to_symbolic(v) for v in values]
    shape = broadcast_shape([shape_of(v) for v in values])
    if shape == ():
        return function(*values)
    check_count(math.prod(shape))
    columns = [_stretched(elements(v), shape_of(v), shape) for v in values]
    return from_elements(shape, [function(*args) for args in zip(*columns)])


def map_value(function, value):
    """Apply a function to every component, keeping the shape."""
    return elementwise(function, value)
