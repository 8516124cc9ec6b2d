"""Stops bound to names of their own that give one formula node (issue 39, rlax's A2C).

rlax's A2C computes log_softmax twice and softmax once of the same logits, each with JAX's stopped maximum
inside: the importer writes three lines `t17 = stop_gradient(max(t16, axis=1))`, `t24 = …(t23 …)`,
`t27 = …(t26 …)` whose values are one node. The ledger has one entry per stop written (5 for A2C, as #39
asks): the first with its verdict and removed term, each other one saying it is the same stop, and the closing
identity counts the node once.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain
from tests.conftest import as_floats

POINT = [0.5, -1.0, 2.0]


def _last(program: str):
    results = [r for r in Session().run(program) if r is not None]
    return results[-1], to_plain(results[-1])


@pytest.mark.parametrize("size", ["3", "n"])
def test_each_named_stop_has_an_entry_and_the_node_is_counted_once(size):
    sizes = "n: size\n" if size == "n" else ""
    result, text = _last(f"{sizes}x: R^{size}\na = sg(x^2)\nb = sg(x^2)\nc = sg(x)\n"
                         "explain grad(sum(a*x) + sum(b*x^2) + sum(c), x)")
    ledger = result.steps[-1].ledger
    assert len(ledger) == 3, text
    assert "# stop a: the same stop as b; neutral: counted at that entry, once" in text, text
    assert "= g + r₁ + r₂ (g = grad(L, x))" in text and "r₃" not in text, text  # the node's term once
    assert "three stops: two blocking, one neutral" in text, text
    assert "✓ equals grad" in text, text
    stops = to_json(result)["steps"][-1]["stops"]
    assert [s["verdict"] for s in stops] == ["blocking", "neutral", "blocking"] and stops[1]["removed"] == "0"
    assert "the same stop as" in to_latex(result)


def test_the_gradient_is_the_one_nodes():
    """grad(sum(a*x) + sum(b*x^2), x) with a = b = sg(x^2) is x^2 + 2x^3."""
    result, _ = _last(f"x: R^3\na = sg(x^2)\nb = sg(x^2)\ngrad(sum(a*x) + sum(b*x^2), x) at x = {POINT}")
    x = np.array(POINT)
    assert np.allclose(as_floats(result.value), x**2 + 2 * x**3, rtol=0, atol=1e-12)


def test_a_stop_written_twice_unnamed_has_an_entry_each():
    """Every stop the user wrote gets one entry (LANGUAGE.md); the second points at where the first is written."""
    result, text = _last("x: R^3\nexplain grad(sum(sg(x^2)*x) + sum(sg(x^2)*x^2), x)")
    assert len(result.steps[-1].ledger) == 2, text
    assert "# stop sg(u): the same stop as the one at line 2, column 18" in text, text  # u = x^2, as the first
