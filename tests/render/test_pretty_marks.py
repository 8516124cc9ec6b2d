"""No private-use character reaches a screen.

render/pretty.py colours a stop inside SymPy's two-dimensional layout by
drawing its characters shifted into Unicode's private planes and shifting
them back when the line is styled. A line that skips the shift back shows
boxes and tofu where `sg(max(x))` should be (it happened to the `let` lines of
vector derivations); this runs every example and the vector derivations
through the pretty format and looks for any such character.
"""

import io
from pathlib import Path

import pytest

from gradlang import Session
from gradlang.render.emit import Emitter

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.grad"))

VECTOR_DERIVATIONS = [
    "x: R^3\nexplain grad(log(softmax(x - sg(max(x)))[0]), x)",
    "x: R^3\nexplain grad(logsumexp(x), x)",
    "x: R^3\nexplain jacobian(softmax(x), x)",
    "z: R\ny: R\nexplain diff(-(y*log(sigmoid(z)) + (1 - y)*log(1 - sigmoid(z))), z)",
]


def _pretty(source: str) -> str:
    out = io.StringIO()
    emitter = Emitter("pretty", out, io.StringIO(), transcript=True)
    for result in Session().iter_run(source, "<test>"):
        emitter.result(result)
    return out.getvalue()


def _marked(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(ord(c) >= 0xF0000 for c in line)]


@pytest.mark.parametrize("source", VECTOR_DERIVATIONS)
def test_vector_derivations_in_pretty_show_no_private_marks(source):
    text = _pretty(source)
    assert "sg(" in text or "stop" in text or "σ" in text or "softmax" in text  # the derivation was written
    assert _marked(text) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_in_pretty_shows_no_private_marks(path):
    assert _marked(_pretty(path.read_text())) == []
