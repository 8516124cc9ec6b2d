"""The names used as indices at a point (v[k], M[i, j], onehot(k, n)): given whole numbers, within their
lengths, and substituted before components are taken. Shared by the tensor engine's `at` and whole-array
evaluation, which must refuse the same points with the same words."""

from __future__ import annotations

import sympy as sp

from gradlang.errors import ShapeError, ValueError
from gradlang.remembered import remembered
from gradlang.expr.graph import build_dag
from gradlang.expr.source import to_source
from gradlang.expr.walk import shaped_replace
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor import shapes


def _index_symbols(value) -> frozenset:
    """The names used as indices: v[k], M[i, j], rows M[i], onehot(k, n); once per value (remembered.py)."""
    return remembered("index symbols", value, _each_index_symbol)


def _each_index_symbol(value) -> frozenset:
    indices = {index for index, _ in _indexings(value)}
    return frozenset(index for index in indices if isinstance(index, sp.Symbol) and not shapes.is_size(index))


def _indexings(value) -> tuple:
    """The (index, length) pairs of every indexing node of the value's DAG, walked once per value (remembered.py)."""
    return remembered("indexings", value, lambda v: tuple(pair for node in build_dag([v]).nodes for pair in _indexed(node)))


def check_indices(value, pairs: list) -> None:
    """A name used as an index must be given a whole number."""
    indices = _index_symbols(value)
    for symbol, number in pairs:
        if symbol in indices and not (isinstance(number, sp.Expr) and number.is_Integer):
            raise ValueError(f"'{symbol}' is used as an index, so it must be given a whole number, not {to_source(number)}")


def _indexed(node) -> list:
    """(index, length) pairs of an indexing node: v[k], M[i, j], M[i, :], M[:, j], onehot(k, n)."""
    if isinstance(node, t.Entry):
        return list(zip(node.args[1:], t.shape_of(node.args[0])))
    if isinstance(node, (t.Row, t.Column)):
        return [(node.args[1], t.shape_of(node.args[0])[0 if isinstance(node, t.Row) else 1])]
    if isinstance(node, t.OneHot):
        return [(node.args[0], node.args[1])]
    return []


def check_ranges(value, pairs: list, sizes: dict) -> None:
    """Every index within its length once the point gives both (NumPy would raise, or wrap a negative one)."""
    given = {symbol: number for symbol, number in pairs if isinstance(number, sp.Integer)}
    known = {size: sp.Integer(n) for size, n in sizes.items() if isinstance(size, sp.Symbol)}
    for written, length in _indexings(value):
        index = given.get(written, written)
        index = index.xreplace(known) if isinstance(index, sp.Basic) else index  # x[n], x[n - 1]: n a size
        length = length.xreplace(known) if isinstance(length, sp.Basic) else length
        if isinstance(index, (int, sp.Integer)) and isinstance(length, (int, sp.Integer)):
            if not 0 <= int(index) < int(length):
                raise ShapeError(f"index {_counted(written, length)} is out of range for length {length}")


def _counted(index, length) -> str:
    """An index as the user wrote it: x[-3] is the formula's x[n - 3], which n = 2 puts out of range."""
    if isinstance(index, sp.Add) and index.free_symbols and len(index.free_symbols) == 1:
        size = next(iter(index.free_symbols))
        if shapes.is_size(size) and (index - size).is_Integer and (index - size) < 0:
            return str(index - size)
    return to_source(index.xreplace({s: length for s in index.free_symbols if shapes.is_size(s)}))


def indices_first(value, pairs: list):
    """Substitute the integers given to index symbols (v[k], onehot(k, n)) before taking components."""
    indices = _index_symbols(value)
    first = {s: v for s, v in pairs if s in indices and isinstance(v, sp.Integer)}
    if not first:
        return value, pairs
    return shaped_replace(value, first), [(s, v) for s, v in pairs if s not in first]  # onehot(k, n) - onehot(0, n)
