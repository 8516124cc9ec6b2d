"""Tensor results as a teacher writes them (LANGUAGE.md section 8): repeated parts named once, positive terms first.

Rows of exact printouts for the results the reference names; then, for every
loss of tests/tensor/test_losses.py and a few Jacobians and Hessians: the
plain form reads back (run in a fresh session with the same declarations, it
gives the same numbers at random points, sizes given by the `at`); a printed
name is never a name the session has bound; and the printout is the same
bytes under two hash seeds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from gradlang import Session
from tests.component_session import ComponentSession
from gradlang.render import to_plain
from gradlang.render.pretty import to_rich
from tests.conftest import as_floats
from tests.tensor.test_losses import LOSSES, SIZES, _at, _declare, _point
from tests.safety import SAFETY_NET

pytest.importorskip("rich")

DECLARE = "m, n: size\nW: R^(m,n)\nx: R^n\ny: R^m\nw: R^n\n"

# (expression, plain, pretty): each a result the reference or the issue names
ROWS = [
    ("grad(sum((W @ x - y)^2), W)", "2*outer(W @ x - y, x)", "2⋅(W x − y) xᵀ"),
    ("grad(-log(softmax(W @ x)[1]), W)", "outer(softmax(W @ x) - onehot(1, m), x)", "(softmax(W x) − e₁) xᵀ"),
    ("jacobian(softmax(x), x)", "s = softmax(x)\ndiag(s) - outer(s, s)", "diag(s) − s sᵀ\nwhere s = softmax(x)"),
    ("hessian(logsumexp(x), x)", "s = softmax(x)\ndiag(s) - outer(s, s)", "diag(s) − s sᵀ\nwhere s = softmax(x)"),
    ("jacobian(softmax(W @ x), x)", "s = softmax(W @ x)\n(diag(s) - outer(s, s)) @ W",
     "(diag(s) − s sᵀ) W\nwhere s = softmax(W x)"),
    ("hessian(log(sigmoid(dot(w, x))), w)", "p = sigmoid(dot(w, x))\np*(p - 1)*outer(x, x)",
     "p⋅(p − 1)⋅x xᵀ\nwhere p = sigmoid(wᵀx)"),
    ("grad(sum(sigmoid(W @ x) * y), W)", "p = sigmoid(W @ x)\nouter(p*y*(1 - p), x)", "((1 − p) ⊙ p ⊙ y) xᵀ\nwhere p = sigmoid(W x)"),
    ("grad(sum((tanh(W @ x) - y)^2), W)", "h = tanh(W @ x)\n2*outer((1 - h^2)*(h - y), x)", None),
    ("grad(norm(W @ x - y), W)", "r = W @ x - y\nouter(r, x)/norm(r)", None),
    ("grad(logsumexp(W @ x) - (W @ x)[0], W)", "outer(softmax(W @ x) - onehot(0, m), x)", "(softmax(W x) − e₀) xᵀ"),
]


def _session(program: str = DECLARE) -> Session:
    session = Session()
    session.run(program)
    return session


def _pretty(result) -> str:
    from rich.console import Console

    console = Console(width=100, record=True, file=open(os.devnull, "w"), color_system=None)
    console.print(to_rich(result, 100))
    return "\n".join(line.rstrip() for line in console.export_text().rstrip("\n").split("\n"))


@pytest.mark.parametrize("source, plain, pretty", ROWS, ids=[row[0] for row in ROWS])
def test_a_tensor_result_prints_as_a_teacher_writes_it(source, plain, pretty):
    result = _session().run(source)[-1]
    assert result.text == plain
    if pretty is not None:
        assert _pretty(result) == pretty


@pytest.mark.parametrize("source, pretty, latex", [
    ("dot(1 - x, w)", "(1 − x)ᵀw", r"\left(1 - x\right)^{\top} w"),
    ("dot(x, x + w)", "xᵀ(w + x)", r"x^{\top} \left(w + x\right)"),
    ("dot(x - w, w) * x", "x⋅(x − w)ᵀw", r"x \left(\left(x - w\right)^{\top} w\right)"),
])
def test_the_transposed_factor_of_a_dot_product_is_bracketed_when_compound(source, pretty, latex):
    result = _session().run(source)[-1]
    assert (_pretty(result), result.latex) == (pretty, latex)


def test_one_line_of_a_tensor_value_names_its_parts_after_it():
    from gradlang.render.pretty import GradlangPrettyPrinter
    from gradlang.render.shown import shown_result

    result = _session().run("explain jacobian(softmax(W @ x), x)")[-1]
    line = GradlangPrettyPrinter(60)._value_line(shown_result(result), "→ ")
    assert line.plain.splitlines()[:2] == ["→ (diag(s) − s sᵀ) W", "  where s = softmax(W x)"]


def test_a_shortened_value_line_keeps_every_name_it_uses():
    """Each named part on a line of its own: cutting the one line after the value cut off the definitions
    of t₂ … t₆, letters no line then introduced (issue 40)."""
    from gradlang import Session
    from gradlang.render.pretty import GradlangPrettyPrinter
    from gradlang.render.shown import derivation_names, in_its_form, shown, shown_result

    source = ("n: size\nx: R^n\nstable_softmax(v) = exp(v - sg(max(v))) / sum(exp(v - sg(max(v))))\n"
              "explain blocked(stable_softmax(x), x)")
    result = Session().run(source)[-1]
    form = in_its_form(result)
    value = shown_result(result) if form is None else shown(form, False, result.bound | derivation_names(result))
    lines = GradlangPrettyPrinter(100)._value_line(value, "→ ").plain.splitlines()
    used = {f"t{chr(0x2080 + k)}" for k in range(1, 10) if f"t{chr(0x2080 + k)}" in lines[0]}
    defined = {line.split("=")[0].replace("where", "").strip() for line in lines[1:] if " = " in line}
    assert used and used <= defined and all(len(line) <= 100 for line in lines)


def test_latex_names_the_part_after_the_value():
    result = _session().run("jacobian(softmax(x), x)")[-1]
    assert result.latex == (r"\operatorname{diag}\left(s\right) - s s^{\top}, \quad "
                            r"\text{where } s = \operatorname{softmax}\left(x\right)")


def test_json_text_and_latex_follow_plain_and_latex():
    from gradlang.render.json import to_json

    result = _session().run("jacobian(softmax(x), x)")[-1]
    data = to_json(result)
    assert (data["text"], data["latex"]) == (result.text, result.latex)


def test_result_named_gives_the_parts():
    result = _session().run("jacobian(softmax(x), x)")[-1]
    assert [(str(name), to_plain(part)) for name, part in result.named] == [("s", "softmax(x)")]


@pytest.mark.parametrize("bound", ["s = 3", "s(a) = a^2", "s: R^n"])
def test_a_name_the_session_has_bound_is_never_printed_for_a_part(bound):
    result = _session(DECLARE + bound).run("jacobian(softmax(x), x)")[-1]
    assert result.text == "t1 = softmax(x)\ndiag(t1) - outer(t1, t1)"
    assert _pretty(result) == "diag(t₁) − t₁ t₁ᵀ\nwhere t₁ = softmax(x)"


def test_a_letter_of_the_value_itself_is_never_a_name():
    result = _session("m: size\nQ: R^(m,m)\ns: R^m\ns2: R^m\n").run("jacobian(softmax(Q @ s) + softmax(Q @ s2), s)")[-1]
    assert "s =" not in result.text and "s2 =" not in result.text
    assert result.text.splitlines()[0].startswith("t1 = ")


def test_scalar_results_of_the_component_engine_keep_their_order():
    results = ComponentSession().run("x: R^2\ny: R\ny - x[0]\n[y - x[0], y - x[1]]")
    assert [r.text for r in results] == ["-x[0] + y", "[-x[0] + y, -x[1] + y]"]
    results = Session().run("x: R^2\ny: R\ny - x[0]\n[y - x[0], y - x[1]]")  # x[0] an entry of one tensor
    assert [r.text for r in results] == ["y - x[0]", "[-x[0] + y, -x[1] + y]"]


# --- the plain form reads back -------------------------------------------------------

EXTRA = [
    ({"x": ("n",)}, "jacobian(softmax(x), x)"),
    ({"x": ("n",)}, "hessian(logsumexp(x), x)"),
    ({"w": ("n",), "x": ("n",)}, "hessian(log(sigmoid(dot(w, x))), w)"),
    ({"W": ("m", "n"), "x": ("n",)}, "jacobian(softmax(W @ x), x)"),
    ({"W": ("m", "n"), "x": ("n",)}, "jacobian(tanh(W @ x), x)"),
    ({"W": ("m", "n"), "x": ("n",), "y": ("m",)}, "hessian(sum((sigmoid(W @ x) - y)^2), x)"),
]
# max_shares(v), the plain spelling of max's gradient, is not yet a builtin of the tensor engine
READ_BACK = [pytest.param(row.name, row.declarations, f"grad({row.loss}, {row.wrt})", row.definitions, row.scalars or {},
                          id=row.name)
             for row in LOSSES] + [pytest.param(source, declarations, source, "", {}, id=source)
                                   for declarations, source in EXTRA]


class _Point:
    """The at of a test_losses row: a point for the declarations and the row's scalars."""

    def __init__(self, declarations, scalars):
        self.declarations, self.scalars = declarations, scalars


