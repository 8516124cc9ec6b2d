"""`explain backward(e, x)`: the reverse-mode computation as TensorFlow and JAX run it.

The value of `backward(e, x)` is `grad(e, x)`. Inside `explain` it shows a
numbered forward table of the intermediate values and a backward table of
their adjoints, with each stop_gradient marked as a cut edge (the tape of
`gradlang.dag.tape`, rendered by `gradlang.dag_render`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.render import tape as dag_render
from gradlang.derive.dag.tape import Tape, tape
from gradlang.expr.values import elements, is_scalar


@dataclass(frozen=True)
class BackwardView:
    """The forward and backward tables of one backward(e, x) call."""

    call: str
    tape: Tape
    cuts: tuple = ()  # (forward row number, cut text, verdict text) for each stop

    def to_plain(self) -> str:
        lines = [f"{self.call}: the reverse-mode computation", dag_render.to_plain(self.tape)]
        if self.cuts:
            lines.append("at the cuts (what reaches each stop, and is dropped there):")
            lines += [f"  {text}\n    {verdict}" for _, text, verdict in self.cuts]
        return "\n".join(lines)

    def to_latex(self) -> str:
        """Each table in its own display (aligned needs math mode), the cuts as text."""
        from gradlang.explain.text import latex_text

        blocks = [b for b in dag_render.to_latex(self.tape).split("\\end{aligned}") if b.strip()]
        shown = [f"\\[\n{b.strip()}\n\\end{{aligned}}\n\\]" for b in blocks]
        cuts = [latex_text(f"{text}: {verdict}") for _, text, verdict in self.cuts]
        return "\n".join(shown + cuts)

    def to_rich(self):
        from rich.console import Group
        from rich.text import Text

        lines = [Text(f"{text}  {verdict}", style="red") for _, text, verdict in self.cuts]
        return Group(dag_render.to_rich(self.tape), *lines)

    def to_json(self) -> dict:
        cuts = [{"row": row, "cut": text, "verdict": verdict} for row, text, verdict in self.cuts]
        return {"rule": "backward", "call": self.call, **dag_render.to_json(self.tape), "cuts": cuts}


def _cuts(request, tape_) -> tuple:
    """For each stop: its forward row, the adjoint that arrives there (v̄ of the cut) and the verdict."""
    from gradlang.explain.ledger import adjoint_value, ledger
    from gradlang.explain.stops import brief, verdict
    from gradlang.render.plain import to_plain

    rows = {r.expr: r.index for r in tape_.forward}
    cuts = []
    for entry in ledger(request):
        row = rows.get(entry.stop)
        if row is None:
            continue
        arriving = "no adjoint (nothing reaches it)" if entry.verdict == "irrelevant" else brief(adjoint_value(entry), to_plain)
        text = f"v{row} = {to_plain(entry.stop)}; adjoint arriving (v̄{row}): {arriving}"
        cuts.append((row, text, verdict(entry, request, to_plain)))
    return tuple(cuts)


def backward_view(request) -> BackwardView:
    """The view of a recorded backward(e, x) request."""
    from gradlang.render.plain import to_plain

    wrt = [request.wrt] if is_scalar(request.wrt) else elements(request.wrt)
    call = f"backward({to_plain(request.expr)}, {to_plain(request.wrt)})"
    recorded = tape(request.expr, wrt)
    return BackwardView(call, recorded, _cuts(request, recorded))
