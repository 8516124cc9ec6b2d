"""Expressions as text inside explain's records (summaries, notes, labels): gradlang plain syntax.

The spelling is the plain printer's own, so a note reads exactly as the
value it names prints. This is the one import of explain from render, for
text held in the records; printing the records is render's (render/derivation.py).
"""

from __future__ import annotations

from ..render.plain import to_plain as plain

__all__ = ["plain"]
