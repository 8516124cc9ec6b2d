"""The session names a result is printed beside, so a printer can keep an entry's brackets.

pi[2] beside a session name pi2 would be π₂ twice in pretty and \\pi_{2} twice in LaTeX; the printers of a
result say which names it shows (`names_shown`), and the entry's spelling asks (`beside_a_name`). It lives
outside the tensor engine so that printing a scalar result does not load the engine (issue #41)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_NAMES_SHOWN: ContextVar = ContextVar("names_shown", default=frozenset())


@contextmanager
def names_shown(names):
    """Inside, an entry v[k] whose subscripted spelling is one of these names keeps its brackets."""
    token = _NAMES_SHOWN.set(frozenset(names))
    try:
        yield
    finally:
        _NAMES_SHOWN.reset(token)


def shown(name: str) -> bool:
    """Whether a printer of the result at hand shows this session name."""
    return name in _NAMES_SHOWN.get()
