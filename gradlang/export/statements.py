"""Where each binding of a program is written, so its exported function can quote it and errors can point at it.

The session keeps a binding's value, not its statement; export reads the
program's text again (through the grammar, never evaluated) and takes the
last assignment to each name, which is the one whose value the session holds.
"""

from __future__ import annotations

from gradlang.errors import GradlangError
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import read


def binding_statements(source: str | None) -> dict:
    """name -> (the statement's text, its span, its value's span), for every `name = …` of the program."""
    if not source:
        return {}
    try:
        program = read(source)
    except GradlangError:  # a program that does not parse ran nothing: there is nothing to quote
        return {}
    found = {}
    for statement in program.statements:
        if isinstance(statement, lo.Assignment):
            found[statement.target.name] = (statement.text(source), statement.span, statement.value.span)
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
            program = read(source)
        except GradlangError:
            return
        self.known = True
        for index, statement in enumerate(program.statements):
            if isinstance(statement, (lo.Assignment, lo.Declaration, lo.Definition)):
                for name in _names_bound(statement):
                    self.last[name] = index
                    if isinstance(statement, lo.Assignment):
                        self.trees[name] = (index, statement.value)
                    else:
                        self.trees.pop(name, None)


def _names_bound(statement) -> list:
    """The names a statement binds: one, or several for a declaration `x, y: R^n`."""
    if isinstance(statement, lo.Declaration):
        return [name.name for name in statement.names]
    return [statement.target.name]
