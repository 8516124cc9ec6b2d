"""The in-place helpers of the generated NumPy code (numeric.py): `a + b`, `a*b` and `b - a` into `a`'s buffer
where that gives the same array. numeric.specialized() writes each call as what it did at a plan's shapes."""

from __future__ import annotations

from gradlang.lazy import np


def in_place_add(a, b):
    """`a + b` into `a`'s buffer where that gives the same array: `a` is a temporary of the generated function
    used by this line only (function_source), a writeable float64 array as large as the result."""
    if type(a) is np.ndarray and a.dtype == np.float64 and a.flags.writeable and fits(a, b):
        a += b
        return a
    return a + b


def in_place_multiply(a, b):
    """`a*b` into `a`'s buffer where that gives the same array (as in_place_add)."""
    if type(a) is np.ndarray and a.dtype == np.float64 and a.flags.writeable and fits(a, b):
        a *= b
        return a
    return a * b


def in_place_subtract_from(a, b):
    """`b - a` into `a`'s buffer where that gives the same array (as in_place_add)."""
    if type(a) is np.ndarray and a.dtype == np.float64 and a.flags.writeable and fits(a, b):
        np.subtract(b, a, out=a)
        return a
    return b - a


def fits(a, b) -> bool:
    """Whether a + b (or a*b) is a float64 array of a's shape, a being a float64 array. A float or an array
    of a's own shape and dtype is answered at once (most lines: at width 64 the general question, NumPy's
    result_type and broadcast_shapes, costs more than the arithmetic, issue #41)."""
    kind = type(b)
    if kind is float or kind is np.float64 or (kind is np.ndarray and b.dtype == np.float64 and b.shape == a.shape):
        return True
    return np.result_type(a, b) == np.float64 and np.broadcast_shapes(a.shape, np.shape(b)) == a.shape
