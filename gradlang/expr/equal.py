"""SymPy equality over the DAG, and caches of facts of a formula keyed by it.

`a == b` on two SymPy formulas that are equal but were built apart (two
sessions of the same program, or a part rebuilt after SymPy's own cache let
the first copy go) compares them as trees: `Basic.__eq__` compares the args
tuples, and a shared part is compared again at every path to it. A formula
with shared parts (five batch norms, each using its centred input three
times) is small as a DAG and huge as a tree, so one dictionary lookup that
meets an equal copy of its key cost MoCo v3's gradient over a minute of CPU.

`same(a, b)` gives the same answer as `a == b` but compares each pair of
parts once. `Key(expr)` hashes as the formula does and compares by `same`, and
`formula_cache` is `functools.lru_cache` with its arguments so keyed: the
facts a rewrite asks of a formula (its size, its operations, its cancelled
form) are found for an equal copy at the cost of one DAG walk, not a tree walk.
"""

from __future__ import annotations

import functools
from collections import OrderedDict

import sympy as sp


def same(a, b) -> bool:
    """a == b as SymPy decides it, each pair of parts compared once (linear in the DAG, not the tree)."""
    if a is b:
        return True
    if not isinstance(a, sp.Basic) or not isinstance(b, sp.Basic):
        return a == b
    return _same(a, b)


_BASIC_EQ = sp.Basic.__eq__
EQUAL_PAIRS = 1 << 15  # pairs of parts found equal, kept: the next lookup of a part of the same formula is one step
_EQUAL: OrderedDict = OrderedDict()  # (id(a), id(b)) -> (a, b): held, so the ids stay theirs while kept


def _same(a, b) -> bool:
    """Basic.__eq__ over the DAG, by a stack of pairs, not recursion: a formula deeper than Python's recursion
    limit (30 nested softmaxes' gradient) is compared in linear time too (a RecursionError here once fell back
    to `a == b`, which walks the tree: exponential in a shared formula). The pairs found equal are remembered
    (the oldest go first)."""
    stack, met, found = [(a, b)], set(), []
    while stack:
        x, y = stack.pop()
        shallow = _shallow(x, y)
        if shallow is False:
            return False
        if shallow is True or (id(x), id(y)) in met:
            continue
        met.add((id(x), id(y)))
        found.append((x, y))
        mine, theirs = x._hashable_content(), y._hashable_content()
        if len(mine) != len(theirs):
            return False
        for p, q in zip(mine, theirs):
            if not (isinstance(p, sp.Basic) and isinstance(q, sp.Basic)):
                if p != q:  # plain data: a shape, a name
                    return False
            elif p.is_Number and type(p) is not type(q):  # x + 2 is not x + 2.0, as Basic.__eq__ has it
                return False
            else:
                stack.append((p, q))
    for x, y in found:
        _EQUAL[(id(x), id(y))] = (x, y)
    while len(_EQUAL) > EQUAL_PAIRS:
        _drop_oldest(_EQUAL)
    return True


def _shallow(x, y):
    """True or False where one look decides (the same object, a leaf, two kinds of node, a class with its own
    equality such as Tuple and arrays, two hashes, a pair found equal before); None where the parts decide."""
    if x is y:
        return True
    if not x.args or not y.args or type(x) is not type(y) or type(x).__eq__ is not _BASIC_EQ:
        return x == y
    if hash(x) != hash(y):  # SymPy keeps a node's hash: equal nodes hash alike
        return False
    return True if (id(x), id(y)) in _EQUAL else None


class Key:
    """A formula as a dictionary key: its own hash, equality by `same`."""

    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, Key) and self._hash == other._hash and same(self.value, other.value)


def formula_cache(maxsize: int):
    """functools.lru_cache(maxsize) for functions of formulas, the arguments compared by `same`.

    Entries are kept in the order they were last used, so what is kept depends on the calls alone."""
    def decorate(function):
        kept: OrderedDict = OrderedDict()

        @functools.wraps(function)
        def cached(*args):
            key = tuple(Key(a) for a in args)
            found = kept.get(key, _MISSING)
            if found is not _MISSING:
                _touch(kept, key)
                return found
            result = function(*args)
            kept[key] = result
            while len(kept) > maxsize:
                _drop_oldest(kept)
            return result

        cached.cache_clear = kept.clear
        _CACHES.append(kept)
        return cached
    return decorate


_CACHES: list = []  # every formula_cache's entries, for forget()


def forget() -> None:
    """Drop every cached fact and remembered pair (tests: a measure of work that starts from nothing)."""
    for kept in _CACHES:
        kept.clear()
    _EQUAL.clear()


_MISSING = object()


def _touch(kept: OrderedDict, key) -> None:
    """Mark an entry used lately; one another thread dropped meanwhile is simply not kept (no lock:
    remembered.py says why)."""
    try:
        kept.move_to_end(key)
    except KeyError:
        pass


def _drop_oldest(kept: OrderedDict) -> None:
    try:
        kept.popitem(last=False)
    except KeyError:
        return
