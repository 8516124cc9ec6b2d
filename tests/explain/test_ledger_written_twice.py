"""Every stop the user wrote gets its own ledger entry, a stop written twice too (issue #40).

Batch norm with a stopped running mean writes sg(mean(X, axis=0)) twice, once bound to mu: one formula
node, three stops written. The second writing's entry, sg(…) of its value, says it is the same stop as the
first's (by its name, else by where it is written), and the closing identity counts the node once.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich
from tests.explain.test_ledger_removed_terms import _lines, _printed_term, _read_back

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(20261129)
BATCH_NORM = """{sizes}X: R^({m},{n}); g: R^{n}
mu = sg(mean(X, axis=0))
running = 0.9*sg(mean(X, axis=0))
var = sg(mean((X - mu)^2, axis=0))
L = sum(g*(X - mu)/sqrt(var + 0.00001)) + sum(g*running*mean(X, axis=0))
explain grad(L, {by})"""


def _batch_norm_loss(stop, X, g):
    mu = stop(jnp.mean(X, axis=0))
    running = 0.9 * stop(jnp.mean(X, axis=0))
    var = stop(jnp.mean((X - mu) ** 2, axis=0))
    return jnp.sum(g * (X - mu) / jnp.sqrt(var + 0.00001)) + jnp.sum(g * running * jnp.mean(X, axis=0))


def _rich_text(result) -> str:
    import io

    from rich.console import Console

    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(result))
    return console.export_text()


def _explained(source: str):
    return [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _source(size: str, by: str) -> str:
    sizes = "m, n: size\n" if size == "n" else ""
    m, n = ("m", "n") if size == "n" else ("4", "3")
    return BATCH_NORM.format(sizes=sizes, m=m, n=n, by=by)


@pytest.mark.parametrize("by", ["X", "g"])
@pytest.mark.parametrize("size", ["3", "n"])
def test_each_of_batch_norms_three_stops_has_an_entry_in_every_format(size, by):
    source = _source(size, by)
    result = _explained(source)
    text = to_plain(result)
    written = source.count("sg(")
    assert written == 3 and len(result.steps[-1].ledger) == written, text
    assert sum(line.startswith("# stop ") for line in text.splitlines()) == written, text
    same = [line for line in text.splitlines() if line.startswith("# stop sg(") and "the same stop as" in line]
    first = "neutral" if by == "X" else "irrelevant"  # mu's stop removes a term from X's gradient, none from g's
    said = f": the same stop as mu; {first}: counted at that entry, once"  # one line: which stop, its verdict
    assert len(same) == 1 and same[0].endswith(said), text
    assert len(to_json(result)["steps"][-1]["ledger"]) == written + 1  # each entry, then the identity
    stops = to_json(result)["steps"][-1]["stops"]
    assert len(stops) == written and [s.get("same_as") for s in stops].count("mu") == 1
    assert "what it removes is counted there, once" in stops[[s.get("same_as") for s in stops].index("mu")]["words"]
    assert to_latex(result).count("the same stop as") == 1
    assert "the same stop as" in _rich_text(result)
    assert "r₂" not in text and "✓ equals grad" in text, text  # the one node's term counted once


def test_batch_norms_true_gradient_is_kept_plus_removed_by_jax():
    """grad(unstopped(L), X) = k + r₁: k what grad gives, r₁ read back from the ledger, against JAX."""
    source = _source("3", "X")
    lines = [line.replace("δ", "delta") for line in _lines(_explained(source))]  # a name gradlang reads
    assert "true = kept + removed: grad(unstopped(L), X) = k + r₁ (k = grad(L, X))" in lines
    removed = _printed_term(lines, "   blocking: removes r₁ = ")
    point = {"X": RNG.uniform(-1, 1, (4, 3)), "g": RNG.uniform(-1, 1, 3)}
    at = ", ".join(f"{name} = {value.tolist()}" for name, value in point.items())
    program = source.replace("explain grad(L, X)", f"grad(L, X) at {at}")
    kept = np.asarray(Session().run(program)[-1].value, dtype=float)
    total = kept + _read_back(source, lines, removed, point)
    arrays = {k: jnp.asarray(v) for k, v in point.items()}
    true = jax.grad(lambda X: _batch_norm_loss(lambda v: v, X, arrays["g"]))(arrays["X"])
    assert np.allclose(total, np.asarray(true), rtol=0, atol=1e-9)
    stopped = jax.grad(lambda X: _batch_norm_loss(jax.lax.stop_gradient, X, arrays["g"]))(arrays["X"])
    assert np.allclose(kept, np.asarray(stopped), rtol=0, atol=1e-9)


@pytest.mark.parametrize("size", ["", "^3", "^n"])
def test_a_stop_written_twice_unnamed_has_two_entries_the_second_pointing_at_the_first(size):
    sizes = "n: size\n" if size == "^n" else ""
    loss = "sg(x^2)*x + sg(x^2)*x^2" if not size else "sum(sg(x^2)*x + sg(x^2)*x^2)"
    request = "diff" if not size else "grad"
    source = f"{sizes}x: R{size}\nexplain {request}({loss}, x)"
    result = _explained(source)
    text = to_plain(result)
    column = source.splitlines()[-1].index("sg(") + 1
    assert len(result.steps[-1].ledger) == 2, text
    line = source.count("\n") + 1
    said = f": the same stop as the one at line {line}, column {column}; neutral: counted at that entry, once"
    assert any(line.startswith("# stop sg(") and line.endswith(said) for line in text.splitlines()), text
    assert "#    neutral:" not in text, text  # the entry is its one line
    assert "r₂" not in text and "r₁" in text and "✓ equals" in text, text
    assert [s["verdict"] for s in to_json(result)["steps"][-1]["stops"]] == ["blocking", "neutral"]


def test_a_stop_of_a_constant_written_twice_has_two_entries():
    text = to_plain(_explained("x: R^3; b: R^3\nexplain grad(sum(sg(b)*x) + sum(sg(b)*x^2), x)"))
    assert sum(line.startswith("# stop sg(b)") for line in text.splitlines()) == 2, text
