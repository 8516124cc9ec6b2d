"""Expressions as text inside explain's records (summaries, notes, labels): gradlang source.

The spelling is expr/source.py's, the same the plain printer uses in a derivation
(a stop as `sg(u)`), so a note reads exactly as the value it names prints.
Printing the records themselves is render's (render/derivation.py).
"""

from __future__ import annotations

from gradlang.expr.source import to_source


def plain(value) -> str:
    """The value as a derivation writes it: gradlang source, stops as `sg(u)`."""
    return to_source(value, sg=True)

__all__ = ["plain"]
