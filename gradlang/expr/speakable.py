"""The SymPy classes a gradlang value may hold: what gradlang can print, evaluate and export.

SymPy's algebra (simplify, factor, expand) may answer in forms gradlang has no
name for: Piecewise and its ExprCondPair, Heaviside, cot, the imaginary unit.
Such a value could not be printed as gradlang source, compiled to NumPy or
exported (issue 12, programs 5 and 6), so an algebra function's answer is kept
only when every class in it is one gradlang speaks or was already in the input.
"""

from __future__ import annotations

import functools

import sympy as sp
from sympy.core.relational import Relational
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from gradlang.expr.walk import dag_nodes


def speakable(before, after):
    """`after` if gradlang can print, evaluate and export all of it, else `before`."""
    known = {type(node) for node in dag_nodes(before)}
    classes = _speakable_classes()
    for node in dag_nodes(after):
        if type(node) not in known and not isinstance(node, classes):
            return before
    return after


@functools.cache
def _speakable_classes() -> tuple:
    """Arithmetic, numbers, symbols, conditions, and the class of every primitive (the records loaded on the
    first algebra answer, not at start-up)."""
    from gradlang.expr.primitives import records

    primitives = tuple(record.cls for record in records() if record.cls is not None)
    return ARITHMETIC + primitives


ARITHMETIC = (
    sp.Symbol, sp.Rational, sp.Float, sp.NumberSymbol, sp.Add, sp.Mul, sp.Pow,
    Relational, BooleanTrue, BooleanFalse,
)
