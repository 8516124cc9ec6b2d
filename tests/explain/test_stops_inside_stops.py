"""Stops inside stops and the let block of a pass (issue 39: DreamerV3's actor-critic, BYOL).

DreamerV3's sg(adv) holds the whole lambda return, with four stops of its own inside (softmax's stopped max,
the percentile statistics); BYOL stops the target network's projections. Each stop written gets its ledger
entry, one inside another saying so (it cuts nothing the outer one does not); the let block names a stop, not
what it stops, unless a printed line reads it; a stop bound twice that the loss does not read is "the same
stop" (the importer writes JAX's softmax of the critic's unused probabilities).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang import Session
from gradlang.render import to_json, to_plain
from tests.conftest import as_floats


def _last(program: str):
    results = [r for r in Session().run(program) if r is not None]
    return results[-1], to_plain(results[-1])


def _lets(text: str) -> list:
    """The names the let block introduces."""
    lets, inside = [], False
    for line in text.splitlines():
        inside = line.startswith("# let  ") or inside and line.startswith("#      ")
        found = re.match(r"^# (?:let )?\s+(\S+) = ", line) if inside else None
        if found:
            lets.append(found.group(1))
    return lets


@pytest.mark.parametrize("size", ["3", "n"])
def test_a_stop_inside_a_stop_has_its_own_entry(size):
    sizes = "n: size\n" if size == "n" else ""
    result, text = _last(f"{sizes}x: R^{size}\nm = sg(max(x))\na = sg(exp(x - m))\nL = sum(a * x)\n"
                         "explain grad(L, x)")
    assert len(re.findall(r"^# stop ", text, re.M)) == 2, text
    assert ("# stop m: inside the stop a; irrelevant: no adjoint flows inside a stop\n# stop a = sg(") in text, text
    assert "two stops: one irrelevant, one blocking" in text, text
    assert "✓ equals grad" in text, text
    stops = to_json(result)["steps"][-1]["stops"]
    assert [s["verdict"] for s in stops] == ["irrelevant", "blocking"]
    if size == "3":  # the value is what grad gives: a, the stopped softmax's numerator
        point = np.array([0.5, -1.0, 2.0])
        at = Session().run("x: R^3\nm = sg(max(x))\na = sg(exp(x - m))\nL = sum(a * x)\n"
                           "grad(L, x) at x = [0.5, -1.0, 2.0]")[-1]
        assert np.allclose(as_floats(at.value), np.exp(point - point.max()), atol=1e-12)


def test_a_stop_inside_a_stop_no_variable_reaches_is_irrelevant():
    _, text = _last("x: R^3\ny: R^3\nm = sg(max(y))\na = sg(exp(y - m))\nexplain grad(sum(a * x), x)")
    assert "# stop m: inside the stop a; irrelevant: no adjoint flows inside a stop" in text, text
    assert len(re.findall(r"^# stop ", text, re.M)) == 2, text


def test_the_let_block_names_a_stop_not_what_it_stops():
    """h is read only inside the stop t: the block introduces t, and h stays the program's; when a ledger
    line reads h (the term a blocking stop removes), h gets its let too."""
    _, irrelevant = _last("x: R^3\nW: R^(3,3)\ny: R^3\nh = tanh(3*y)\nt = sg(2*h)\nL = sum(t * (W @ x))\n"
                          "explain grad(L, W)")
    assert _lets(irrelevant) == ["t"], irrelevant
    assert "✓ equals grad" in irrelevant, irrelevant
    _, blocking = _last("x: R^3\nW: R^(3,3)\nh = tanh(W @ x)\nt = sg(2*h)\nL = sum(t * (W @ x))\n"
                        "explain grad(L, W)")
    assert _lets(blocking) == ["h", "t"] and "removes r₁ = 2*outer((1 - h^2)*(W @ x), x)" in blocking, blocking


def test_a_value_of_stops_and_data_is_a_constant_to_the_pass():
    """q reads only the stop s and data: it is named where a line reads it, and what it reads is left to the
    program (as a stop's insides are)."""
    _, text = _last("x: R^3\nW: R^(3,3)\ny: R^3\nh = tanh(3*y)\ns = sg(h)\nq = s + exp(h)\nL = sum(q * (W @ x))\n"
                    "explain grad(L, W)")
    assert _lets(text) == ["q"], text
    assert "✓ equals grad" in text, text


def test_a_stop_bound_twice_that_the_loss_does_not_read_has_its_entry():
    result, text = _last("x: R^3\nc = sg(max(x))\nd = sg(max(x))\nL = sum(exp(x - d))\nexplain grad(L, x)")
    assert len(re.findall(r"^# stop ", text, re.M)) == 2, text
    assert "# stop c: the same stop as d; neutral: counted at that entry, once" in text, text
    assert "= g + r₁ (g = grad(L, x))" in text and "r₂" not in text, text  # the node's term once
    assert "✓ equals grad" in text, text
