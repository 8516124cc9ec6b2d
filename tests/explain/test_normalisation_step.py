"""A normalisation's backward as one step (explain/tensor/normalisation.py): batch norm, layer norm, an RMS
norm, F.normalize with its ε clamp, a vector's own standardisation. The closed form the line shows,
x̄ = (ȳ − mean ȳ − y ⊙ mean(ȳ ⊙ y)) ⊘ σ (and its uncentred kin), is checked against the engine's gradient at
random points, and the explanation says it as one line with its rule in place of the ten it replaces."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from gradlang import Session
from gradlang.expr.source import to_source
from gradlang.expr.tensor.broadcast import full
from gradlang.expr.values import to_symbolic
from gradlang.explain.tensor import normalisation
from gradlang.render.plain import to_plain

MATRICES = "X: R^(4,3)\nW: R^(4,3)\n"
# (name, declarations, the normalised value y of X, the axis, centred)
CASES = [
    ("batch norm", MATRICES, "C = X - outer(ones(4), mean(X, 0))\nY = C / outer(ones(4), sqrt(mean(C * C, 0) + 0.001))\n", 0, True),
    ("layer norm", MATRICES, "C = X - outer(mean(X, 1), ones(3))\nY = C / outer(sqrt(mean(C * C, 1) + 0.001), ones(3))\n", 1, True),
    ("rms norm", MATRICES, "Y = X / outer(sqrt(mean(X * X, 1) + 0.001), ones(3))\n", 1, False),
    ("F.normalize", MATRICES, "Y = X / outer(sqrt(max(sum(X * X, 1), 1e-24)), ones(3))\n", 1, False),
    ("a vector", "X: R^5\nW: R^5\n", "C = X - mean(X)\nY = C / sqrt(mean(C * C) + 0.001)\n", None, True),
]


def _literal(a) -> str:
    if a.ndim == 1:
        return "[" + ", ".join(repr(float(v)) for v in a) + "]"
    return "[" + ", ".join(_literal(row) for row in a) + "]"


@pytest.mark.parametrize("name, declared, normalised, axis, centred", CASES, ids=[c[0] for c in CASES])
def test_the_closed_form_is_the_gradient(name, declared, normalised, axis, centred):
    session = Session()
    session.run(declared + normalised + "L = sum(W * Y)\ng = grad(L, X)\n")
    found = normalisation.sites(to_symbolic(session.env["L"]))
    assert [(site.axis, site.centred) for site in found] == [(axis, centred)]
    shape = np.shape(np.zeros([4, 3] if axis is not None else [5]))
    closed = found[0].closed_form(full(sp.S.One, shape))  # sum(W ⊙ Y): the product W ⊙ Y's adjoint is 𝟙
    rng = np.random.default_rng(7)
    for _ in range(3):
        point = f"X = {_literal(rng.normal(size=shape))}, W = {_literal(rng.normal(size=shape))}"
        session.run(f"a = ({to_source(closed)}) at {point}\nb = g at {point}\n")
        ours, engine = (np.array(session.env[k].tolist(), dtype=float) for k in "ab")
        assert np.max(np.abs(ours - engine)) < 1e-12


def test_a_batch_norm_reads_as_one_step():
    session = Session()
    program = MATRICES + CASES[0][2] + "L = sum(W * relu(Y))\n"
    text = to_plain(session.run(program + "explain grad(L, X)\n")[-1])
    assert "[normalisation y = (x − μ) ⊘ σ" in text, text
    assert "∂L/∂X = " in text and "sqrt" not in text.split("∂L/∂X = ")[0].split("(")[-1], text
    assert "✓ equals grad" in text, text
    assert len([line for line in text.splitlines() if line.startswith("# (")]) <= 4, text


def test_a_lookalike_is_not_a_normalisation():
    """Rows centred but scaled by the columns' spread: no standardisation of X (the closed form would not hold)."""
    session = Session()
    session.run(MATRICES + "C = X - outer(mean(X, 1), ones(3))\nY = C / outer(ones(4), sqrt(mean(C * C, 0) + 0.001))\n"
                "L = sum(W * Y)\n")
    found = normalisation.sites(to_symbolic(session.env["L"]))
    assert all(not site.centred for site in found)
