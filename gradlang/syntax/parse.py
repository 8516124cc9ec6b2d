"""Source text to a lark tree: the one place user text is read.

The LALR parser of grammar/gradlang.lark (positions on) is built ahead of time
by grammar/build_parser.py into standalone_parser.py, lark's run-time with the
tables: importing lark and building (or reading from lark's cache in the temp
folder) the tables at every start was 0.07x of `import sympy` (issue #41).
Before parsing, the bracket scanner (brackets.py) checks that
brackets match and are not nested absurdly deep, and bounds the number of
statements (the LALR parser itself is iterative, but every later stage
recurses over the tree); after parsing, the tree's depth is bounded too.
Lark's exceptions never leave this module: they become gradlang SyntaxErrors
with a friendly message and a place.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from gradlang import limits
from gradlang.errors import LimitError, Span, SyntaxError
from gradlang.syntax.brackets import PAIRS, check_brackets, count_statements, span_at
from gradlang.syntax.standalone_parser import (Lark_StandAlone, Token, Tree, UnexpectedCharacters, UnexpectedEOF,
                                               UnexpectedInput, UnexpectedToken)

_CLOSERS = set(PAIRS.values())


def _grammar_text() -> str:
    """The grammar shipped in the package, or the checkout's top-level copy (the tests build lark's parser
    from it, to compare with the one built ahead of time).

    Looked for beside this file first: importlib.resources imports zipfile (a few ms of every start-up,
    issue #41), needed only where the package is not a folder of files (a zipped install)."""
    here = Path(__file__).resolve().parents[1]
    for candidate in (here / "grammar" / "gradlang.lark", here.parent / "grammar" / "gradlang.lark"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    from importlib import resources

    return (resources.files("gradlang") / "grammar" / "gradlang.lark").read_text(encoding="utf-8")


class _BracketNewlines:
    """Post-lexer: newlines inside ( ) and [ ] do not end a statement."""

    always_accept = ("_NL",)

    def process(self, stream):
        depth = 0
        for token in stream:
            if token.type == "_NL":
                if depth == 0:
                    yield token
                continue
            if token in PAIRS:
                depth += 1
            elif token in _CLOSERS:
                depth = max(0, depth - 1)
            yield token


PARSER = Lark_StandAlone(postlex=_BracketNewlines())  # the tables' options: grammar/build_parser.py

_TERMINAL_WORDS = {
    "NAME": "a name",
    "NUMBER": "a number",
    "COMPARE": "a comparison",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/' or '@'",
    "POW_OP": "'^'",
    "STRING": "a quoted file name",
    "_NL": "a new line",
    "$END": "the end of the input",
}


def parse(source: str) -> Tree:
    """Parse a whole program; raise SyntaxError or LimitError with a place."""
    check_size(source)
    check_brackets(source)
    count_statements(source)
    try:
        tree = PARSER.parse(source)
    except UnexpectedInput as error:
        raise _friendly(error, source) from None
    _check_depth(tree)
    return tree


def check_size(source: str) -> None:
    """Refuse a program too long to read within the limits, before reading it."""
    limit = limits.MAX_SOURCE_CHARS
    if len(source) > limit:
        raise LimitError(f"the program has {len(source):,} characters, above the limit of {limit:,}", span_at(source, limit))


def _check_depth(tree: Tree) -> None:
    """Bound the tree's depth without recursing (chains like - - - x or x^x^x)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.MAX_TREE_DEPTH:
            raise LimitError(
                f"the expression is nested more than {limits.MAX_TREE_DEPTH} levels deep",
                Span.of(node.meta),
            )
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    try:
        pattern = PARSER.get_terminal(name).pattern
    except KeyError:
        return name.lower()
    return f"'{pattern.value}'" if pattern.type == "str" else name.lower()


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "the end of the input"
    if token.type == "_NL":
        return "the end of the line"
    return f"'{token.value}'"


def _expected(names) -> str:
    names = set(names)
    if {"NAME", "NUMBER"} <= names:
        return " (expected an expression)"
    words = sorted({_describe_terminal(n) for n in names if not n.startswith("__")})
    if len(words) > 6:
        return ""
    return " (expected " + ", ".join(words) + ")" if words else ""


def _character(char: str) -> str:
    """A character for a message: itself in quotes, or its code point and name when it does not show
    (a control or format character such as U+202E, which a terminal would obey or hide)."""
    if char.isprintable():
        return f"'{char}'"
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def _friendly(error: UnexpectedInput, source: str) -> SyntaxError:
    """Turn a lark exception into a SyntaxError a newcomer can act on."""
    if isinstance(error, UnexpectedCharacters):
        char = source[error.pos_in_stream] if error.pos_in_stream < len(source) else "?"
        span = Span(error.line, error.column, error.line, error.column + 1)
        return SyntaxError(f"unexpected character {_character(char)}", span)
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type in ("$END", "_NL"):
            line, column = _end_of_statement(source, token)
            return SyntaxError(
                "the statement ends too early" + _expected(error.expected), Span(line, column, line, column + 1)
            )
        span = Span(token.line, token.column, token.end_line or token.line, token.end_column or token.column + 1)
        return SyntaxError(f"unexpected {_describe_token(token)}{_expected(error.expected)}", span)
    if isinstance(error, UnexpectedEOF):
        line, column = _last_position(source)
        return SyntaxError("the program ends too early", Span(line, column, line, column + 1))
    return SyntaxError(str(error).splitlines()[0])


def _end_of_statement(source: str, token: Token) -> tuple[int, int]:
    """Where an early end happened: the newline token, or just past the text."""
    if token.type == "_NL" and token.line is not None:
        return token.line, token.column
    return _last_position(source)


def _last_position(source: str) -> tuple[int, int]:
    lines = source.rstrip("\n").split("\n") or [""]
    return len(lines), len(lines[-1]) + 1
