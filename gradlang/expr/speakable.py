"""The SymPy classes a gradlang value may hold: what gradlang can print, evaluate and export.

SymPy's algebra (simplify, factor, expand) may answer in forms gradlang has no
name for: Piecewise and its ExprCondPair, Heaviside, cot, the imaginary unit.
Such a value could not be printed as gradlang source, compiled to NumPy or
exported (issue 12, programs 5 and 6), so an algebra function's answer is kept
only when every class in it is one gradlang speaks or was already in the input.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.relational import Relational
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from gradlang.expr.functions import MaxShare, Maximum, MinShare, Minimum, Relu, Round, Where
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.walk import dag_nodes


def speakable(before, after):
    """`after` if gradlang can print, evaluate and export all of it, else `before`."""
    known = {type(node) for node in dag_nodes(before)}
    for node in dag_nodes(after):
        if type(node) not in known and not isinstance(node, SPEAKABLE):
            return before
    return after


SPEAKABLE = (
    sp.Symbol, sp.Rational, sp.Float, sp.NumberSymbol, sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log,
    sp.sin, sp.cos, sp.tan, sp.asin, sp.acos, sp.atan, sp.sinh, sp.cosh, sp.tanh,
    sp.Abs, sp.sign, sp.floor, sp.ceiling, StopGradient, Maximum, Minimum, MaxShare, MinShare,
    Relu, Round, Where, Relational, BooleanTrue, BooleanFalse,
)
