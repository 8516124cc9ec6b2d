"""The one bracket scanner: ( ) and [ ] in source text, read as the lexer reads them.

Three readers need brackets before (or without) a parse: parse.py checks that
they match and are not nested absurdly deep, and counts statements (a
separator ends one only outside brackets); the REPL asks whether a line
leaves a bracket open, to read a continuation line. All of them go through
`marks`, so a bracket inside a comment is skipped by all of them, exactly as
the grammar's COMMENT terminal makes the lexer skip it (tests/syntax/test_brackets.py
checks the scanner against the lexer).
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

from gradlang import limits
from gradlang.errors import LimitError, Span, SyntaxError

COMMENT = r"#[^\n]*"  # the grammar's COMMENT terminal
PAIRS = {"(": ")", "[": "]"}
_OPENER_OF = {closer: opener for opener, closer in PAIRS.items()}
_BRACKETS = rf"(?P<comment>{COMMENT})|(?P<open>[(\[])|(?P<close>[)\]])"
_TOKENS = {
    False: re.compile(_BRACKETS),
    True: re.compile(rf"{_BRACKETS}|(?P<separator>[;\n]+)|(?P<word>[^\s;#()\[\]]+)"),
}


class Mark(NamedTuple):
    """A bracket, a run of statement separators, or a run of other text, outside comments."""

    kind: str  # "open", "close", "separator" or "word"
    text: str
    offset: int
    depth: int  # brackets around the mark (for a bracket: around the pair); negative after a stray closer


def marks(source: str, words: bool = False) -> Iterator[Mark]:
    """The brackets of the source in order (with `words`, the separators and other text too); comments are skipped."""
    depth = 0
    for match in _TOKENS[words].finditer(source):
        kind = match.lastgroup
        if kind == "comment":
            continue
        depth -= kind == "close"
        yield Mark(kind, match.group(), match.start(), depth)
        depth += kind == "open"


def open_brackets(text: str) -> int:
    """How many ( and [ are still open at the end (negative if over-closed)."""
    depth = 0
    for mark in marks(text):
        depth += (mark.kind == "open") - (mark.kind == "close")
    return depth


def check_brackets(source: str) -> None:
    """Match brackets and bound their nesting (limits.MAX_SOURCE_NESTING)."""
    stack: list[Mark] = []
    for mark in marks(source):
        if mark.kind == "open":
            stack.append(mark)
            if len(stack) > limits.MAX_SOURCE_NESTING:
                raise LimitError(f"brackets are nested more than {limits.MAX_SOURCE_NESTING} deep", span_at(source, mark.offset))
        elif mark.kind == "close":
            opener = _OPENER_OF[mark.text]
            if not stack or stack[-1].text != opener:
                raise SyntaxError(f"'{mark.text}' has no matching '{opener}'", span_at(source, mark.offset))
            stack.pop()
    if stack:
        raise SyntaxError(f"'{stack[-1].text}' is never closed", span_at(source, stack[-1].offset))


def count_statements(source: str) -> None:
    """Bound the number of statements before parsing (a statement starts after a separator at depth 0)."""
    count, fresh = 0, True
    for mark in marks(source, words=True):
        if mark.kind == "separator":
            fresh = fresh or mark.depth == 0
            continue
        if fresh:
            count, fresh = count + 1, False
            if count > limits.MAX_STATEMENTS:
                raise LimitError(f"the program has more than {limits.MAX_STATEMENTS:,} statements, the limit",
                                 span_at(source, mark.offset))


def span_at(source: str, offset: int) -> Span:
    """The one-character span at an offset of the source (lines and columns from 1)."""
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return Span(line, column, line, column + 1)
