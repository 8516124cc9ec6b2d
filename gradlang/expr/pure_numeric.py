"""Numbers without NumPy: the functions numeric.py's code calls, on Python floats, as NumPy computes them.

In the browser page (Pyodide) NumPy cannot be had, so numeric.py runs the same
generated code in a namespace where `numpy` is this module: `numpy.exp(_a0)`
calls `exp` below. Each function keeps NumPy's float64 (IEEE 754) semantics
where Python's `math` would raise: exp(1000) is inf, log(0) is -inf, log(-1)
and sin(inf) are nan, 1/0.0 is inf. Arguments are wrapped in `Float`, whose
operators do the same for `/` and `**`. Sums of arrays follow NumPy's pairwise
summation, so vector functions (logsumexp, softmax, norm) give NumPy's bits.

One point at a time only: a list of points (`at t = linspace(...)`) needs
NumPy, and says so (numeric.evaluate).
"""

from __future__ import annotations

import builtins
import functools
import math

inf, nan, pi, e = math.inf, math.nan, math.pi, math.e


class Float(float):
    """A float whose arithmetic never raises: IEEE results, as numpy.float64's."""

    def __add__(self, other):
        return Float(float(self) + float(other))

    __radd__ = __add__

    def __sub__(self, other):
        return Float(float(self) - float(other))

    def __rsub__(self, other):
        return Float(float(other) - float(self))

    def __mul__(self, other):
        return Float(float(self) * float(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return divide(self, other)

    def __rtruediv__(self, other):
        return divide(other, self)

    def __pow__(self, other):
        return power(self, other)

    def __rpow__(self, other):
        return power(other, self)

    def __neg__(self):
        return Float(-float(self))

    def __pos__(self):
        return self

    def __abs__(self):
        return Float(abs(float(self)))


def float64(x) -> Float:
    return Float(x)


def divide(a, b) -> Float:
    a, b = float(a), float(b)
    if b != 0.0:
        return Float(a / b)
    if a == 0.0 or a != a:
        return Float(nan)
    return Float(math.copysign(inf, a) * math.copysign(1.0, b))


def power(a, b) -> Float:
    """IEEE pow, as numpy.power: an exponent of 0.5 is a square root there (power(-inf, 0.5) is nan)."""
    a, b = float(a), float(b)
    if b == 0.5:
        return sqrt(a)
    try:
        return Float(math.pow(a, b))
    except OverflowError:  # only a result too large raises; one too small is 0.0
        odd = a < 0 and b == math.floor(b) and b % 2 == 1
        return Float(-inf if odd else inf)
    except ValueError:  # 0 to a negative power, or a negative base to a fractional one
        if a == 0.0:
            odd = b == math.floor(b) and b % 2 == 1
            return Float(math.copysign(inf, a) if odd else inf)
        return Float(nan)


def _guarded(function, odd: bool = False):
    """`function` with OverflowError as inf (signed as x for an odd function) and ValueError as nan."""

    @functools.wraps(function)
    def guarded(x):
        x = float(x)
        if x != x:
            return Float(nan)
        try:
            return Float(function(x))
        except OverflowError:
            return Float(math.copysign(inf, x) if odd else inf)
        except ValueError:
            return Float(nan)

    return guarded


exp = _guarded(math.exp)
expm1 = _guarded(math.expm1)
sinh = _guarded(math.sinh, odd=True)
cosh = _guarded(math.cosh)
tanh = _guarded(math.tanh)
sqrt = _guarded(math.sqrt)
sin, cos, tan = _guarded(math.sin), _guarded(math.cos), _guarded(math.tan)
arcsin, arccos, arctan = _guarded(math.asin), _guarded(math.acos), _guarded(math.atan)


def log(x) -> Float:
    x = float(x)
    return Float(-inf) if x == 0.0 else _guarded(math.log)(x)


def log1p(x) -> Float:
    x = float(x)
    return Float(-inf) if x == -1.0 else _guarded(math.log1p)(x)


def _finite_only(function):
    """floor, ceil, round: inf and nan are their own values (math's raise)."""
    return lambda x: Float(function(float(x))) if math.isfinite(float(x)) else Float(x)


floor = _finite_only(math.floor)
ceil = _finite_only(math.ceil)
round = _finite_only(builtins.round)  # halves to even, as numpy.round
absolute = abs = _guarded(math.fabs)


def sign(x) -> Float:
    x = float(x)
    return Float(nan) if x != x else Float((x > 0) - (x < 0))


def isfinite(x) -> bool:
    return math.isfinite(float(x))


def where(condition, a, b):
    return a if condition else b


def greater(a, b) -> bool:
    return float(a) > float(b)


def greater_equal(a, b) -> bool:
    return float(a) >= float(b)


def less(a, b) -> bool:
    return float(a) < float(b)


def less_equal(a, b) -> bool:
    return float(a) <= float(b)


def equal(a, b) -> bool:
    return float(a) == float(b)


def not_equal(a, b) -> bool:
    return float(a) != float(b)


def logical_and(*conditions) -> bool:
    return all(conditions)


def logical_or(*conditions) -> bool:
    return any(conditions)


def logical_not(condition) -> bool:
    return not condition


def select(conditions, choices, default=nan):
    """numpy.select at one point: the first choice whose condition holds (SymPy prints Piecewise so)."""
    return next((choice for condition, choice in zip(conditions, choices) if condition), default)


def maximum(a, b) -> Float:
    a, b = float(a), float(b)
    return Float(nan) if a != a or b != b else Float(a if a >= b else b)


def minimum(a, b) -> Float:
    a, b = float(a), float(b)
    return Float(nan) if a != a or b != b else Float(a if a <= b else b)


def logaddexp(x, y) -> Float:
    """NumPy's npy_logaddexp, step for step."""
    x, y = float(x), float(y)
    if x == y:
        return Float(x + math.log(2.0))
    difference = x - y
    if difference > 0:
        return Float(x + float(log1p(exp(-difference))))
    if difference <= 0:
        return Float(y + float(log1p(exp(difference))))
    return Float(difference)  # nan


def pairwise_sum(values: list) -> Float:
    """numpy.sum of a 1-D float64 array: NumPy's pairwise summation (blocks of eight)."""
    values = [float(v) for v in values]
    if len(values) < 8:
        total = 0.0  # NumPy's reduction starts from its identity, so sum([-0.0]) is 0.0
        for v in values:
            total += v
        return Float(total)
    if len(values) <= 128:
        r = values[:8]
        whole = len(values) - len(values) % 8
        for i in range(8, whole, 8):
            r = [r[j] + values[i + j] for j in range(8)]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in values[whole:]:
            total += v
        return Float(total)
    half = (len(values) // 2) - (len(values) // 2) % 8
    return Float(pairwise_sum(values[:half]) + pairwise_sum(values[half:]))


# --- the primitives' own helpers, one point at a time: each record names its own as `pure` ------------
# (expr/primitives/; numeric.py builds the page's table of `_gl_` helpers from the records)


def sigmoid(u) -> Float:
    return divide(1.0, 1.0 + float(exp(-float(u))))


def softplus(u) -> Float:
    return logaddexp(0.0, u)


def relu(u) -> Float:
    return maximum(u, 0.0)


def maximum_of(*args) -> Float:
    return functools.reduce(maximum, args)


def minimum_of(*args) -> Float:
    return functools.reduce(minimum, args)


def _amax(values: list) -> float:
    return nan if any(v != v for v in values) else max(values)


def _amin(values: list) -> float:
    return nan if any(v != v for v in values) else min(values)


def _share(pick, k, *args) -> Float:
    values = [float(a) for a in args]
    extremum = pick(values)
    tied = sum(v == extremum for v in values)
    return Float(1.0 / max(tied, 1.0)) if values[int(k)] == extremum else Float(0.0)


def max_share(k, *args) -> Float:
    return _share(_amax, k, *args)


def min_share(k, *args) -> Float:
    return _share(_amin, k, *args)


def logsumexp(*args) -> Float:
    values = [float(a) for a in args]
    shift = _amax(values)
    shift = shift if math.isfinite(shift) else 0.0
    return Float(shift + float(log(pairwise_sum([exp(v - shift) for v in values]))))


def softmax(k, *args) -> Float:
    values = [float(a) for a in args]
    top = _amax(values)
    exps = [float(exp(v - top)) for v in values]
    return divide(exps[int(k)], pairwise_sum(exps))


def norm(*args) -> Float:
    return sqrt(pairwise_sum([float(a) * float(a) for a in args]))


def neumaier_sum(*terms) -> Float:
    """numeric._sum on floats: Neumaier's compensated sum, the plain sum where it is not finite."""
    total, carry = float(terms[0]), 0.0
    for term in map(float, terms[1:]):
        step = total + term
        carry += (total - step) + term if math.fabs(total) >= math.fabs(term) else (term - step) + total
        total = step
    return Float(total + carry if math.isfinite(total) else total)


def float32(u) -> Float:
    """u rounded to the nearest float32, as numpy's astype(float32): a finite u past float32's range is ±inf."""
    import struct

    x = float(u)
    try:
        return Float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        return Float(math.copysign(inf, x))
