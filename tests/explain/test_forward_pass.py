"""Jacobians at the tensor level: the forward pass, one tangent rule a line, at literal and symbolic sizes.

Each Jacobian of the table is explained as a user writes it. The derivation
must be the tensor forward pass at either size (never a walk through the components), fit in 25 plain lines of 100 columns, and its result must equal the
component engine's jacobian at random points; every stop gets one ledger
entry with its verdict.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradlang.core.session import Session
from tests.component_session import ComponentSession
from gradlang.expr.tensor import numbers
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.walk import dag_atoms
from gradlang.render.latex import to_latex
from gradlang.render.plain import to_plain
from tests.explain.test_tensor_derivations import _lines, _literal, _random_values

ROOT = Path(__file__).resolve().parents[2]
DECLARED = "x: R^{n}\ny: R^{n}\nW: R^({n},{n})\n"

# (name, statement, a piece of the derived Jacobian, verdicts of the stops in order)
TABLE = [
    ("tanh", "jacobian(tanh(x), x)", "diag(1 - tanh(x)^2)", ()),
    ("sigmoid_layer", "jacobian(sigmoid(W @ x), x)", "@ W", ()),
    ("normalize", "jacobian(x / norm(x), x)", "outer(x, x)", ()),
    ("softmax_layer", "jacobian(softmax(W @ x), x)", "@ W", ()),
    ("stopped_scale", "jacobian(sigmoid(W @ x) * sg(x[0]), x)", "stop_gradient(x[0])", ("blocking",)),
    ("straight_through", "jacobian(x + sg(round(x) - x), x)", "eye(", ("inventing",)),
    ("irrelevant", "jacobian(x * sg(y), x)", "diag(stop_gradient(y))", ("irrelevant",)),
    ("shifted_softmax", "jacobian(2 * softmax(x - sg(max(x))) + x, x)", "outer(", ("neutral",)),
]


def _program(size, statement: str) -> str:
    return ("n: size\n" if size == "n" else "") + DECLARED.format(n=size) + f"explain {statement}"


def _explained(size, statement: str):
    result = Session().run(_program(size, statement))[-1]
    (explanation,) = result.steps
    return result, explanation


@pytest.mark.parametrize("size", [3, "n"])
@pytest.mark.parametrize("name, statement, form, verdicts", TABLE, ids=[row[0] for row in TABLE])
def test_the_derivation_is_the_forward_pass_and_reads_in_25_lines(name, statement, form, verdicts, size):
    result, explanation = _explained(size, statement)
    text = to_plain(result)
    if explanation.summary.startswith("tensor forward pass"):
        assert form in to_plain(explanation.derived), text
    else:  # a vector identity says it in its own lines
        assert size == 3 and explanation.vector is not None and not explanation.steps, text
    assert _lines(text) <= 25, text
    assert [e.verdict for e in explanation.ledger] == list(verdicts), text
    assert len(explanation.sentences) == len(verdicts)
    if size == 3:
        assert "✓ equals jacobian" in text, text


@pytest.mark.parametrize("size", [3, "n"])
@pytest.mark.parametrize("name, statement, form, verdicts", TABLE, ids=[row[0] for row in TABLE])
def test_the_derived_jacobian_equals_the_component_engines(name, statement, form, verdicts, size):
    """At random points: the derivation's result against jacobian taken component by component."""
    literal = 4 if size == "n" else size
    _, explanation = _explained(size, statement)
    if not explanation.summary.startswith("tensor forward pass"):  # a vector identity's components: checked
        assert explanation.check is not None and explanation.check.agrees
        return
    rng = np.random.default_rng(11)
    components = ComponentSession()
    components.run(DECLARED.format(n=literal))
    for _ in range(3):
        point = _random_values(explanation.derived, rng, literal)
        sizes = {s: literal for v in dag_atoms(explanation.derived, Var) for s in v.shape if s.free_symbols}
        sizes.update({s: literal for s in explanation.derived.free_symbols if s.name == "n"})
        derived = numbers.evaluate(explanation.derived, point, sizes)
        at = ", ".join(f"{s.name} = {_literal(a)}" for s, a in point.items())
        engine = components.run(f"{statement} at {at}" if at else statement)[-1].value
        engine = np.array(engine.tolist() if hasattr(engine, "tolist") else engine, dtype=float)
        assert np.allclose(derived, engine, rtol=1e-9, atol=1e-12)


def test_named_parts_read_as_a_teacher_writes_them():
    text = to_plain(_explained("n", "jacobian(sigmoid(W @ x) * sg(x[0]) + tanh(W @ x), x)")[1])
    assert "∂p/∂x = diag(p*(1 - p)) @ ∂z/∂x" in text, text
    assert "∂h/∂x = diag(1 - h^2) @ ∂z/∂x" in text, text
    assert "blocking: removes r₁ = outer(p, onehot(0, n))" in text, text
    assert r"\frac{\partial z}{\partial x}" in to_latex(_explained("n", "jacobian(tanh(W @ x) + W @ x, x)")[1])


def test_the_softmax_jacobian_at_a_literal_size_is_the_derivation_at_a_symbolic_size():
    """Issue #36: `x: R^3` shows what `x: R^n` shows (the forward pass, diag(s) − s sᵀ in one line), and its
    value as the formula, not 597 characters of components."""
    literal, at_three = _explained(3, "jacobian(softmax(x), x)")
    symbolic, at_n = _explained("n", "jacobian(softmax(x), x)")
    assert at_three.summary == at_n.summary == "tensor forward pass"
    shown = to_plain(literal).splitlines()
    assert shown == to_plain(symbolic).splitlines()  # the whole derivation, its closing check included
    assert shown[-1] == "diag(s) - outer(s, s)"
    assert shown[-2] == "# ✓ equals jacobian (symbolically: the same formula at every size)"
    assert at_three.check.kind == at_n.check.kind == "symbolic"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("size", [3, "n"])
@pytest.mark.parametrize("name, statement", [row[:2] for row in TABLE], ids=[row[0] for row in TABLE])
def test_the_latex_of_a_jacobian_and_its_value_compiles_and_fits_the_page(name, statement, size, tmp_path):
    from tests.explain.test_latex_compiles import _compile
    from tests.safety import SAFETY_NET

    script = tmp_path / "program.grad"
    script.write_text(_program(size, statement))
    run = subprocess.run([sys.executable, "-m", "gradlang", "--latex", str(script)], capture_output=True,
                         text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    log = _compile(run.stdout, tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]


def test_the_pretty_value_under_the_derivation_uses_its_names():
    """The value printed under a derivation names its parts as the derivation's lines do (p, h), not anew."""
    from rich.console import Console

    from gradlang.render import to_rich

    program = "n: size\n" + DECLARED.format(n="n") + "z = W @ x\nexplain jacobian(sigmoid(z) * sg(x[0]) + tanh(z), x)"
    console = Console(width=100, color_system=None, record=True)
    console.print(to_rich(Session().run(program)[-1]))
    shown = console.export_text()
    assert "diag((1 − p) ⊙ p) W⋅sg(x₀) + diag(1 − h ) W" in shown and "t₁" not in shown, shown
