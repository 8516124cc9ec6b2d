"""The user's documents speak of gradlang alone, and what they state is what gradlang does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradlang import Session

REPO = Path(__file__).resolve().parent.parent
USER_DOCS = [REPO / "README.md", REPO / "examples" / "README.md", *sorted((REPO / "docs").glob("*.md")),
             *sorted((REPO / "examples").glob("*.grad"))]
DECISIONS = (REPO / "docs" / "decisions.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_user_document_sends_the_reader_to_an_issue_number(path):
    """A reader has no tracker: "the program of issue 13" names nothing they can open."""
    found = re.findall(r".{0,30}\bissues? \d+.{0,30}", path.read_text(encoding="utf-8"))
    assert not found, found


# (source, its plain value, the words of docs/decisions.md that state it)
STATED = [
    ("softplus(u) at u = 1000.0", "1000.0", "`softplus(1000.0)` is `1000.0`"),
    ("diff(sigmoid(u), u) at u = -1000.0", "0.0", "`sigmoid`'s gradient at\n  -1000.0 is `0.0`"),
    ("diff(sigmoid(u), u)", "(1 - sigmoid(u))*sigmoid(u)", "`(1 - sigmoid(u))*sigmoid(u)`"),
    ("x: R; y: R\ngrad(x^2 + sg(y^2), [x, y])", "[2*x, 0]", "`grad(x^2 + sg(y^2), [x, y])` is `[2*x, 0]`"),
]


@pytest.mark.parametrize("source, value, words", STATED)
def test_decisions_state_what_gradlang_does(source, value, words):
    assert Session().run(source)[-1].text == value
    assert words in DECISIONS


def test_decisions_give_one_rule_for_sigmoid_and_softplus():
    """The section on numbers once said softplus overflows at 709, the registry's section that it does not."""
    assert "overflows to `inf` above" not in DECISIONS
    assert "TensorFlow's\n  `GradientTape.gradient` returns `None`" in DECISIONS
