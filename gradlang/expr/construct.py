"""Function applications built without SymPy's assumption queries on large arguments.

SymPy's `tanh(u)`, `sin(u)`, `exp(u)` evaluate on construction: they ask
whether u is zero, whether a minus sign can be pulled out of it, whether it
is a multiple of i*pi. For a sum of many terms each question walks the terms
and creates new objects with fresh assumptions: `tanh(W @ x0 + b)` at width
64 spent seconds there, about 0.7 ms per term, and the answer never changes
the value (a sum of real symbols with float weights is not provably zero).
Above a fixed size (counted in tree nodes, so the printed form does not
depend on the machine) the application is built as it stands; below it,
SymPy's familiar forms are kept (`tanh(-x)` is `-tanh(x)`).
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang.expr.domain import held_if_dropped

LARGE_ARGUMENT = 40  # tree nodes above which a function of a symbolic argument is built unevaluated


def apply(function, *args):
    """function(*args), unevaluated when an argument is larger than LARGE_ARGUMENT nodes."""
    if _is_function_class(function) and any(is_large(a) for a in args):
        return function(*args, evaluate=False)
    integral = _integral_float(function, args)
    if integral is not None:
        return integral
    return overflowed(held_if_dropped(function, list(args), function(*args)))


_INTEGRAL = ("floor", "ceiling", "Round")  # by name: gradlang.expr.functions imports this module


def _integral_float(function, args):
    """floor, ceil or round of a float number of magnitude 2^52 or more: the float, an integer already.

    SymPy computes the integer part digit by digit and can give up
    (PrecisionExhausted for ceil(-pi*1e300)), or answers with a 300-digit
    integer; in float64 the answer is the float itself. None otherwise.
    """
    if len(args) != 1 or getattr(function, "__name__", None) not in _INTEGRAL:
        return None  # first and cheap: apply runs for every function application
    arg = args[0]
    if not (isinstance(arg, sp.Expr) and arg.is_number and arg.has(sp.Float) and arg.is_comparable):
        return None
    value = float(arg)
    return overflowed(sp.Float(value)) if abs(value) >= 2.0**52 else None


def overflowed(value):
    """A float beyond float64's range is IEEE's ±inf, as NumPy gives.

    mpmath carries any exponent, so exp(1e308) is a finite Float to SymPy, and
    exp of that would try to build a number of 10^308 digits.
    """
    if isinstance(value, sp.Float) and math.isinf(float(value)):
        return sp.oo if value > 0 else -sp.oo
    return value


def _is_function_class(function) -> bool:
    return isinstance(function, type) and issubclass(function, sp.Function)


def is_large(arg) -> bool:
    """An argument of more than LARGE_ARGUMENT tree nodes (the walk stops there)."""
    if not isinstance(arg, sp.Expr) or arg.is_Atom:
        return False
    count, stack = 0, [arg]
    while stack:
        count += 1
        if count > LARGE_ARGUMENT:
            return True
        stack.extend(stack.pop().args)
    return False
