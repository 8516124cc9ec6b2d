"""Why a derivative is exactly zero: a stop, a piecewise-constant function, or no dependence.

Asked of the expression the derivative was taken of, never guessed from the
result: the variable is looked for in the expression with every stop removed
(no dependence at all?), then outside the stops (only stopped?), then outside
the piecewise-constant functions too (only through floor, sign, …?).
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.derivatives import freeze
from gradlang.expr.primitives import constant_classes
from gradlang.expr.source import to_source as to_plain
from gradlang.expr.stopgrad import StopGradient, unstopped
from gradlang.expr.walk import dag_atoms, rebuild
from gradlang.explain.note import Note, listed, note


def why_zero(expr, symbol) -> Note | None:
    """One sentence on why d expr / d symbol is zero, or None if it is not structurally zero."""
    if not isinstance(expr, sp.Basic) or symbol not in dag_atoms(unstopped(expr), sp.Symbol):
        return note("no dependence: ", symbol, " does not appear in the expression")
    stops = _containing(expr, symbol, StopGradient)
    outside_stops = _without(expr, (StopGradient,))
    if symbol not in dag_atoms(outside_stops, sp.Symbol):
        return note("stopped: ", symbol, " appears only inside ", _listed(stops))
    if symbol not in dag_atoms(freeze(expr).expr, sp.Symbol):
        pieces = _containing(outside_stops, symbol, *constant_classes())
        reason = note("piecewise constant: ", symbol, " enters only through ", _listed(pieces), ", whose derivative is 0")
        return note(reason, " (and inside ", _listed(stops), ")") if stops else reason
    return None


def _without(expr, classes):
    """The expression with the given function applications replaced by constants."""
    return rebuild(expr, {e: sp.Dummy(real=True) for e in dag_atoms(expr, *classes)})


def _containing(expr, symbol, *classes) -> list:
    """The outermost applications of the classes whose argument contains the symbol."""
    found = [e for e in dag_atoms(expr, *classes) if symbol in dag_atoms(e, sp.Symbol)]
    return [e for e in found if not any(e != other and e in dag_atoms(other, *classes) for other in found)]


def _listed(exprs) -> Note:
    return listed(sorted(exprs, key=to_plain))
