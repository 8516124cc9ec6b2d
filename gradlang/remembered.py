"""Facts computed once from an immutable value and remembered: a statement run again does no walk again.

`g at W = …` run again with new arrays (a loop in a notebook, Session.run,
the REPL) gives `at` the same value object `g` is bound to. What `at` reads
off the formula (the symbols in it, the indices it takes, its DAG, its
compiled NumPy function) depends on that value alone, not on the numbers, so
it is computed on the first call and looked up after: a DAG walk of the
gradient costs more than the arithmetic at width 64.

Entries are keyed by the kind of fact and the value's identity, not by SymPy
equality (comparing two equal formulas built apart walks both as trees); each
entry holds its value, so the identity stays that value's while it is
remembered. A rebound name binds a new value, so a stale fact is never read.
Only immutable values are remembered (SymPy objects, and frozen dataclasses
such as the lowered form of a statement); the cache is bounded, and the
least recently used entry goes first, so what is kept depends on the order of
the statements alone, never on time or hash seed. Each kind of fact has its
own bound, so many facts of one kind never push out those of another.
"""

from __future__ import annotations

import sys
from collections import OrderedDict

CAPACITY = 256  # facts kept of each kind: one per value taken `at` a point, one per literal of a statement run again

_FACTS: dict = {}  # kind -> OrderedDict: a statement of many literals does not push out the facts of a formula


def remembered(kind: str, value, compute, *key):
    """compute(value), remembered under the value's identity and key, among the facts of its kind, when the
    value is immutable.

    `key` adds what else the fact depends on (hashable plain data, such as the sizes of a point)."""
    if not _immutable(value):
        return compute(value)
    kept = _FACTS.get(kind)
    if kept is None:
        kept = _FACTS.setdefault(kind, OrderedDict())
    entry = (id(value), *key)
    found = kept.get(entry)
    if found is not None and found[0] is value:
        touch(kept, entry)
        return found[1]
    fact = compute(value)
    kept[entry] = (value, fact)
    trim(kept, CAPACITY)
    return fact


def forget() -> None:
    """Drop every remembered fact (tests; nothing else needs to: entries are keyed by the value itself)."""
    _FACTS.clear()


def touch(kept: OrderedDict, key) -> None:
    """Mark an entry as used lately. Sessions in threads share the cache, and no lock is taken (a budget's
    exception may land anywhere, and a lock it left held would stop every later statement): each OrderedDict
    call is one step under the GIL, and an entry another thread dropped meanwhile is simply not kept."""
    try:
        kept.move_to_end(key)
    except KeyError:
        pass


def trim(kept: OrderedDict, capacity: int) -> None:
    """Drop the least recently used entries above the capacity (see touch on threads)."""
    while len(kept) > capacity:
        try:
            kept.popitem(last=False)
        except KeyError:
            return


def _immutable(value) -> bool:
    """A SymPy object (SymPy is not imported for it: syntax/ has none), a frozen dataclass, or a class that
    says it is immutable (IMMUTABLE = True: the lowered form's nodes, frozen without being dataclasses)."""
    sympy = sys.modules.get("sympy")
    if sympy is not None and isinstance(value, sympy.Basic):
        return True
    kind = type(value)
    frozen = _FROZEN.get(kind)
    if frozen is None:
        frozen = _FROZEN[kind] = getattr(kind, "IMMUTABLE", False) is True or \
            getattr(getattr(kind, "__dataclass_params__", None), "frozen", False)
    return frozen


_FROZEN: dict = {}  # type -> whether it is a frozen dataclass, asked once per type
