"""A list beside a tensor, as one constant of the tensor engine: `W @ [1, 2]`, `X * [[[1, 2], [3, 4]]]`.

Its args are its rank, its sizes, then its entries in row-major order (the
last axis fastest, as NumPy's), so a list of any rank is one node (section
3b): `[1, 2]` is Literal(1, 2, 1, 2), `[[1, 2]]` is Literal(2, 1, 2, 1, 2).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.nodes import TensorOp
from gradlang.expr.tensor.spelling import ListSpelling


class Literal(TensorOp):
    """A list beside a tensor: numbers (`W @ [1, 2]`, a constant) or scalars of tensors (`[y[0], 2]`, `grad(e, [a, b])`);
    args are the rank, the sizes, then the entries row by row (module docstring)."""

    spelling = ListSpelling()

    @classmethod
    def of(cls, value) -> "Literal":
        """The constant of a list value (a SymPy array or matrix of any rank)."""
        shape = tuple(int(n) for n in value.shape)
        entries = list(value) if isinstance(value, sp.MatrixBase) else list(sp.ImmutableDenseNDimArray(value)._array)
        return cls.shaped(shape, entries)

    @classmethod
    def shaped(cls, shape: tuple, entries: list) -> "Literal":
        """The list of this shape holding these entries (row-major)."""
        return cls(sp.Integer(len(shape)), *(sp.Integer(int(n)) for n in shape), *entries)

    @property
    def first(self) -> int:
        """The position in args of the first entry (after the rank and the sizes)."""
        return 1 + int(self.args[0])

    @property
    def shape(self):
        return tuple(self.args[1:self.first])

    @property
    def entries(self) -> tuple:
        return self.args[self.first:]

    def with_entries(self, entries) -> "Literal":
        """A list of the same shape holding other entries (a tangent, a power)."""
        return Literal(*self.args[:self.first], *entries)

    def rows(self) -> list:
        """The entries as nested lists: a list (a vector), a list of rows (a matrix), and so on."""
        return _nested(list(self.entries), [int(n) for n in self.shape])

    def position(self, k: int) -> tuple:
        """The index (one integer per axis) of the entry at args position k."""
        flat, index = k - self.first, []
        for n in reversed([int(s) for s in self.shape]):
            flat, i = divmod(flat, n)
            index.append(i)
        return tuple(reversed(index))

    def _eval_power(self, exponent):
        """A list of numbers to a number is a list of numbers: [1, 2, 3]^2 = [1, 4, 9]."""
        if exponent.is_Number:
            powers = [e ** exponent for e in self.entries]
            if all(p.is_Number and p.is_finite for p in powers):
                return self.with_entries(powers)
        return None

    def spelled(self, each) -> str:
        """[1, 2], [[1, 0], [1, 2]] or deeper, each entry written by `each`."""
        return _spelled(self.rows(), each)


def _nested(entries: list, shape: list) -> list:
    if len(shape) <= 1:
        return entries
    step = len(entries) // shape[0]
    return [_nested(entries[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _spelled(rows, each) -> str:
    if not isinstance(rows, list):
        return each(rows)
    return "[" + ", ".join(_spelled(r, each) for r in rows) + "]"
