"""The one bracket scanner (gradlang/syntax/brackets.py) reads brackets as the lexer does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gradlang import limits
from gradlang.errors import LimitError, SyntaxError
from gradlang.syntax import brackets
from gradlang.syntax.parse import PARSER, parse
from gradlang.syntax.standalone_parser import UnexpectedInput
from gradlang.shell.repl import is_complete

_BRACKET_TOKENS = {"LPAR", "RPAR", "LSQB", "RSQB"}
# Text the lexer may or may not accept: quotes are there so that a string syntax, once
# the grammar has one, is compared too.
_TEXT = st.text(alphabet="ab1 .,;()[]#\n+*'\"\\", max_size=40)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(_TEXT)
def test_the_scanner_finds_the_brackets_the_lexer_finds(source):
    try:
        tokens = [(t.start_pos, str(t)) for t in PARSER.lex(source) if t.type in _BRACKET_TOKENS]
    except UnexpectedInput:
        return  # not gradlang text; the parser reports it
    found = [(m.offset, m.text) for m in brackets.marks(source) if m.kind in ("open", "close")]
    assert found == tokens


def test_the_scanner_skips_comments_as_the_grammar_does():
    assert brackets.COMMENT == PARSER.get_terminal("COMMENT").pattern.value.replace("\n", r"\n")
    assert brackets.open_brackets("f(x  # ) closed only in a comment\n") == 1
    assert brackets.open_brackets("[1, 2]]") == -1


@pytest.mark.parametrize(
    "source, message, line, column",
    [
        ("f(x]", "']' has no matching '['", 1, 4),
        ("1 +\n  (2 # (\n", "'(' is never closed", 2, 3),
        ("x)", "')' has no matching '('", 1, 2),
        ("# ( \n[1, (2)", "'[' is never closed", 2, 1),
    ],
)
def test_a_bracket_error_points_at_the_bracket(source, message, line, column):
    with pytest.raises(SyntaxError) as caught:
        parse(source)
    assert caught.value.message == message
    assert (caught.value.span.line, caught.value.span.column) == (line, column)


def test_nesting_and_statements_are_bounded_before_parsing():
    deep = "(" * (limits.MAX_SOURCE_NESTING + 1)
    with pytest.raises(LimitError, match="nested more than"):
        parse(deep + ")" * (limits.MAX_SOURCE_NESTING + 1))
    many = "x\n" * limits.MAX_STATEMENTS + "f(\n1)\n"
    with pytest.raises(LimitError, match="statements, the limit") as caught:
        parse(many)
    assert caught.value.span.line == limits.MAX_STATEMENTS + 1
    parse("x\n" * (limits.MAX_STATEMENTS - 1) + "max(\n1,\n2)")  # a new line inside brackets starts nothing


def test_the_repl_continues_exactly_while_a_bracket_is_open():
    assert not is_complete("f(x,\n  # ) not this one\n")
    assert is_complete("f(x,\n  y)  # (")
