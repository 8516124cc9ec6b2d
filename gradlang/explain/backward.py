"""`explain backward(e, x)`: the reverse-mode computation as TensorFlow and JAX run it.

The value of `backward(e, x)` is `grad(e, x)`. Inside `explain` it shows a
numbered forward table of the intermediate values and a backward table of
their adjoints, with each stop_gradient marked as a cut edge (the tape of
`gradlang.dag.tape`). The view is data; gradlang.render prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.derive.dag.tape import Tape, tape
from gradlang.expr.values import elements, is_scalar


@dataclass(frozen=True)
class BackwardView:
    """The forward and backward tables of one backward(e, x) call."""

    expr: object
    wrt: object
    tape: Tape


def backward_view(request) -> BackwardView:
    """The view of a recorded backward(e, x) request."""
    wrt = [request.wrt] if is_scalar(request.wrt) else elements(request.wrt)
    return BackwardView(request.expr, request.wrt, tape(request.expr, wrt))
