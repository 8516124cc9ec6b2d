"""A gradient of a tensor formula by a list of scalars: the tensor reverse pass, one line per scalar at the end.

`grad(L, [a, b])` of a loss over data vectors derives as the reverse pass,
each scalar's adjoint its own last line, unless a vector identity derives it
(EM's weighted means keep theirs). The derived list must equal the component
engine's gradient (the closing check, and at a point its numbers), and every
stop is one ledger entry.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradlang.core.session import Session
from tests.component_session import ComponentSession
from gradlang.render.plain import to_plain
from tests.explain.test_tensor_derivations import _lines

ROOT = Path(__file__).resolve().parents[2]
DECLARED = "x: R^3\ny: R^3\nt: R\na: R\nb: R\n"

# (name, statement, a piece of the derivation's text, verdicts of the stops in order)
TABLE = [
    ("logistic", "grad(-(t*log(sigmoid(a*x[0] + b)) + (1 - t)*log(1 - sigmoid(a*x[0] + b))), [a, b])",
     "∂L/∂b = sigmoid(a*x[0] + b) - t", ()),
    ("least_squares", "grad(sum((a*x + b - y)^2), [a, b])", "∂L/∂a = ", ()),
    ("stopped_scale", "grad(sum((a*x + b)^2) + sg(a)*sum(x), [a, b])", "removes r₁ = [sum(x), 0]", ("blocking",)),
    ("irrelevant", "grad(a*sum(sg(y)*x) + b, [a, b])", "no path from a, b reaches it", ("irrelevant",)),
]


@pytest.mark.parametrize("name, statement, piece, verdicts", TABLE, ids=[row[0] for row in TABLE])
def test_a_grad_by_a_list_of_scalars_is_the_reverse_pass(name, statement, piece, verdicts):
    result = Session().run(DECLARED + f"explain {statement}")[-1]
    (explanation,) = result.steps
    text = to_plain(result)
    assert explanation.summary.startswith("tensor reverse pass"), text
    assert _lines(text) <= 25 and piece in text, text
    assert [str(line.lhs[0]) for line in explanation.vector.lines[-2:]] in (["∂L/∂a", "∂L/∂b"], ["∂L/∂b", "∂L/∂a"])
    assert [e.verdict for e in explanation.ledger] == list(verdicts), text
    assert explanation.check is not None and explanation.check.agrees, text


@pytest.mark.parametrize("name, statement, piece, verdicts", TABLE, ids=[row[0] for row in TABLE])
def test_at_a_point_the_numbers_are_the_component_engines(name, statement, piece, verdicts):
    at = " at x = [0.5, -1, 2], y = [1, 0.25, -0.5], t = 1, a = 0.3, b = -0.7"
    result = Session().run(DECLARED + f"explain {statement}{at}")[-1]
    engine = ComponentSession().run(DECLARED + f"{statement}{at}")[-1]
    assert result.steps[0].check.agrees
    assert [float(v) for v in result.value] == pytest.approx([float(v) for v in engine.value], rel=1e-12)


def test_the_em_weighted_means_keep_their_identity():
    program = "x = [1, 2, 3]\nr = [0.2, 0.5, 0.9]\nmu1: R\nmu2: R\n" \
              "explain grad(-sum(sg(r)*(x - mu1)^2 + sg(1 - r)*(x - mu2)^2)/2, [mu1, mu2])"
    (explanation,) = Session().run(program)[-1].steps
    assert not explanation.summary.startswith("tensor reverse pass")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("name, statement", [row[:2] for row in TABLE], ids=[row[0] for row in TABLE])
def test_the_latex_compiles_and_fits_the_page(name, statement, tmp_path):
    from tests.explain.test_latex_compiles import _compile
    from tests.safety import SAFETY_NET

    script = tmp_path / "program.grad"
    script.write_text(DECLARED + f"explain {statement}\n")
    run = subprocess.run([sys.executable, "-m", "gradlang", "--latex", str(script)], capture_output=True,
                         text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    log = _compile(run.stdout, tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]
