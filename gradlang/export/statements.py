"""Where each binding of a program is written, so its exported function can quote it and errors can point at it.

The session keeps a binding's value, not its statement; export reads the
program's text again (through the grammar, never evaluated) and takes the
last assignment to each name, which is the one whose value the session holds.
"""

from __future__ import annotations

from gradlang.errors import GradlangError, Span
from gradlang.syntax.parse import parse


def binding_statements(source: str | None) -> dict:
    """name -> (the statement's text, its span, its value's span), for every `name = …` of the program."""
    if not source:
        return {}
    try:
        tree = parse(source)
    except GradlangError:  # a program that does not parse ran nothing: there is nothing to quote
        return {}
    found = {}
    for statement in tree.children:
        if getattr(statement, "data", None) == "assignment":
            meta = statement.meta
            text = source[meta.start_pos : meta.end_pos]
            found[str(statement.children[0])] = (text, Span.of(meta), Span.of(statement.children[1].meta))
    return found
