"""The grammar is LALR(1) without conflicts: lark resolves a shift/reduce conflict silently.

A conflict lark settles by shifting still parses most programs, and breaks a
few: `argument: comparison | STRING` made `M[0,1]` a syntax error once the
row slice `M[i, :]` also read the "," after a comparison. lark only logs
conflicts, so this test listens to its logger while the parser is built.
"""

from __future__ import annotations

import logging

import pytest
from lark import Lark, logger

from gradlang import Session
from gradlang.syntax.parse import _grammar_text


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_the_grammar_has_no_conflicts():
    handler, level = _Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        Lark(_grammar_text(), parser="lalr", debug=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert not [m for m in handler.messages if "conflict" in m.lower()], handler.messages


@pytest.mark.parametrize(
    "source, expected",
    [
        ("M = [[1, 2], [3, 4]]\nM[0,1]", 2),
        ("M = [[1, 2], [3, 4]]\nM[1,0] + M[1, :][0] + M[:,1][0]", 3 + 3 + 2),
        ("f(a, b) = a - b\nf(3,1)", 2),
        ("max(1,2)", 2),
    ],
)
def test_commas_after_a_comparison_still_separate_arguments(source, expected):
    assert Session().eval(source) == expected
