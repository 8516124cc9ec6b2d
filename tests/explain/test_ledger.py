"""The ledger of stops: every stop in the gallery gets the right verdict.

Verdicts (docs/explain.md): irrelevant (no variable reaches the stopped
value), neutral (the path exists, nothing is removed), blocking (a non-zero
term is removed), inventing (the surrogate gains a gradient the function
lacks: straight-through). The removed terms of all stops add up to blocked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from gradlang.core import session as session_module
from gradlang.core.explain_views import lowered_request
from gradlang.expr.bounded import tidy
from gradlang.explain.explanation import blocked_part
from gradlang.explain.ledger.components import ledger
from gradlang.render.plain import to_plain
from gradlang.core.session import Session
from gradlang.expr.values import elements

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# (example, statement, {a piece of the stop's text: verdict}) — every stop of every example
GALLERY = [
    ("stable_softmax", "blocked(stable_softmax(x), x)", {"max(x[0], x[1], x[2])": "neutral"}),
    ("stable_softmax", "grad(log(stable_softmax(x)[0]), x)", {"max(x[0], x[1], x[2])": "neutral"}),
    ("stable_softmax", "diff(x[0] * stop_gradient(x[1]), x[1])", {"x[1]": "blocking"}),
    ("straight_through", "blocked(q(x), x)", {"round": "inventing"}),
    ("tour", "blocked(h(t), t)", {"(t)": "blocking"}),
    # z_q = z_e + sg(e - z_e) is straight-through for the encoder, a real stop for the codebook
    ("vq_vae", "grad(L, W)", {"+ e[": "inventing", "stop_gradient(W[": "blocking", "stop_gradient(e[": "irrelevant"}),
    ("vq_vae", "grad(L, e)", {"+ e[": "blocking", "stop_gradient(W[": "irrelevant", "stop_gradient(e[": "blocking"}),
    ("siamese_stop", "grad(L, W)", {"stop_gradient(W[": "blocking"}),
    ("siamese_stop", "blocked(L, P)", {"W": "irrelevant"}),
    ("target_network", "grad(td, W)", {"max(W[0, 1], W[1, 1])": "blocking"}),
    ("em_gaussian_mixture", "grad(Q(mu1, mu2), [mu1, mu2])", {"exp": "blocking"}),
    ("contrastive_divergence", "grad(cd_loss, W)", {"sigmoid": "blocking"}),
    ("reinforce", "grad(surrogate(2), theta)", {"2 - ": "blocking"}),
    ("adversarial_training", "grad(loss(sg(x_fgsm)), w)", {"sign": "neutral"}),
]


def _requests(name: str, statement: str, monkeypatch) -> list:
    """The derivative requests of `explain statement` after running the example (ledger only)."""
    monkeypatch.setattr(session_module, "_explanations", lambda derivations, *settings: ())
    session = Session()
    session.run((EXAMPLES / f"{name}.grad").read_text())
    return [lowered_request(r) for r in session.run(f"explain {statement}")[-1].derivations]  # by components


@pytest.mark.parametrize("name, statement, expected", GALLERY, ids=[f"{g[0]}:{g[1]}" for g in GALLERY])
def test_every_stop_in_the_gallery_gets_its_verdict(name, statement, expected, monkeypatch):
    requests = _requests(name, statement, monkeypatch)
    entries = [e for r in requests for e in ledger(r)]
    assert entries, "the statement has stops"
    for entry in entries:
        text = to_plain(entry.stop)
        matches = [verdict for piece, verdict in expected.items() if piece in text]
        assert matches, f"no expected verdict for {text}"
        assert entry.verdict == matches[0], f"{text}: {entry.verdict}, expected {matches[0]}"
    found = {piece for piece in expected for e in entries if piece in to_plain(e.stop)}
    assert found == set(expected), "every expected stop is in the ledger"


SMALL = [
    ("x: R\nexplain diff(x * sg(x), x)", "blocking", "x"),
    ("x: R\nexplain diff(x + sg(round(x) - x), x)", "inventing", "-1"),
    ("x: R\ny: R\nexplain diff(y * sg(x), y)", "irrelevant", None),
    ("x: R\nexplain diff(x * sg(round(x)), x)", "neutral", "0"),
    # the builtin softmax shifted by a stopped max: the adjoint is s0 + s1 + s2 - 1, zero only by softmax's definition
    ("x: R^3\nexplain grad(log(softmax(x - sg(max(x)))[0]), x)", "neutral", None),
    ("x: R^3\nexplain jacobian(softmax(x - sg(max(x))), x)", "neutral", None),
    ("x: R^3\nexplain grad(logsumexp(x - sg(max(x))) + sg(max(x)), x)", "neutral", None),
]


@pytest.mark.parametrize("source, verdict, removed", SMALL)
def test_verdict_and_removed_term(source, verdict, removed):
    entry, *same = Session().run(source)[-1].steps[0].ledger  # the ledger of the view shown: one entry per
    assert len(same) == source.count("sg(") - 1 and all(e.same for e in same)  # stop written, one node once
    assert entry.verdict == verdict
    if removed is not None:
        assert to_plain(entry.removed[0][0]) == removed


def test_the_adjoint_at_the_stable_softmax_max_is_zero(monkeypatch):
    (request,) = _requests("stable_softmax", "grad(log(stable_softmax(x)[0]), x)", monkeypatch)
    (entry,) = ledger(request)
    assert entry.adjoint == (0,)
    assert entry.reaching == tuple(sp.Symbol(f"x[{i}]", real=True) for i in range(3))


@pytest.mark.parametrize("source", [
    "x: R\nexplain diff(x * sg(x) + sg(x^2) * sin(x), x)",
    "x: R^2\nexplain grad(x[0] * sg(x[1]) + sg(x[0] * x[1])^2, x)",
    "x: R^2\nexplain jacobian([x[0] * sg(x[1]), sg(x[0]) * x[1]], x)",
])
def test_the_removed_terms_add_up_to_blocked(source):
    request = Session().run(source)[-1].derivations[0]
    total = None
    for entry in ledger(request):
        removed = [r for row in entry.removed for r in row]
        total = removed if total is None else [a + b for a, b in zip(total, removed)]
    assert all(tidy(a - b) == 0 for a, b in zip(total, elements(blocked_part(request))))
