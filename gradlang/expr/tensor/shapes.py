"""Shapes whose sizes may be symbols: `x: R^n`, `W: R^(m,n)` with `m, n` sizes.

A shape is a tuple of SymPy integers or size symbols (positive integer
symbols). Two sizes agree when they are the same integer or the same symbol;
`n` and `3` never agree, so a shape is checked once for every size a user
may later choose (section 3a of the language reference). Elementwise
operations broadcast scalars only, as the component engine does.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import ShapeError
from gradlang.expr.values import describe_shape as describe  # symbolic sizes print as written: n, m×n

Shape = tuple


def size_symbol(name: str) -> sp.Symbol:
    """The symbol a size name stands for: a positive integer left symbolic."""
    return sp.Symbol(name, integer=True, positive=True)


def is_size(value) -> bool:
    """A size symbol (a symbol that is a positive integer), as `m, n: size` declares."""
    return isinstance(value, sp.Symbol) and value.is_integer is True and value.is_positive is True


def broadcast(shapes: list, what: str = "an elementwise operation") -> Shape:
    """The shape of an elementwise result: scalars broadcast, other shapes must agree."""
    kept = {s for s in shapes if s != ()}
    if len(kept) > 1:
        shown = " and ".join(sorted(describe(s) for s in kept))
        raise ShapeError(f"{what} needs equal shapes, got {shown}")
    return kept.pop() if kept else ()


def matmul(a: Shape, b: Shape) -> Shape:
    """The shape of `a @ b`: m×k @ k×n, m×k @ k, k @ k×n, k @ k (the dot product)."""
    if not a or not b:
        raise ShapeError(f"@ needs vectors or matrices, got {describe(a)} and {describe(b)}")
    if a[-1] != b[0]:
        raise ShapeError(f"@ cannot multiply {describe(a)} by {describe(b)}")
    return a[:-1] + b[1:]


def check_index(index, length) -> None:
    """An index must be an integer (or an integer symbol) within the length, when both are numbers."""
    if not (getattr(index, "is_integer", False) or isinstance(index, sp.Symbol)):
        raise ShapeError("an index must be an integer or a name that is given one")
    if index.is_Integer and length.is_Integer and not 0 <= int(index) < int(length):
        raise ShapeError(f"index {index} is out of range for length {length}")
