"""Plain derivation lines that fit the page: a wide title, step or simplified form broken between its terms.

The CLI prefixes each derivation line with "# ", so a line may take vector_lines.WIDTH columns. A formula is
broken only before a ` + ` or ` - ` at its outermost depth (inside a call's brackets for a title), so each
piece reads as a term; a term wider than a line stands alone on its line.
"""

from __future__ import annotations

import textwrap

from gradlang.render.vector_lines import WIDTH


def broken(head: str, text: str, at: str = "") -> list[str]:
    """`head text` on one line when it fits the width, else the head (and, with `at`, the text up to it)
    on one line and the rest indented below: a summary under a long call, a definition's body under its
    name (`definition: f(u) =`); a summary wider than the page wraps between its words."""
    if len(head) + 1 + len(text) <= WIDTH:
        return [f"{head} {text}"]
    if at and at in text:
        name, body = text.split(at, 1)
        return [f"{head} {name}{at.rstrip()}", f"   {body}"]
    return [head] + _indented(text)


def titled(head: str, summary: str) -> list[str]:
    """The call and its summary (broken); a call wider than the page is broken before the terms of its
    argument's outermost sum (`+ log(pi[1])*sg(-b)*sg(pi[1])`), each further line indented under it."""
    if len(head) <= WIDTH:
        return broken(head, summary)
    indent = " " * (head.index("(") + 1) if "(" in head else ""
    return terms_broken(head, WIDTH, indent, depth=1, entries=True) + _indented(summary)


def _indented(text: str) -> list[str]:
    """Words under a head, indented, wrapped to the page."""
    return textwrap.wrap(text, WIDTH, initial_indent="   ", subsequent_indent="   ", break_long_words=False)


def step_lines(lead: str, lhs: str, result: str, label: str, column: int) -> list[str]:
    """A step of the rule table: `lead lhs = result` with its rule label from `column` when it fits the
    page; else the left side with its label, then `= result` below it, broken between its terms (a product
    rule's three terms ran 163 columns)."""
    head = f"{lead}{lhs} = {result}"
    if max(column, len(head)) + 2 + len(label) <= WIDTH:
        return [f"{head.ljust(column)}  {label}"]
    first = f"{lead}{lhs}"
    first = f"{first.ljust(column)}  {label}" if max(column, len(first)) + 2 + len(label) <= WIDTH else first
    pad = " " * len(lead)
    return [first] + terms_broken(f"{pad}= {result}", WIDTH, pad + "  ", depth=0)


def simplified_lines(text: str) -> list[str]:
    """`   = simpler   [simplified]`, broken between its terms when wider than the page."""
    line = f"   = {text}   [simplified]"
    if len(line) <= WIDTH:
        return [line]
    pieces = terms_broken(f"   = {text}", WIDTH, "     ", depth=0)
    return pieces[:-1] + [pieces[-1] + "   [simplified]" if len(pieces[-1]) + 15 <= WIDTH else pieces[-1]]


def terms_broken(text: str, width: int, indent: str, depth: int, entries: bool = False) -> list[str]:
    """Lines of at most `width` where the text breaks before a ` + ` or ` - ` at the bracket depth given
    (with entries, after the comma between a list's entries one deeper: an unfolded softmax's three);
    each further line starts with `indent`."""
    level, breaks = 0, []
    for i, char in enumerate(text):
        level += (char in "([") - (char in ")]")
        if level == depth and text[i:i + 3] in (" + ", " - "):
            breaks.append(i)
        elif entries and level == depth + 1 and text[i:i + 2] == ", ":
            breaks.append(i + 1)
    lines, start = [], 0
    while breaks:
        room = width - (len(indent) if lines else 0)
        if len(text) - start <= room:
            break
        fitting = [b for b in breaks if b - start <= room]
        cut = fitting[-1] if fitting else breaks[0]
        lines.append((indent if lines else "") + text[start:cut])
        start, breaks = cut + 1, [b for b in breaks if b > cut]
    return lines + [(indent if lines else "") + text[start:]]
