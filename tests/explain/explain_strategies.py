"""Random scalar expressions over x and y built from gradlang's primitives."""

from __future__ import annotations

import sympy as sp
from hypothesis import strategies as st

from gradlang.expr.functions import Maximum, Minimum, Relu, Round, Where
from gradlang.expr.stopgrad import StopGradient

X = sp.Symbol("x", real=True)
Y = sp.Symbol("y", real=True)
Z = sp.Symbol("z[0]", real=True)

_leaves = st.sampled_from([X, Y, Z, sp.Integer(2), sp.Integer(-3), sp.Rational(1, 2), sp.pi])

_UNARY = [sp.exp, sp.log, sp.sin, sp.cos, sp.tan, sp.atan, sp.asin, sp.sinh, sp.cosh, sp.tanh,
          sp.asinh, sp.sqrt, sp.Abs, sp.sign, sp.floor, Relu, Round,
          lambda u: 1 / (1 + sp.exp(-u)), lambda u: sp.log(1 + sp.exp(u))]
_BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
           lambda a, b: a ** 2 + b, lambda a, b: a ** b, lambda a, b: Maximum(a, b, 0),
           lambda a, b: Minimum(a, b), lambda a, b: Where(sp.StrictGreaterThan(a, 0), a, b),
           lambda a, b: a ** sp.Integer(3) * b]


def _build(function, *args):
    """Apply a constructor; forms SymPy refuses (comparing complex constants) become x, and so do
    undefined constants (tan(pi/2) is zoo), which the language refuses before any derivative sees them."""
    try:
        value = function(*args)
    except (TypeError, ValueError, ZeroDivisionError):
        return X
    return X if value.has(sp.zoo, sp.nan) else value


def _extend(children, stops: bool):
    unary = _UNARY + ([StopGradient, StopGradient] if stops else [])
    return st.one_of(
        st.tuples(st.sampled_from(unary), children).map(lambda t: _build(*t)),
        st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: _build(*t)),
    )


def expressions(stops: bool = True):
    """Expressions of a few levels, with or without stop_gradient."""
    return st.recursive(_leaves, lambda children: _extend(children, stops), max_leaves=8)
