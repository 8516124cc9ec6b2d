"""Golden derivations in all four formats (rich captured at width 100, no colour).

To refresh after an intended change: run this file with EXPLAIN_REGOLD=1 and
read the diff before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from gradlang.explain import explain
from gradlang.render import to_json, to_latex, to_plain, to_rich
from gradlang.expr.stopgrad import StopGradient

from explain_helpers import X, diff_request, grad_request, log_stable_softmax_0

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "x2_sg_x": lambda: explain(diff_request(X**2 * StopGradient(X))),
    "log_softmax": lambda: explain(grad_request(log_stable_softmax_0())),
    "backward_softmax": lambda: _backward(STABLE + "explain backward(log(stable_softmax(x)[0]), x)"),
    "backward_vq_vae": lambda: _backward("W: R^(3,2)\nx: R^2\nz_e = W @ x\ne: R^3\nbeta = 1/4\n"
                                         "explain backward(sum((z_e - sg(e))^2) + beta * sum((sg(z_e) - e)^2), W)"),
}


STABLE = "x: R^3\nstable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"


def _backward(program: str):
    """The vector-level tape of explain/backward/fold.py of an explain backward statement."""
    from explain_helpers import tape_view

    return tape_view(program)


def _rich_text(explanation) -> str:
    console = Console(width=100, color_system=None, record=True, file=open(os.devnull, "w"))
    console.print(to_rich(explanation))
    return console.export_text()


RENDERINGS = {
    "txt": lambda e: to_plain(e) + "\n",
    "tex": lambda e: to_latex(e) + "\n",
    "rich.txt": _rich_text,
    "json": lambda e: json.dumps(to_json(e), indent=1, ensure_ascii=False) + "\n",
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", RENDERINGS)
def test_golden(case, fmt):
    text = RENDERINGS[fmt](CASES[case]())
    path = GOLDEN / f"{case}.{fmt}"
    if os.environ.get("EXPLAIN_REGOLD"):
        path.write_text(text)
    assert text == path.read_text()
