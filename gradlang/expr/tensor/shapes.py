"""Shapes whose sizes may be symbols: `x: R^n`, `W: R^(m,n)` with `m, n` sizes.

A shape is a tuple of SymPy integers or size symbols (positive integer
symbols). Two sizes agree when they are the same integer or the same symbol;
`n` and `3` never agree, so a shape is checked once for every size a user
may later choose (section 3a of the language reference). Elementwise
operations broadcast scalars only, as the component engine does.
"""

from __future__ import annotations

import numbers

import sympy as sp

from gradlang import limits
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


def stretched(shapes: list, what: str = "an elementwise operation", target: Shape | None = None) -> Shape:
    """NumPy's broadcast of shapes (section 3b): aligned from the last axis, a size 1 stretches, other sizes
    must be equal (a size name broadcasts against itself or 1); a ShapeError names the two shapes that clash.
    With a `target` (broadcast_to), the result must be the target itself."""
    rank = max(len(s) for s in shapes)
    result = []
    for k in range(1, rank + 1):
        sizes = [s[-k] for s in shapes if len(s) >= k]
        kept = [n for n in sizes if n != 1]
        if any(n != kept[0] for n in kept):
            clash = [s for s in shapes if len(s) >= k and s[-k] != 1]
            a, b = next((p, q) for p in clash for q in clash if p[-k] != q[-k])
            raise ShapeError(f"{what} cannot broadcast {describe(a)} and {describe(b)}: shapes align from the "
                             f"last axis, where sizes must be equal or 1")
        result.append(kept[0] if kept else sp.S.One)
    shape = tuple(reversed(result))
    if target is not None and shape != target:
        raise ShapeError(f"{what} cannot stretch {describe(shapes[0])} to {describe(target)}")
    return shape


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


def valued(size, sizes: dict):
    """A size at a point: the point's value of it, and of a sum of sizes (`m + n`, what concat gives) its
    parts' values added; a size the point does not give stays as it is."""
    if size in sizes:
        return sizes[size]
    if isinstance(size, sp.Expr) and not size.is_Atom:
        return size.xreplace({s: sp.Integer(sizes[s]) for s in size.free_symbols if s in sizes})
    return size


def axis_of(axis, rank: int, what: str) -> int:
    """An axis as a number in 0..rank-1; a negative axis counts from the end, as NumPy's."""
    if not (isinstance(axis, (int, sp.Integer))):
        raise ShapeError(f"the axis of {what} must be an integer, as {what}([A, B], 0)")
    if not -rank <= int(axis) < rank:
        raise ShapeError(f"axis {axis} is out of range for {what} of rank {rank}")
    return int(axis) % rank


def axes_of(axis, rank: int, what: str) -> tuple:
    """Axes as increasing numbers in 0..rank-1, from None (every axis), an integer or a tuple of them; a
    negative axis counts from the end, as NumPy's; an axis twice or out of range is a ShapeError."""
    if axis is None:
        return tuple(range(rank))
    items = tuple(axis) if isinstance(axis, (tuple, sp.Tuple)) else (axis,)
    for item in items:
        if not getattr(item, "is_Integer", False) and not isinstance(item, int):
            raise ShapeError(f"an axis of {what} must be a whole number, as {what}(X, axis=-1) or axis=(0, 1)")
        if not -rank <= int(item) < rank:
            raise ShapeError(f"{what}: a tensor of rank {rank} has no axis {item} (axes are 0 to {rank - 1}, "
                             f"or -1 to -{rank} from the end)")
    axes = sorted(int(item) % rank for item in items)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{what} is given the same axis twice")
    return tuple(axes)


def concat(parts: list, axis) -> Shape:
    """The shape of `concat(parts, axis)`: equal ranks (at least 1), equal sizes off the axis, sizes added along it."""
    if any(len(p) != len(parts[0]) or not p for p in parts):
        shown = " and ".join(describe(p) for p in parts)
        raise ShapeError(f"concat needs tensors of one rank (at least 1), got {shown}")
    k = axis_of(axis, len(parts[0]), "concat")
    for p in parts[1:]:
        if p[:k] + p[k + 1:] != parts[0][:k] + parts[0][k + 1:]:
            raise ShapeError(f"concat along axis {k} cannot join {describe(parts[0])} and {describe(p)}")
    return parts[0][:k] + (sp.Add(*(p[k] for p in parts)),) + parts[0][k + 1:]


MAX_DECLARED_RANK = limits.MAX_RANK  # a declaration, a list, ones(…) (NumPy's own bound on the number of axes)


def stack(parts: list, axis) -> Shape:
    """The shape of `stack(parts, axis)`: equal shapes, one new axis of the number of parts."""
    if any(p != parts[0] for p in parts):
        shown = " and ".join(sorted({describe(p) for p in parts}))
        raise ShapeError(f"stack needs entries of one shape, got {shown}")
    if len(parts[0]) + 1 > MAX_DECLARED_RANK:
        raise ShapeError(f"stack of {describe(parts[0])} would have rank {len(parts[0]) + 1}, above the limit of "
                         f"{MAX_DECLARED_RANK} axes")
    k = axis_of(axis, len(parts[0]) + 1, "stack")
    return parts[0][:k] + (sp.Integer(len(parts)),) + parts[0][k:]


def check_range(start, stop, length) -> None:
    """A range start:stop inside a length (checked where the numbers are known; stop before start always)."""
    backwards = sp.expand(stop - start)
    if backwards.is_Integer and backwards < 0:
        raise ShapeError(f"the range {start}:{stop} is out of range: it ends before it starts")
    if all(getattr(v, "is_Integer", False) for v in (start, stop, length)) and not 0 <= start <= stop <= length:
        raise ShapeError(f"the range {start}:{stop} is out of range for length {length}")


def check_valued(shape: tuple, sizes: dict) -> None:
    """No size of a shape is negative at the point: a difference of sizes (what a range leaves, n − 4) that is
    would be a range outside its vector (x[0:4] at n = 3), which its derivative no longer writes as a range."""
    for size in shape:
        value = valued(size, sizes)
        if getattr(value, "is_Integer", False) and value < 0 or isinstance(value, int) and value < 0:
            raise ShapeError(f"a range lies outside its vector or matrix at this point "
                             f"(the size {size} would be {value})")


def as_basic(entry) -> sp.Basic:
    """A size, number or formula of the engine as a SymPy node: a node stays, a Python int or float becomes a
    SymPy number (a size of 3, a gradient of nothing). Never text (only the grammar reads what a user typed):
    anything else is a bug, said as one."""
    if isinstance(entry, sp.Basic):
        return entry
    if isinstance(entry, numbers.Integral):  # int, NumPy's integers
        return sp.Integer(int(entry))
    if isinstance(entry, numbers.Real):
        return sp.Float(float(entry))
    raise TypeError(f"a size, number or formula was expected, not {type(entry).__name__}")
