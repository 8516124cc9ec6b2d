"""Every --latex output of an explained derivation, and of every example, compiles and fits a letter page.

Runs where `pdflatex` is installed (.ci/run installs Debian's
texlive-latex-base): each output goes into a plain `article` with `amsmath`
and nothing else, and the log must show no error and no overfull line.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradlang.core.session import Session
from gradlang.render import to_latex
from tests.safety import SAFETY_NET

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCUMENT = "\\documentclass[letterpaper]{article}\n\\usepackage{amsmath}\n\\begin{document}\n%s\n\\end{document}\n"

STABLE = "stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"
# The derivations of the issue on derivations that teach, and the gallery's stops.
DERIVATIONS = {
    "product": "x: R\nexplain diff(x^2 * sin(x), x)",
    "quotient": "x: R\nexplain diff(exp(x) / (1 + x^2), x)",
    "log_cos": "x: R\nexplain diff(log(cos(x)), x)",
    "x_sg_x": "x: R\nexplain diff(x * sg(x), x)",
    "straight_through": "x: R\nexplain diff(x + sg(round(x) - x), x)",
    "sigmoid_xent": "z: R\ny: R\nexplain diff(-y*log(sigmoid(z)) - (1 - y)*log(1 - sigmoid(z)), z)",
    "stop_component": "x: R^2\nexplain diff(x[0] * stop_gradient(x[1]), x[1])",
    "backward": "x: R^2\nexplain backward(x[0] * sg(x[1]) + x[1]^2, x)",
    "backward_softmax": "x: R^3\n" + STABLE + "explain backward(log(stable_softmax(x)[0]), x)",
    "unfold_sigmoid": "z: R\nexplain[unfold] diff(sigmoid(z), z)",
    "unfold_softmax": "x: R^3\nexplain[unfold] jacobian(softmax(x), x)[0, 1]",
    "unfold_backward": "x: R^3\nexplain[unfold] backward(norm(x), x)",
    "backward_irrelevant": "W: R^(2,2)\ne: R^2\nexplain backward(sum((W @ [1, 2] - sg(e))^2), W)",
    # folded (vector-level) tapes: a column of W, vector stops, reductions, picks
    "backward_vq_vae": "W: R^(3,2)\nx: R^2\nz_e = W @ x\ne: R^3\nbeta = 1/4\n"
                       "explain backward(sum((z_e - sg(e))^2) + beta * sum((sg(z_e) - e)^2), W)",
    "backward_td": "W: R^(2,2)\nq(s) = W @ s\ns1 = [1, 0]; s2 = [0, 1]; r = 1; gamma = 9/10\n"
                   "explain backward(1/2 * (r + gamma * sg(max(q(s2))) - q(s1)[0])^2, W)",
    "backward_builtin_softmax": "x: R^3\nexplain backward(log(softmax(x - sg(max(x)))[0]), x)",
    "backward_vector_builtins": "x: R^3\nexplain backward(logsumexp(x) + norm(x)*sg(x[0]), x)",
    "stable_softmax_blocked": "x: R^3\n" + STABLE + "explain blocked(stable_softmax(x)[0], x)",
    "log_softmax": "x: R^3\n" + STABLE + "explain grad(log(stable_softmax(x)[0]), x)",
    # the surface of explain: depth, selections, the closing check at a point
    "depth_all": "x: R\nexplain[depth=all] diff(exp(x) / (1 + x^2), x)",
    "depth_zero": "x: R^3\n" + STABLE + "explain[depth=0] grad(log(stable_softmax(x)[0]), x)",
    "selected_grad": "x: R^3\n" + STABLE + "explain grad(log(stable_softmax(x)[0]), x)[1] at x = [1, 3, 3]",
    "selected_jacobian": "x: R^3\nexplain jacobian(softmax(x), x)[0, 2]",
    "selected_row": "x: R^3\nexplain jacobian(softmax(x), x)[1] at x = [0.5, -1, 2]",
    "check_stop": "x: R\nexplain diff(x * sg(x), x) at x = 3",
    "check_long": "x: R^9\nexplain grad(sum(x^3) * sg(x[0]), x) at x = [1, 2, 3, 4, 5, 6, 7, 8, 9]",
    "three_factors": "x: R\nexplain[depth=all] diff(atan(x)*cosh(x + 2)*log(1 + x^2), x)",
    "hessian_entry": "a: R\nb: R\nc: R\nexplain hessian(a*b*c*exp(a+b+c)*sg(a-b), [a, b, c])[0, 1] at a = 1, b = 2, c = 3",
    "check_wide": "x: R^6\nexplain grad(sum(x^4) * sg(sum(x)), x) at x = [1, 2, 3, 4, 5, 6]",
    "check_matrix": "W: R^(2,2)\nv: R^2\nexplain grad(sum(W @ v)^2, W) at W = [[1, 2], [3, 4]], v = [1, -1]",
}


def _compile(body: str, tmp_path: Path) -> str:
    """The pdflatex log of the body in a plain article (fails the test on an error)."""
    source = tmp_path / "doc.tex"
    source.write_text(DOCUMENT % body, encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", source.name],
                         cwd=tmp_path, capture_output=True, text=True, timeout=SAFETY_NET)
    log = (tmp_path / "doc.log").read_text(encoding="latin-1")
    assert run.returncode == 0, log[log.find("\n!"):][:1500]
    return log


@functools.lru_cache(maxsize=None)
def _latex_of(source: str) -> str:
    results = [r for r in Session().run(source) if r is not None]
    return "\n".join(to_latex(step) for r in results for step in r.steps)


@pytest.mark.parametrize("name", sorted(DERIVATIONS))
def test_a_derivation_compiles_and_fits_the_page(name, tmp_path):
    body = _latex_of(DERIVATIONS[name])
    assert body
    log = _compile(body, tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]


_SOURCE_IN_TEXT = re.compile(r"\\\^\{\}|stop\\_gradient\(|[\w)]\*[\w(]")


@pytest.mark.parametrize("name", sorted(DERIVATIONS))
def test_a_derivation_says_its_expressions_as_mathematics(name):
    """No sentence of a LaTeX derivation (a note, why zero, the ledger) spells an expression as gradlang
    source: x^2, 2*y, stop_gradient(…) in text mean a printer wrote the sentence, not explain's Note."""
    for line in _latex_of(DERIVATIONS[name]).splitlines():
        text = re.sub(r"\$[^$]*\$|\\\(.*?\\\)|\\texttt\{.*\}", "", line) if "intertext" in line or "sloppy" in line else ""
        assert not _SOURCE_IN_TEXT.search(text), line


# examples whose --latex output does not compile yet, and why (strict: remove when fixed)
BUGS: dict = {}  # example -> why its LaTeX does not compile yet (pi printed as \text{\Pi} was fixed in render/latex.py)


def _examples():
    for path in sorted(EXAMPLES.glob("*.grad")):
        marks = [pytest.mark.xfail(strict=True, reason=BUGS[path.stem])] if path.stem in BUGS else []
        yield pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", list(_examples()))
def test_every_example_compiles(path, tmp_path):
    environment = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    run = subprocess.run([sys.executable, "-m", "gradlang", "--latex", str(path)], capture_output=True,
                         text=True, timeout=SAFETY_NET, cwd=EXAMPLES.parent, env=environment)
    log = _compile(run.stdout, tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]
