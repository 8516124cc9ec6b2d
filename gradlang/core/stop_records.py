"""The records of core/written_stops.py: one stop as written, and the cases of a choice.

Their own module, imported at the first `sg`/`stop_gradient` or `where` the evaluator meets, so a program
that writes none does not create their classes at start-up (issue #41).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class WrittenStop:
    """One stop as written: its text, and every value it gave in the statement (a call inside a user
    function gives one per call). node keeps the written call alive, so its id names it."""

    key: int
    text: str
    values: tuple
    node: object = field(default=None, compare=False, repr=False)
    named: str = ""  # the user's name the stop is written on (sg(x_fgsm)), which explain writes it by
    untaken: str = ""  # why the value never reaches it: "the where takes the other case" (a fixed condition)
    bound: str = ""  # the name the stop is bound to, when it is a statement's whole value (t8 = sg(…))


@dataclass
class Choice:
    """The sites met in each argument of a choice, and the case its fixed condition leaves (None: it takes
    either, as the condition varies)."""

    met: list = field(default_factory=list)
    untaken: int | None = None
    why: str = "the where takes the other case"
