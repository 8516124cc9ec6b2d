"""A list of values of different shapes: what `grad(L, [W1, b1, W2])` gives (section 3b).

`jax.grad(f, argnums=(0, 1, 2))` gives a tuple, one gradient per argument, each
shaped like its argument; gradlang gives the same as a list. Its entries have
different shapes (a matrix, a vector, a scalar), or sizes that are names, so it
is no array: it is indexed (`g[0]` is the first gradient), printed entry by
entry (`[outer(d, x), d, …]`, which reads back as this list), and evaluated
`at` a point entry by entry. It is no operand of arithmetic or of a builtin.

`TensorList` holds formulas (a SymPy node, so substitution, free symbols and
the shared parts a printer names work across its entries). `ListAt` holds the
entries at a point, which may be NumPy arrays, so it is a Python tuple.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import ShapeError
from gradlang.expr.tensor.shapes import as_basic


class TensorList(sp.Basic):
    """A list of tensor formulas (and scalars) of different shapes; args are the entries in order."""

    def __new__(cls, *entries):
        return sp.Basic.__new__(cls, *(as_basic(e) for e in entries))

    @property
    def entries(self) -> tuple:
        return self.args

    def _sympystr(self, printer):
        return "[" + ", ".join(printer._print(e) for e in self.args) + "]"


class ListAt(tuple):
    """The entries of a list at a point: numbers, NumPy arrays, or what `at` left of each formula."""

    @property
    def entries(self) -> tuple:
        return tuple(self)


LISTS = (TensorList, ListAt)


def is_list(value) -> bool:
    """A list of values of different shapes (formulas or their numbers)."""
    return isinstance(value, LISTS)


def entry(value, position: int):
    """Entry `position` of a list (negative counts from the end, as in Python); a ShapeError out of range."""
    count = len(value.entries)
    if not -count <= position < count:
        raise ShapeError(f"index {position} is out of range for a list of {count}")
    return value.entries[position % count]


def refused(where: str):
    """The error for a list used as an operand: its entries are whole tensors (of different shapes, or of a
    symbolic size, which no array of literal shape holds), so take one first."""
    return ShapeError(f"a list of tensors (as grad(L, [W, b]) gives) cannot be {where}; take one entry first, as g[0]")
