"""all(c) and any(c): a condition on a tensor reduced to one condition (section 6, tensor).

`x > 0` of a vector is a condition per component; `all(x > 0)` holds when every
one does, `any(x > 0)` when one does, as NumPy's `np.all` and `np.any`. They are
SymPy Boolean functions, so `where(all(x > 0), a, b)` takes them as any other
condition and they are never differentiated. At a symbolic size they stay a
formula over the tensor condition; by components they hold the components'
conditions, decided when these are (true, false), else written `all([…])`,
which reads back.
"""

from __future__ import annotations

import sympy as sp
from sympy.logic.boolalg import BooleanAtom, BooleanFunction


class _Reduced(BooleanFunction):
    """A condition over every component of its argument, one condition in all (a scalar: shape ()).

    Its arguments are one condition on a tensor (`all(x > 0)`), or the components' conditions one by one."""

    shape = ()
    reduces_condition = True  # expr/tensor/nodes.py, shape_of: one condition, whatever its argument's shape
    word = "all"
    decide = all
    settles = sp.false  # a component that decides the whole (false for all, true for any)

    @classmethod
    def eval(cls, *conditions):
        if not conditions:
            raise TypeError(f"{cls.word} needs a condition")
        if any(c == cls.settles for c in conditions):
            return cls.settles
        if all(isinstance(c, BooleanAtom) for c in conditions):
            return sp.true if cls.decide(bool(c) for c in conditions) else sp.false
        return None

    def _sympystr(self, printer):
        if len(self.args) == 1:
            return f"{self.word}({printer._print(self.args[0])})"
        return f"{self.word}([{', '.join(printer._print(c) for c in self.args)}])"

    def _latex(self, printer, exp=None):
        return rf"\operatorname{{{self.word}}}\left({', '.join(printer._print(c) for c in self.args)}\right)"

    def _numpycode(self, printer):
        if len(self.args) == 1:
            return f"numpy.{self.word}({printer._print(self.args[0])})"
        parts = ", ".join(printer._print(c) for c in self.args)  # componentwise over a batch of points
        return f"numpy.{self.word}(numpy.stack(numpy.broadcast_arrays({parts})), axis=0)"


class AllOf(_Reduced):
    """all(c): every component of the condition holds."""


class AnyOf(_Reduced):
    """any(c): some component of the condition holds."""

    word = "any"
    decide = any
    settles = sp.true
