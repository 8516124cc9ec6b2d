"""A stop written in a case that a where with a fixed condition does not take (issue 39, PPO's GAE).

rlax writes `select(stop_target_gradients, stop_gradient(x), x)`; with the flag False the value never reaches
the stop, though the user's source has it. The JAX importer writes such a select as `where(0 > 1, t8, …)`,
and the ledger lists the stop with its reason (docs/decisions.md), one entry per stop written, as #39 asks.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain
from tests.conftest import as_floats

POINT = "at x = [0.5, -1.0, 2.0]"


def _run(program: str):
    results = [r for r in Session().run(program) if r is not None]
    return results, to_plain(results[-1])


@pytest.mark.parametrize("size", ["3", "n"])
@pytest.mark.parametrize("choice", ["where(0 > 1, a, x)", "where(1 > 0, x, a)"])
def test_a_stop_the_where_does_not_take_is_listed_as_never_reached(size, choice):
    sizes = "n: size\n" if size == "n" else ""
    results, text = _run(f"{sizes}x: R^{size}\na = sg(x^2)\nb = {choice}\nL = sum(b^2) + sum(x * sg(x))\n"
                         "explain grad(L, x)")
    explained = results[-1].steps[-1]
    assert [e.verdict for e in explained.ledger] == ["irrelevant", "blocking"], text
    assert "# stop a: never reached: the where takes the other case" in text, text
    assert "#    irrelevant: the value does not depend on it, so it has no effect" in text, text
    assert "two stops: one irrelevant, one blocking" in text, text
    assert "✓ equals grad" in text, text
    assert to_json(results[-1])["steps"][-1]["stops"][0]["verdict"] == "irrelevant"
    assert "never reached" in to_latex(results[-1])


def test_the_value_is_the_taken_case():
    """grad(sum(b^2) + sum(x*sg(x)), x) is 2x + sg(x) = 3x at every point: the untaken stop changes nothing."""
    results, _ = _run(f"x: R^3\na = sg(x^2)\nb = where(0 > 1, a, x)\ngrad(sum(b^2) + sum(x * sg(x)), x) {POINT}")
    assert np.allclose(as_floats(results[-1].value), 3 * np.array([0.5, -1.0, 2.0]), rtol=0, atol=1e-12)


def test_a_stop_also_reached_elsewhere_keeps_its_own_verdict():
    """The same stop read outside the where too is reached: its entry is the ordinary one."""
    _, text = _run("x: R^3\na = sg(x^2)\nb = where(0 > 1, a, x)\nexplain grad(sum(b * a), x)")
    assert "never reached" not in text, text
    assert text.count("# stop a") == 1, text


def test_a_condition_that_varies_leaves_no_case_untaken():
    _, text = _run("x: R^3\na = sg(x^2)\nb = where(x > 0, a, x)\nexplain grad(sum(b), x)")
    assert "never reached" not in text, text
    assert "# stop a = sg(x^2)" in text, text
