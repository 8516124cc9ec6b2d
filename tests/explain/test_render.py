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
}


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
