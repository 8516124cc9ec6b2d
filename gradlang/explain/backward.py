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

    def to_plain(self) -> str:
        return f"{self.call}: the reverse-mode computation\n{dag_render.to_plain(self.tape)}"

    def to_latex(self) -> str:
        return dag_render.to_latex(self.tape)

    def to_rich(self):
        return dag_render.to_rich(self.tape)

    def to_json(self) -> dict:
        return {"rule": "backward", "call": self.call, **dag_render.to_json(self.tape)}


def backward_view(request) -> BackwardView:
    """The view of a recorded backward(e, x) request."""
    from gradlang.render.plain import to_plain

    wrt = [request.wrt] if is_scalar(request.wrt) else elements(request.wrt)
    call = f"backward({to_plain(request.expr)}, {to_plain(request.wrt)})"
    return BackwardView(call, tape(request.expr, wrt))
