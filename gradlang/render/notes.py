"""explain's Notes (sentences with expressions in them) in the text formats.

Plain text and pretty spell a note's values with the calling printer's
`show`; LaTeX sets the words as text and each run of values and notation as
one inline formula, so a sentence about `x^2` shows $x^{2}$, never the
source text.
"""

from __future__ import annotations

from gradlang.explain.formula import Math, latex_chars
from gradlang.render.latex import text_escape


def plain_note(note, show) -> str:
    """The note as one line of text, its values through `show`."""
    return note.spelled(show) if note else ""


def latex_note(note, show, display: bool = False) -> str:
    """The note for \\intertext or a paragraph: words escaped, every formula inside $ $
    (with display, a formula longer than INLINE set as a display of its own, for a paragraph)."""
    out = []
    for words, parts in note.spans():
        if words:
            out.append(text_escape("".join(parts)))
            continue
        formula = _formula(parts, show)
        out.append(rf"\[ {formula} \]" if display and len(formula) > INLINE else f"${formula}$")
    return "".join(out)


INLINE = 40  # characters of LaTeX source a formula may take inside a sentence; longer ones get display rows


def latex_rows(note, show, pieces) -> list[str]:
    """align* rows for a note: its words as \\intertext, short formulas inline, long ones as display rows
    broken to fit the page (`pieces(value, show)`, the derivation's line breaker)."""
    rows: list[str] = []
    words = ""
    for is_words, parts in note.spans():
        inline = _formula(parts, show)
        if is_words:
            words += text_escape("".join(parts))
        elif len(inline) <= INLINE:
            words += f"${inline}$"
        else:
            rows += [_intertext(words)] if words.strip() else []
            rows += [rf"&\quad {row} \\" for row in _displayed(parts, show, pieces)]
            words = ""
    return rows + ([_intertext(words)] if words.strip(" ,") else [])


def _displayed(parts, show, pieces) -> list[str]:
    """A formula's parts on rows: notation joins the row it meets, a value may break into several."""
    rows, current = [], ""
    for part in parts:
        if isinstance(part, Math):
            current += part.latex
            continue
        broken = pieces(part, show)
        current += latex_chars(broken[0])
        for piece in broken[1:]:
            rows.append(current)
            current = latex_chars(piece)
    return rows + [current]


def _formula(parts, show) -> str:
    """A run of notation and values as LaTeX; a let name the printer left in Unicode (δ) translated."""
    return latex_chars("".join(p.latex if isinstance(p, Math) else show(p) for p in parts))


def _intertext(text: str) -> str:
    return rf"\intertext{{\sloppy {text.strip()}}}"
