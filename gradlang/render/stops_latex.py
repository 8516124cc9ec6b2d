"""The stop ledger of a tensor-level derivation in LaTeX: mathematics, never gradlang source.

Each stop gets a sentence, its expressions set as inline math, and the
adjoint arriving and the term it removes (or adds) as display rows broken to
fit the page (the caller's `pieces`), so no formula runs off a letter page.
The words are the ledger's own (explain/ledger/words.py), so every format says the
same thing about every stop.
"""

from __future__ import annotations

from gradlang.explain.ledger.components import adjoint_value, removed_value
from gradlang.explain.ledger.words import neutral
from gradlang.render.latex import text_escape

_INLINE = 40  # characters of LaTeX source an expression may take inside a sentence


def rows(explanation, show, pieces) -> list[str]:
    """align* rows for every entry of the ledger (its entries are all tensor-level)."""
    out: list[str] = []
    request = explanation.request
    for entry in explanation.ledger:
        stop, variable = _math(show(entry.stop)), _math(show(request.wrt))
        if entry.verdict == "irrelevant":
            out.append(_words(rf"stop {stop}: no path from {variable} reaches it; irrelevant: the stopped value "
                              rf"does not depend on {variable}"))
            continue
        out.append(_words(rf"stop {stop}: cuts the path from {variable}; adjoint arriving:"))
        out += _display(adjoint_value(entry), show, pieces)
        if entry.verdict == "neutral":
            out.append(_words(text_escape(neutral(entry))))
        elif entry.verdict == "blocking":
            out.append(_words("blocking: removes"))
            out += _display(removed_value(entry), show, pieces)
        else:
            out.append(_words("inventing: adds, a gradient the function itself does not have,"))
            out += _display(-removed_value(entry), show, pieces)
    return out


def _math(latex: str) -> str:
    return rf"\({latex}\)"


def _words(text: str) -> str:
    return rf"\intertext{{\sloppy {text}}}"


def _display(value, show, pieces) -> list[str]:
    """A formula on rows of its own, broken to fit."""
    if value == 0:
        return [r"&\quad 0 \\"]
    return [rf"&\quad {piece} \\" for piece in pieces(value, show)]
