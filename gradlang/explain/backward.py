"""`explain backward(e, x)`: the reverse-mode computation as TensorFlow and JAX run it.

The value of `backward(e, x)` is `grad(e, x)`. Inside `explain` it shows a
numbered forward table of the intermediate values and a backward table of
their adjoints, with each stop_gradient marked as a cut edge (the tape of
`gradlang.derive.dag.tape`), and at each cut what arrives there and is dropped.
The view is data; gradlang.render prints it (render/tape.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.derive.dag.tape import Tape, tape
from gradlang.expr.source import to_source
from gradlang.expr.values import elements, is_scalar


@dataclass(frozen=True)
class BackwardView:
    """The forward and backward tables of one backward(e, x) call."""

    expr: object
    wrt: object
    tape: Tape
    cuts: tuple = ()  # (forward row number, cut text, verdict text) for each stop


def _cuts(request, tape_) -> tuple:
    """For each stop: its forward row, the adjoint that arrives there (v̄ of the cut) and the verdict."""
    from gradlang.explain.ledger import adjoint_value, ledger
    from gradlang.explain.stops import brief, verdict

    rows = {r.expr: r.index for r in tape_.forward}
    cuts = []
    for entry in ledger(request):
        row = rows.get(entry.stop)
        if row is None:
            continue
        arriving = "no adjoint (nothing reaches it)" if entry.verdict == "irrelevant" else brief(adjoint_value(entry), to_source)
        text = f"v{row} = {to_source(entry.stop)}; adjoint arriving (v̄{row}): {arriving}"
        cuts.append((row, text, verdict(entry, request, to_source)))
    return tuple(cuts)


def backward_view(request) -> BackwardView:
    """The view of a recorded backward(e, x) request."""
    wrt = [request.wrt] if is_scalar(request.wrt) else elements(request.wrt)
    recorded = tape(request.expr, wrt)
    return BackwardView(request.expr, request.wrt, recorded, _cuts(request, recorded))
