"""`explain backward(e, x)`: the reverse-mode computation as TensorFlow and JAX run it.

The value of `backward(e, x)` is `grad(e, x)`. Inside `explain` it shows a
numbered forward table of the intermediate values and a backward table of
their adjoints, with each stop_gradient marked as a cut edge (the tape of
`gradlang.derive.dag.tape`). The backward table also carries the adjoints
that flow *into* each cut (issue 14: "the backward table leaves out exactly
the adjoint that reaches the stop"): they come from a second tape that
treats the stops as inputs, so its rows for the path into a stop are the
ones the real backward pass computes and then drops. At each cut the view
records what arrives there, simplified (bounded by size, never by seconds,
as the ledger's terms are), the vector identity's statement of it when the
gradient has one (−1 + Σₖ sₖ = 0 for the stable softmax), what the stop would
have sent on to the gradient, and the ledger's verdict. The view is data;
gradlang.render prints it (render/tape.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.derive.dag.tape import Tape, tape, value_symbol
from gradlang.expr.values import elements, is_scalar


@dataclass(frozen=True)
class Cut:
    """One stop as the backward pass meets it: what arrives there, and what it would have sent on.

    row is the stop's forward row (v_row = stop_gradient(v_argument)); local
    is what arrives, written with the table's adjoints (−v̄6), None when no
    variable reaches the stopped value (reverse mode then computes nothing
    there); adjoint is its value, simplified; form, when the gradient has a
    vector derivation, is the identity's statement of it (formula parts:
    −1ᵀ(e₀ − s) = −1 + Σₖ sₖ) and lets the names that statement uses; adds
    pairs each variable with the non-zero term the stop would have added to
    its gradient component (the ledger's removed terms), and removes the
    identity's statement of them (9*δ/10·∇max(…)) when it gives one; verdict
    is the ledger's word and words its sentence.
    """

    row: int
    argument: int | None
    stop: sp.Expr
    local: object
    adjoint: object
    verdict: str
    words: object   # a note.Note
    form: tuple = ()
    lets: tuple = ()
    adds: tuple = ()
    removes: tuple = ()
    component: int | None = None
    argument_component: int | None = None
    computes: object = None


@dataclass(frozen=True)
class BackwardView:
    """The forward and backward tables of one backward(e, x) call, and what reaches each cut.

    toward holds the backward rows of the paths into the cuts (BackwardRow
    records of the same numbering), which the table shows beside its own;
    names maps a long stop to its row's value symbol (v5), for display;
    definitions are the user functions and (explain[unfold]) builtins unfolded into expr;
    simplified[i] is a shorter equal form of the i-th gradient component (bounded by
    size, explanation.simpler), or None. The tape is the folded, vector-level one
    (explain/backward/fold.py); members maps its symbols to the scalar tape's (for
    tape_notation.component) and scalar is the same view on the scalar tape.
    """

    expr: object
    wrt: object
    tape: Tape
    cuts: tuple = ()
    toward: tuple = ()
    names: tuple = ()
    definitions: tuple = ()
    simplified: tuple = ()
    members: dict | None = None
    scalar: BackwardView | None = None


def _variables(wrt) -> list:
    return [wrt] if is_scalar(wrt) else elements(wrt)


def _vector_forms(request) -> tuple[dict, tuple, dict]:
    """What a vector derivation of grad(e, x) states: the adjoint at each stop, its names, what each stop removes."""
    from gradlang.explain.vector.derivation import vector_derivation

    if is_scalar(request.wrt):
        return {}, (), {}
    vector = vector_derivation(replace(request, operation="grad"))
    if vector is None:
        return {}, (), {}
    return dict(vector.adjoints), vector.lets, dict(vector.removes)


def _cut(entry, request, rows: dict, toward: dict, forms: tuple) -> Cut:
    """The Cut record of one ledger entry."""
    from gradlang.explain.ledger.components import adjoint_value
    from gradlang.explain.ledger.words import adjoint_is_zero, verdict

    row = rows[entry.stop]
    argument = rows.get(entry.stop.args[0])
    removes = forms[2].get(entry.stop, ())
    words = verdict(entry, request, removes)
    if entry.verdict == "irrelevant":
        return Cut(row, argument, entry.stop, None, None, entry.verdict, words)
    arriving = toward.get(row)
    adjoint = adjoint_value(entry)
    if entry.verdict == "neutral" and adjoint_is_zero(entry):  # zero once simplified (Σₖ sₖ − 1): say 0, add nothing
        adjoint = adjoint.applyfunc(lambda _: sp.S.Zero) if hasattr(adjoint, "applyfunc") else sp.S.Zero
    adds = () if entry.verdict == "neutral" else \
        tuple((v, term) for v, term in zip(_variables(request.wrt), entry.removed[0]) if term != 0)
    form, lets = forms[0].get(entry.stop, ()), forms[1]
    return Cut(row, argument, entry.stop, arriving.local if arriving else sp.S.Zero, adjoint,
               entry.verdict, words, form, lets if form else (), adds, removes)


def backward_view(request, unfold: bool = False) -> BackwardView:
    """The view of a recorded backward(e, x) request, with the adjoint arriving at each cut.

    With unfold, the tape is that of the builtins' definitions (explain/scalar/unfold.py).
    """
    from gradlang.explain.explanation import simpler
    from gradlang.explain.ledger.components import ledger
    from gradlang.explain.scalar.unfold import unfolded_request

    request = unfolded_request(request) if unfold else request
    wrt = _variables(request.wrt)
    recorded = tape(request.expr, wrt)
    rows = {r.expr: r.index for r in recorded.forward}
    entries = [e for e in ledger(request) if e.stop in rows]
    reached = [e.stop for e in entries if e.verdict != "irrelevant"]
    toward: dict = {}
    if reached:
        shown = {r.index for r in recorded.backward}
        toward = {r.index: r for r in tape(request.expr, wrt + reached).backward if r.index not in shown}
    forms = _vector_forms(request) if reached else ({}, (), {})
    cuts = tuple(_cut(e, request, rows, toward, forms) for e in entries)
    names = tuple((e.stop, value_symbol(rows[e.stop])) for e in entries if not e.stop.args[0].is_Atom)
    definitions = tuple(" ".join(text.split()) for text in getattr(request, "definitions", ()))
    simplified = tuple(simpler(g) for g in recorded.gradient)
    view = BackwardView(request.expr, request.wrt, recorded, cuts, tuple(toward.values()), names, definitions, simplified)
    return folded(view, wrt)


def folded(view: BackwardView, variables) -> BackwardView:
    """The view on the vector-level tape (explain/backward/fold.py): rows, adjoints, cuts and names renumbered."""
    from gradlang.explain.backward.fold import folded_tape

    fold = folded_tape(view.tape.forward, variables)
    reaching = {r.index for r in view.toward}
    adjoints = fold.adjoints(view.tape.backward + view.toward)
    backward = tuple(a for a in adjoints if not set(a.members) & reaching)
    toward = tuple(a for a in adjoints if set(a.members) & reaching)
    refs = tuple((s, fold.ref(n)) for s, n in view.tape.variables)
    output = fold.ref(view.tape.output)
    tape = Tape(fold.forward, backward, output and output.index, refs, view.tape.gradient)
    scalar_rows = {r.index: r for r in view.tape.forward}
    cuts = tuple(_folded_cut(cut, fold, scalar_rows) for cut in view.cuts)
    names = tuple((stop, fold.translated(symbol)) for stop, symbol in view.names)
    return replace(view, tape=tape, cuts=cuts, toward=toward, names=names, members=fold.members(), scalar=view)


def _folded_cut(cut: Cut, fold, scalar_rows: dict) -> Cut:
    row, argument = fold.ref(cut.row), fold.ref(cut.argument)
    return replace(cut, row=row.index, component=row.component, argument=argument and argument.index,
                   argument_component=argument and argument.component, local=fold.translated(cut.local),
                   computes=fold.translated(scalar_rows[cut.row].local))
