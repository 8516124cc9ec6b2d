"""Expressions as text inside explain's records (summaries, notes, labels): gradlang source.

The spelling is expr/source.py's, the same the plain printer uses, so a note
reads exactly as the value it names prints. Printing the records themselves
is render's (render/derivation.py).
"""

from __future__ import annotations

from gradlang.expr.source import to_source as plain

__all__ = ["plain"]
