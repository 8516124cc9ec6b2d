"""A removed or invented term that fits is written out (issue 40): the ledger gives a term by its rule
(`ā·∂v/∂mu`) only when its formula, broken between its outermost terms, would take more than four lines of
100 columns. The mixture's M-step (tests/explain/hidden_like/gmm_estep_*.grad) lost its let for (x - mu)^2
when constant factors were folded into the adjoint; its term, a product of 86 columns with no outermost sum,
was wider than the entry's line and could not be broken there, so it was given by its rule. It is written on
the line below the entry's words now.

The fit is measured here by a breaker of the test's own (the formula after its entry's words, or on lines of
its own below them, broken before a ` + ` or ` - ` outside every bracket), not by the ledger's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from gradlang.core.session import Session
from gradlang.expr.values import to_symbolic
from gradlang.explain.explanation import Explanation
from gradlang.explain.ledger import words
from gradlang.render import to_plain

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted([*(HERE / "hidden_like").glob("*.grad"), *(HERE / "ledger_programs").glob("*.grad")])
PAGE = 100          # columns of a printed line, "# " included
WORDS = 30          # columns of "#    inventing: adds −r₁₂ = ", the widest entry words before a term
INDENT = 8          # columns of "#       " before a term's further lines
LINES = 4


def _outer_terms(text: str) -> list[str]:
    """The text split before each ` + ` or ` - ` outside every bracket."""
    pieces, level, start = [], 0, 0
    for i, char in enumerate(text):
        level += (char in "([") - (char in ")]")
        if level == 0 and i > start and text[i:i + 3] in (" + ", " - "):
            pieces.append(text[start:i])
            start = i + 1
    return pieces + [text[start:]]


def _greedy(pieces: list[str], first: int, rest: int) -> list[str] | None:
    """The pieces packed into lines (the first of `first` columns, the others of `rest`), or None if one is wider."""
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + 1 + len(piece) <= (rest if len(lines) > 1 else first):
            lines[-1] += " " + piece
        elif len(piece) <= (rest if lines else first):
            lines.append(piece)
        else:
            return None
    return lines


def fits(term: str, after: str = "") -> bool:
    """The term (and the words after it) in at most four lines of 100 columns: after its entry's words, or
    below them, broken between its outermost terms."""
    pieces = _outer_terms(term)
    pieces[-1] += after
    beside = _greedy(pieces, PAGE - WORDS, PAGE - INDENT)
    below = _greedy(pieces, PAGE - INDENT, PAGE - INDENT)
    return (beside is not None and len(beside) <= LINES) or (below is not None and len(below) + 1 <= LINES)


def test_the_breaker_of_this_test():
    assert fits("a*b + c")
    assert fits("x" * 90) and not fits("x" * 93)
    assert fits(" + ".join(["y" * 40] * 6)) and not fits(" + ".join(["y" * 80] * 5))
    assert not fits("x" * 60, ", a gradient the function lacks" + "z" * 10)


def _terms_given_by_rule(path: Path) -> list[str]:
    """The formulas of every removed or invented term the program's ledgers give by their rule."""
    found = []
    results = [r for r in Session().run(path.read_text()) if r is not None and r.kind == "explain"]
    for result in results:
        for step in result.steps:
            if not isinstance(step, Explanation) or not step.ledger:
                continue
            display = getattr(step.vector, "display", ()) or ()
            expr = to_symbolic(step.request.expr)
            expr = expr if isinstance(expr, sp.Basic) else None
            for entry, (*_, said) in zip(step.ledger, words.lines(step)):
                if entry.order >= 2 or entry.verdict not in ("blocking", "inventing") or "ā·∂" not in str(said):
                    continue
                term = words.written_term(entry, expr, display)
                if entry.verdict == "inventing":
                    term = term.applyfunc(lambda e: -e) if hasattr(term, "applyfunc") else -term
                text = words._short_source(term, display)
                after = ", a gradient the function lacks" if entry.verdict == "inventing" else ""
                if fits(text, after):
                    found.append(f"{path.name}: {said} though {text} fits")
    return found


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_term_that_fits_is_given_by_its_rule(path):
    assert _terms_given_by_rule(path) == []


@pytest.mark.parametrize("name", ["gmm_estep_literal", "gmm_estep_symbolic"])
def test_the_mixtures_removed_term_is_written_below_its_words(name):
    """The M-step's term: on the line below `blocking: removes r₁ =`, whole, within the page."""
    lines = to_plain([r for r in Session().run((HERE / "hidden_like" / f"{name}.grad").read_text())
                      if r is not None and r.kind == "explain"][-1]).splitlines()
    at = lines.index("#    blocking: removes r₁ =")
    term = "-resp*(x - mu)*(2*logits + dot((x - mu)^2, resp) - (x - mu)^2 - 2*dot(logits, resp))/2"
    assert lines[at + 1] == f"#       {term}"
    assert not any("ā" in line for line in lines) and max(map(len, lines)) <= PAGE
