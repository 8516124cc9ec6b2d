"""NumPy's broadcasting left implicit in what is printed, as the user wrote it (section 3b).

The evaluator makes every stretch explicit, one node `broadcast_to(u, shape)`
(expr/tensor/axes.py), so each primitive keeps one derivative rule. A reader
wrote `expand_dims(Z, -2) - E`, not `broadcast_to(expand_dims(Z, 3), (b, h, w,
k, c)) - broadcast_to(E, (b, h, w, k, c))`: inside an elementwise operation
(a sum, a product, a power, exp, tanh, …) a stretch that NumPy's broadcasting
of the operation's other operands makes anyway is printed as its operand alone.
The text reads back to the same value, since the evaluator stretches it again.
A stretch the shapes around it do not make (of the whole value, an operand of
`@` or of a reduction) stays written. Printing only: the stretch becomes
`Implicit(u, *shape)`, a node of the same shape that prints as u, so every
printer (and the naming of shared parts) reads a value of the shapes it had.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.precedence import precedence

from gradlang.errors import ShapeError
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.axes import BroadcastTo
from gradlang.expr.tensor.nodes import TensorOp, Var, shape_of
from gradlang.expr.tensor.spelling import Spelling
from gradlang.expr.walk import dag_nodes


class Implicit(TensorOp):
    """A stretch NumPy's broadcasting makes by itself: printed as its operand, of the stretched shape."""

    spelling = Spelling("{0}", "{0}", "{0}", "{0}")

    @classmethod
    def eval(cls, *args):
        return None

    @property
    def shape(self) -> tuple:
        return tuple(self.args[1:])

    @property
    def precedence(self):
        return precedence(self.args[0])

    def _sympystr(self, printer):
        return printer._print(self.args[0])

    def _latex(self, printer, exp=None):
        text = printer._print(self.args[0])
        return text if exp is None else rf"\left({text}\right)^{{{exp}}}"

    def _pretty(self, printer):
        return printer._print(self.args[0])


def implicit_broadcasts(value):
    """`value` with each stretch NumPy's broadcasting makes by itself printed as its operand; shapes kept."""
    if not isinstance(value, sp.Expr) or not any(isinstance(n, BroadcastTo) for n in dag_nodes(value)):
        return value
    try:
        return _Unstretch().kept(value)
    except RecursionError:  # a chain deeper than the stack: printed as it is, every stretch written
        return value


def _leaf(expr) -> bool:
    return not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, (sp.Symbol, Var, sp.Number))


def _elementwise(expr) -> bool:
    """An operation NumPy broadcasts over its operands: a sum, a product, a power, a function of the language
    applied entry by entry (not a tensor node, whose operands keep their shapes)."""
    return isinstance(expr, (sp.Add, sp.Mul, sp.Pow)) or isinstance(expr, sp.Function) and not isinstance(expr, TensorOp)


class _Unstretch:
    """One pass over the DAG: each node's forms are computed once (a shared part is one node)."""

    def __init__(self):
        self.loose: dict = {}
        self.exact: dict = {}

    def kept(self, expr):
        """expr's form printed at its own shape: a stretch it needs stays written."""
        if expr not in self.exact:
            self.exact[expr] = self._kept(expr)
        return self.exact[expr]

    def _kept(self, expr):
        if _leaf(expr):
            return expr
        form, loose = self.shrunk(expr)
        if loose == shape_of(expr):
            return form
        if isinstance(expr, BroadcastTo):
            return BroadcastTo(self.shrunk(expr.args[0])[0], *expr.args[1:])
        return _rebuilt(expr, [self.kept(a) for a in expr.args])

    def shrunk(self, expr):
        """(form, the shape its text has): the shape NumPy gives the printed text, which broadcasts to expr's."""
        if expr not in self.loose:
            self.loose[expr] = self._shrunk(expr)
        return self.loose[expr]

    def _shrunk(self, expr):
        if _leaf(expr):
            return expr, shape_of(expr)
        if isinstance(expr, BroadcastTo):
            form, loose = self.shrunk(expr.args[0])
            return Implicit(form, *expr.args[1:]), loose
        if _elementwise(expr):
            parts = [self.shrunk(a) for a in expr.args]
            try:
                loose = shapes.stretched([p[1] for p in parts]) if any(p[1] for p in parts) else ()
            except ShapeError:  # operands that would not broadcast back: each keeps its own shape
                return _rebuilt(expr, [self.kept(a) for a in expr.args]), shape_of(expr)
            return _rebuilt(expr, [p[0] for p in parts]), loose
        return _rebuilt(expr, [self.kept(a) for a in expr.args]), shape_of(expr)


def _rebuilt(expr, args):
    if all(a is b for a, b in zip(args, expr.args)):
        return expr
    if isinstance(expr, (sp.Add, sp.Mul, sp.Pow)):  # as built: 2*(Z - q) stays, never 2*Z - 2*q
        return expr.func(*args, evaluate=False)
    return expr.func(*args)