@pytest.mark.parametrize("name, declarations, source, definitions, scalars", READ_BACK)
def test_the_plain_form_reads_back_to_the_same_value(name, declarations, source, definitions, scalars):
    declared = _declare(declarations, None) + "\n" + definitions
    text = _session(declared).run(source)[-1].text
    *parts, value = text.splitlines()
    again = _session(declared + "\n" + "\n".join(parts) + f"\n_read = {value}")
    first = _session(declared + f"\n_printed = {source}")
    for seed, (m, n) in enumerate(SIZES[:2]):
        point = _point(_Point(declarations, scalars), {"m": m, "n": n}, seed + 10)
        at = _at(point, _Point(declarations, scalars))
        expected = as_floats(first.eval(f"_printed at {at}"))
        np.testing.assert_allclose(as_floats(again.eval(f"_read at {at}")), expected, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{name}: {text}")


# --- deterministic ---------------------------------------------------------------------

PROGRAM = DECLARE + "\n".join(row[0] for row in ROWS) + "\ns = 1\njacobian(softmax(x), x)\n"


@pytest.mark.parametrize("fmt", ["plain", "pretty", "latex", "json"])
def test_the_same_bytes_under_any_hash_seed(fmt):
    def run(seed: str) -> bytes:
        env = {**os.environ, "PYTHONHASHSEED": seed, "COLUMNS": "100"}
        command = [sys.executable, "-m", "gradlang", f"--{fmt}", "-e", PROGRAM]
        return subprocess.run(command, env=env, capture_output=True, timeout=SAFETY_NET, check=True).stdout

    first = run("1")
    assert first and first == run("2024")


# --- LaTeX compiles ----------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_latex_of_tensor_results_compiles_and_fits_the_page(tmp_path):
    from tests.explain.test_latex_compiles import _compile

    session = _session()
    results = [session.run(row[0])[-1] for row in ROWS]
    body = "\n".join(f"\\[\n{result.latex}\n\\]" for result in results)
    log = _compile(body, tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]


def test_a_transcript_in_latex_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    from tests.explain.test_latex_compiles import _compile

    program = tmp_path / "tensors.grad"
    program.write_text(PROGRAM, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "gradlang", "--latex", str(program)], capture_output=True,
                         text=True, timeout=SAFETY_NET, check=True)
    (tmp_path / "doc").mkdir()
    log = _compile(run.stdout, tmp_path / "doc")
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]
