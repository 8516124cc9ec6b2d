"""explain backward(e, x): the forward and backward tables of reverse mode, in every format."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from rich.console import Console

from gradlang import Session
from gradlang.expr.stopgrad import unstopped
from gradlang.render import to_json, to_latex, to_plain, to_rich

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "x: R^2\nexplain backward(x[0] * sg(x[1]) + x[1]^2, x)"


@pytest.fixture(scope="module")
def result():
    return Session().run(PROGRAM)[-1]


def test_value_is_the_gradient(result):
    assert result.text == "[stop_gradient(x[1]), 2*x[1]]"
    # printed alike (render/shown.py picks the shorter of a formula and its components for display)
    assert Session().run("x: R^2\nbackward(x[0] * sg(x[1]) + x[1]^2, x)")[-1].text == Session().run(
        "x: R^2\ngrad(x[0] * sg(x[1]) + x[1]^2, x)"
    )[-1].text


def test_plain_has_both_tables_and_the_cut(result):
    text = to_plain(result.steps[0])
    assert "forward (read down)" in text and "│ backward: the adjoints (read up)" in text
    assert "v4 = sg(v1)   cut  │ v̄4 = v3*v̄5" in text
    assert "d/dx[0] = v̄3 = sg(x[1])" in text


def test_latex_rich_and_json(result):
    view = result.steps[0]
    assert r"\operatorname{sg}" in to_latex(view) and r"\bar{v}" in to_latex(view)
    console = Console(width=100, color_system=None, record=True)
    console.print(to_rich(view))
    assert "cut: no gradient flows back" in console.export_text()
    data = to_json(view)
    assert data["rule"] == "backward"
    assert [row["stopped"] for row in data["forward"]].count(True) == 1


def test_cli_json_lists_the_tables_as_steps():
    output = subprocess.run(
        [sys.executable, "-m", "gradlang", "--json", "-e", "explain backward(x * sg(x), x)"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout
    record = json.loads(output.splitlines()[0])
    assert record["kind"] == "explain" and record["steps"][0]["rule"] == "backward"


# --- the adjoint at each cut (issue 14: "The explain backward tables show the adjoint at each cut") ---

STABLE = "x: R^3\nstable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"


def _view(program: str):
    """The tape of components of the program's explain backward (by a declared tensor, explain shows the
    tensor pass; the tape is built from the same request)."""
    from explain_helpers import tape_view

    return tape_view(program)


def test_the_stable_softmax_table_shows_the_zero_adjoint_arriving_at_its_max():
    view = _view(STABLE + "explain backward(log(stable_softmax(x)[0]), x)")
    text = to_plain(view)
    assert "v̄3 = -v̄4" in text and "arrives at a cut: dropped" in text and "toward a cut" in text
    assert "arriving: v̄3 = -v̄4 = −1ᵀ(e₀ − s) = −1 + Σₖ sₖ = 0   (where s = softmax(x − v3))" in text
    assert "adding 0 to the gradient" in text and "neutral" in text
    [cut] = to_json(view)["cuts"]
    assert (cut["row"], cut["argument"], cut["adjoint"], cut["adds"], cut["verdict"]) == (3, 2, "0", [], "neutral")
    assert cut["form"] == "−1ᵀ(e₀ − s) = −1 + Σₖ sₖ = 0"
    # the rows into the cut are the tape's own: the raw adjoint at v3 is 0 at any point
    [row] = [r for r in view.toward if r.index == 3]
    xs = list(row.adjoint.free_symbols)
    for seed in range(3):
        point = {s: sp.Rational(seed * 7 + 2 * i + 1, 5 + i) for i, s in enumerate(sorted(xs, key=str))}
        assert abs(sp.N(unstopped(row.adjoint).xreplace(point), 30)) < 1e-20


def test_the_builtin_softmax_shifted_by_a_stopped_max_has_a_zero_adjoint_at_its_cut():
    # the adjoint there is s0 + s1 + s2 - 1 as written: zero only by softmax's definition
    view = _view("x: R^3\nexplain backward(log(softmax(x - sg(max(x)))[0]), x)")
    text = to_plain(view)
    assert "arriving: v̄3 = -v̄4 = 0" in text and "adding 0 to the gradient" in text
    [cut] = to_json(view)["cuts"]
    assert (cut["adjoint"], cut["adds"], cut["verdict"]) == ("0", [], "neutral")


def test_a_blocking_cut_says_what_it_would_have_added():
    view = _view(PROGRAM)
    text = to_plain(view)
    assert "v̄4 = v3*v̄5" in text and "arriving: v̄4 = v3*v̄5 = x[0]" in text
    assert "would send: v̄4 on to v1 = x[1], adding x[0] to d/dx[1]" in text
    [cut] = to_json(view)["cuts"]
    assert cut["adds"] == [{"variable": "x[1]", "term": "x[0]"}] and cut["verdict"] == "blocking"


@pytest.mark.parametrize("program", [
    PROGRAM,
    "x: R\nexplain backward(x * sg(x), x)",
    "x: R\nexplain backward(x + sg(round(x) - x), x)",
    "x: R^2\nexplain backward(sg(x[0] * x[1]) * x[0] + sg(x[1])^2 * x[1], x)",
    STABLE + "explain backward(log(stable_softmax(x)[1]) * sg(x[0]), x)",
])
def test_the_gradient_and_what_the_cuts_would_add_is_the_true_gradient(program):
    """grad + Σ (terms each cut would have sent on) = the gradient with every stop removed, at random points."""
    view = _view(program)
    xs = [s for s, _ in view.tape.variables]
    true = [sp.diff(unstopped(view.expr), s) for s in xs]
    total = list(view.tape.gradient)
    for cut in view.cuts:
        for variable, term in cut.adds:
            total[xs.index(variable)] += term
    for seed in range(3):
        point = {s: sp.Rational(3 * seed + 2 * i + 1, 4 + i) for i, s in enumerate(xs)}
        for a, b in zip(total, true):
            assert abs(sp.N(unstopped(a - b).xreplace(point), 30)) < 1e-20, (program, seed)


def test_an_irrelevant_cut_receives_nothing():
    view = _view("W: R^(2,2)\ne: R^2\nexplain backward(sum((W @ [1, 2] - sg(e))^2), W)")
    text = to_plain(view)
    # the two stops are one vector row, v3 = sg(v2) with v2 = [e[0], e[1]]: one head in plain text
    assert "v3 = sg(v2) ℝ², one stop per component" in text
    assert text.count("arriving: nothing (no variable reaches the stopped value)") == 1
    assert "irrelevant" in text and not view.toward
    assert [c["verdict"] for c in to_json(view)["cuts"]] == ["irrelevant", "irrelevant"]


def test_every_format_shows_the_cut_rows():
    view = _view(STABLE + "explain backward(log(stable_softmax(x)[0]), x)")
    latex = to_latex(view)
    assert r"\bar{v}_{3} &= - \bar{v}_{4} && \text{arrives at a cut: dropped}" in latex
    assert r"-1 + \sum_{k} s_{k} = 0" in latex and r"$\bar{v}_{3}$ on to $v_{2} = " in latex
    assert r"v_{5} &= v_{1} + v_{4}\,\mathbf{1} && \text{add}\ \mathbf{R}^{3}" in latex
    console = Console(width=100, color_system=None, record=True)
    console.print(to_rich(view))
    shown = console.export_text()
    assert "arrives at a cut: dropped" in shown and "arriving: v̄3 = -v̄4 = −1ᵀ(e₀ − s)" in shown
    assert "v8*v̄9*e₀ + v̄7·1" in shown and "add ℝ³" in shown
    marks = [row.get("mark") for row in to_json(view)["backward"]]
    assert marks.count("arrives at a cut: dropped") == 1 and marks.count("toward a cut") == 1


def test_the_gradient_lines_show_a_shorter_equal_form():
    view = _view(STABLE + "explain backward(log(stable_softmax(x)[0]), x)")
    text = to_plain(view)
    assert "d/dx[1] = v̄1[1] = -exp(x[1])/(exp(x[0]) + exp(x[1]) + exp(x[2]))" in text
    assert all(s is not None for s in view.simplified)
    for raw, simpler in zip(view.tape.gradient, view.simplified):
        xs = sorted(raw.free_symbols | simpler.free_symbols, key=str)
        for seed in range(3):
            point = {s: sp.Rational(2 * seed + i + 1, 3 + i) for i, s in enumerate(xs)}
            assert abs(sp.N(unstopped(raw - simpler).xreplace(point), 30)) < 1e-20
    assert [g.get("simplified") for g in to_json(view)["gradient"]][1] == "-exp(x[1])/(exp(x[0]) + exp(x[1]) + exp(x[2]))"


def test_a_td_cut_states_gamma_delta_and_what_it_would_send():
    program = ("W: R^(2,2)\nq(s) = W @ s\ns1 = [1, 0]; s2 = [0, 1]; r = 1; gamma = 9/10\n"
               "explain backward(1/2 * (r + gamma * sg(max(q(s2))) - q(s1)[0])^2, W)")
    view = _view(program)
    text = to_plain(view)
    assert "arriving: v̄5 = 9*v̄6/10 = δ·∂δ/∂v5 = 9*δ/10   (where q = W[0, 0], y = 9*v5/10 + 1, δ = y − q)" in text
    assert "adding 9*δ/10·∇max(W[0, 1], W[1, 1]) to the gradient" in text
    [cut] = to_json(view)["cuts"]
    assert "v3 = W[:, 1]" in text and "v4 = max(v3)" in text  # the stopped max reads a whole column
    assert cut["form"] == "δ·∂δ/∂v5 = 9*δ/10" and cut["removes"] == "9*δ/10·∇max(W[0, 1], W[1, 1])"
    assert cut["verdict"] == "blocking" and len(cut["adds"]) == 2
