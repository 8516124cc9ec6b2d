"""Derivation records: what the engine computes and every renderer shows.

A `Step` is one application of one rule: d/d`variable` of `expr` is `result`,
obtained from the `substeps`. Records are immutable and complete (trivial
steps included); folding, numbering and depth are decided when rendering
(explain/layout.py), so the printed tree is always the computed tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gradlang.explain.note import Note


@dataclass(frozen=True)
class Step:
    """d(expr)/d(variable) = result by `rule`, from the substeps.

    `outer` names the function whose derivative a chain-rule step applies
    (e.g. "exp"); `blocked` is, for a stop_gradient step, the derivative of
    the stopped argument that the stop discards; `note` is one sentence a
    reader needs to follow the step (explain/note.py: its expressions kept apart); `given` instantiates the rule's letters,
    (("u", x^2), ("v", sg(x))) for (u·v)' = u'·v + u·v'. A rule "definition" (unfolding a user
    function) fits the same record: expr is the call, the one substep
    derives the body.
    """

    rule: str
    expr: object
    variable: object
    result: object
    substeps: tuple = ()
    note: Note = Note()
    outer: str = ""
    blocked: object = None
    given: tuple = ()

    def with_substeps(self, substeps) -> "Step":
        return replace(self, substeps=tuple(substeps))


# Steps a reader does not need on a line of their own: d/dx x = 1, d/dx c = 0.
TRIVIAL_RULES = frozenset({"constant", "variable"})


def is_trivial(step: Step) -> bool:
    """True for a step folded into its parent when rendered."""
    return step.rule in TRIVIAL_RULES


def walk(step: Step):
    """Every step of a derivation, parents before children."""
    yield step
    for sub in step.substeps:
        yield from walk(sub)


@dataclass(frozen=True)
class Derived:
    """A step plus its result in frozen form (placeholders for the stops).

    The engine composes parent results from `raw` results, with the same
    SymPy operations as SymPy's own differentiation, so that the root result
    equals derive.derivative structurally; `step` holds the thawed, readable
    forms.
    """

    step: Step
    raw: object = field(compare=False)
