"""Where each binding of a program is written, so its exported function can quote it and errors can point at it.

The session keeps a binding's value, not its statement; export reads the
program's text again (through the grammar, never evaluated) and takes the
last assignment to each name, which is the one whose value the session holds.
"""

from __future__ import annotations

from lark import Token

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


class Program:
    """What each name of a program was last bound by, for the vectorised printer (vectorised.py).

    A binding's value was computed when its statement ran; its names meant
    what they were bound to then. The session keeps only the last binding of
    each name, so a name may be read through the session only if it was not
    bound again after the statement that reads it: `last[name]` is the index
    of the last statement binding it (assignment, declaration or definition),
    `trees[name]` the value tree of its last assignment.
    """

    def __init__(self, source: str | None):
        self.last: dict = {}
        self.trees: dict = {}
        self.known = False  # without the program's text nothing can be read again
        if not source:
            return
        try:
            tree = parse(source)
        except GradlangError:
            return
        self.known = True
        for index, statement in enumerate(tree.children):
            if getattr(statement, "data", None) in ("assignment", "declaration", "definition"):
                for name in _names_bound(statement):
                    self.last[name] = index
                name = str(statement.children[0])
                if statement.data == "assignment":
                    self.trees[name] = (index, statement.children[1])
                else:
                    self.trees.pop(name, None)


def _names_bound(statement) -> list:
    """The names a statement binds: one, or several for a declaration `x, y: R^n`."""
    if statement.data == "declaration":
        return [str(token) for token in statement.children if isinstance(token, Token)]
    return [str(statement.children[0])]
