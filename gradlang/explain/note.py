"""Sentences with expressions in them: the words fixed when explain runs, the expressions printed later.

A step's note, the reason a component is zero and every sentence of the stop
ledger are computed once, in explain, as a `Note`: a tuple of parts, each
words (`str`), notation (formula.py's `Math`, spelled for plain text and for
LaTeX) or a value (a SymPy expression, printed by whichever printer shows
the note, with its abbreviations and settings). So LaTeX sets the
expressions of a sentence as mathematics, never as gradlang source, and no
printer composes a sentence of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.explain.formula import Math
from gradlang.expr.source import to_source

LISTED = 3  # values named in a list before "and n more"


@dataclass(frozen=True)
class Note:
    """Words and the expressions in them, kept apart until a printer spells them."""

    parts: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.parts)

    def spelled(self, show, words=lambda text: text, notation=lambda m: m.plain) -> str:
        """The sentence in one format: words through `words`, values through `show`, Math through `notation`."""
        return "".join(words(p) if isinstance(p, str) else notation(p) if isinstance(p, Math) else show(p)
                       for p in self.parts)

    def spans(self):
        """The parts as (is_words, parts) runs: consecutive values and notation form one formula."""
        runs: list = []
        for part in self.parts:
            words = isinstance(part, str)
            if runs and runs[-1][0] == words:
                runs[-1][1].append(part)
            else:
                runs.append((words, [part]))
        return [(words, tuple(parts)) for words, parts in runs]

    def __str__(self) -> str:
        return self.spelled(lambda value: to_source(value, sg=True))

    def __add__(self, other) -> "Note":
        return Note(self.parts + (other.parts if isinstance(other, Note) else (other,)))


def note(*parts) -> Note:
    """A Note from its parts, nested Notes flattened and empty words dropped."""
    flat: list = []
    for part in parts:
        if isinstance(part, Note):
            flat.extend(part.parts)
        elif not (isinstance(part, str) and not part):
            flat.append(part)
    return Note(tuple(flat))


def listed(values, more: str = "more") -> Note:
    """Values separated by commas, at most LISTED of them, then "n more"."""
    values = list(values)
    parts: list = []
    for k, value in enumerate(values[:LISTED]):
        parts += ([", "] if k else []) + [value]
    if len(values) > LISTED:
        parts.append(f", {len(values) - LISTED} {more}")
    return note(*parts)


def equals() -> Math:
    """ = inside a formula (so LaTeX keeps the two sides in one math span)."""
    return Math(" = ", " = ")
