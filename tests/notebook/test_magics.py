"""The IPython extension driven through a real InteractiveShell: magics, shared session, rich reprs."""

from __future__ import annotations

import io
import sys

import pytest

pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import gradlang  # noqa: E402
from gradlang import Session
from gradlang.shell import notebook

# gradlang/__init__.py forwards load_ipython_extension to gradlang.notebook.
EXTENSION = "gradlang"


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", EXTENSION)
    return ip


@pytest.fixture(autouse=True)
def fresh(shell):
    notebook.reset_session(shell)


def run(shell, cell: str):
    """Run a cell that succeeds; the display bundles it produced and what it wrote to stderr."""
    with capture_output() as captured:
        outcome = shell.run_cell(cell)
    assert outcome.success, outcome.error_in_exec
    return [output.data for output in captured.outputs], captured.stderr


def run_failing(shell, cell: str):
    """Run a cell that must fail as IPython counts failure; its bundles and the error text shown."""
    with capture_output() as captured:
        outcome = shell.run_cell(cell)
    assert not outcome.success, "a failing %%gradlang cell must fail for IPython, so run-all stops"
    assert isinstance(outcome.error_in_exec, notebook.CellError)
    shown = captured.stdout + captured.stderr
    assert "Traceback" not in shown and str(outcome.error_in_exec) in shown  # rendered by _render_traceback_
    return [output.data for output in captured.outputs], str(outcome.error_in_exec)


def test_a_cell_shows_its_value_as_latex_with_sg_for_stops(shell):
    outputs, err = run(shell, "%%gradlang\nx: R\ndiff(x * stop_gradient(x), x)\n")
    assert err == ""
    assert outputs == [{"text/plain": "stop_gradient(x)", "text/latex": r"$\displaystyle \operatorname{sg}\left(x\right)$"}]


def test_one_bundle_per_printing_statement_in_order(shell):
    outputs, _ = run(shell, "%%gradlang\ny = 2\ny^2\n[1, y]\ndiff(t^3, t)\n")
    assert [o["text/plain"] for o in outputs] == ["4", "[1, 2]", "3*t^2"]
    assert all(o["text/latex"].startswith(r"$\displaystyle ") for o in outputs)


def test_cells_share_one_session(shell):
    run(shell, "%%gradlang\nx: R^3\nstable(v) = exp(v - sg(max(v))) / sum(exp(v - sg(max(v))))\n")
    outputs, err = run(shell, "%%gradlang\ngrad(log(stable(x)[0]), x) at x = [1, 2, 3]\n")
    assert err == "" and len(outputs) == 1
    assert outputs[0]["text/plain"].startswith("[")
    assert notebook.session_for(shell) is notebook.session_for(shell)


def test_the_line_magic_runs_in_the_same_session(shell):
    run(shell, "%%gradlang\nf(u) = u * sg(u)\n")
    outputs, _ = run(shell, "%gradlang diff(f(z), z)")
    assert outputs[0]["text/plain"] == "stop_gradient(z)"
    assert r"\operatorname{sg}" in outputs[0]["text/latex"]


def test_explain_shows_the_derivation_as_aligned_mathematics_before_the_value(shell):
    outputs, _ = run(shell, "%%gradlang\nexplain diff(a * stop_gradient(b), b)\n")
    derivation, value = outputs
    assert derivation["text/latex"].startswith(r"$$\begin{aligned}") and derivation["text/latex"].endswith(r"\end{aligned}$$")
    assert r"\operatorname{sg}" in derivation["text/latex"] and "stop_gradient" in derivation["text/plain"]
    assert value["text/plain"] == "0"


def test_a_plot_is_shown_as_a_png_with_the_text_chart_beside_it(shell):
    matplotlib_image = pytest.importorskip("matplotlib.image")
    outputs, _ = run(shell, "%%gradlang\nplot(relu(t), diff(relu(t), t), t, -2, 2)\n")
    value, figure = outputs
    assert r"\operatorname{relu}" in value["text/latex"]
    assert set(figure) == {"text/plain", "image/png"}
    pixels = matplotlib_image.imread(io.BytesIO(figure["image/png"]), format="png")
    assert pixels.shape[:2] == (500, 800) and (pixels[..., :3].min(axis=2) < 0.9).mean() > 0.01
    assert "└" in figure["text/plain"] and "diff(relu(t), t)" in figure["text/plain"]


def test_without_matplotlib_a_plot_falls_back_to_the_chart_and_says_how_to_install(shell, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    outputs, err = run(shell, "%%gradlang\nplot(t^2, t, -1, 1)\n")
    figure = outputs[-1]
    assert "image/png" not in figure and err == ""
    assert "pip install matplotlib" in figure["text/markdown"] and "```" in figure["text/markdown"]


def test_warnings_are_shown_after_the_value(shell):
    outputs, _ = run(shell, "%%gradlang\ndiff(max(t, 0), t) at t = 0\n")
    assert outputs[0]["text/plain"] == "1/2"
    assert outputs[1]["text/plain"].startswith("warning: ") and "**warning:**" in outputs[1]["text/markdown"]


def test_an_error_is_printed_with_a_caret_and_no_traceback_and_earlier_results_stay(shell):
    outputs, err = run_failing(shell, "%%gradlang\nk = 5\nk + 1\nk + [1, 2] @ [1, 2, 3]\nk + 2\n")
    assert [o["text/plain"] for o in outputs] == ["6"]
    assert err.startswith("<cell>:4:") and "ShapeError" in err
    assert "    k + [1, 2] @ [1, 2, 3]\n" in err and "^" in err and "Traceback" not in err


def test_a_syntax_error_runs_nothing_of_the_cell(shell):
    outputs, err = run_failing(shell, "%%gradlang\nk = 5\nk + 1\nk +* 2\n")
    assert outputs == [] and err.startswith("<cell>:4:") and "SyntaxError" in err and "Traceback" not in err


def test_a_failing_statement_leaves_the_bindings_as_they_were(shell):
    run(shell, "%%gradlang\nw = 3\n")
    _, err = run_failing(shell, "%%gradlang\nw = [1, 2] + [1, 2, 3]\n")
    assert "ShapeError" in err
    outputs, _ = run(shell, "%gradlang w")
    assert outputs[0]["text/plain"] == "3"


def test_reset_starts_a_fresh_session(shell):
    run(shell, "%%gradlang\nq = 7\n")
    outputs, _ = run(shell, "%%gradlang --reset\nq\n")
    assert outputs[0]["text/plain"] == "q"


def test_an_unknown_cell_option_is_reported(shell):
    outputs, err = run_failing(shell, "%%gradlang --fast\n1 + 1\n")
    assert outputs == [] and "--reset" in err and "--fast" in err


def test_a_failing_line_magic_fails_too(shell):
    _, err = run_failing(shell, "%gradlang 1/0")
    assert "ValueError: division by zero" in err


def test_an_internal_error_names_the_maintainers_and_debug_shows_the_traceback(shell, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(notebook.session_for(shell), "iter_run", broken)
    _, err = run_failing(shell, "%gradlang 1")
    assert "InternalError" in err and "report it to the maintainers" in err and "Traceback" not in err
    monkeypatch.setenv("GRADLANG_DEBUG", "1")
    with capture_output():
        outcome = shell.run_cell("%gradlang 1")
    assert "Traceback" in str(outcome.error_in_exec) and "RuntimeError: boom" in str(outcome.error_in_exec)


def test_results_of_the_python_api_display_as_latex(shell):
    shell.run_cell("from gradlang import Session as _S; _s = _S()")
    result = shell.run_cell("_s.run('x * sg(x)')[0]").result
    bundle, _ = shell.display_formatter.format(result)
    assert bundle["text/latex"] == r"$\displaystyle x \operatorname{sg}\left(x\right)$"
    assert bundle["text/plain"] == "x*stop_gradient(x)"
    value = shell.run_cell("_s.eval('[sg(y), max(y, 1)]')").result
    bundle, _ = shell.display_formatter.format(value)
    assert r"\operatorname{sg}\left(y\right)" in bundle["text/latex"] and r"\max" in bundle["text/latex"]


def test_result_repr_latex_without_ipython():
    (result,) = Session().run("diff(x * sg(x), x)")
    assert result._repr_latex_() == r"$\displaystyle \operatorname{sg}\left(x\right)$"


def test_an_assignment_shows_its_warnings_and_no_value(shell):
    # issue #37: `g = grad(los, x)` (los a typo of loss) printed nothing and said nothing
    outputs, _ = run(shell, "%%gradlang\nloss = 1\nx: R^3\ng = grad(los, x)\n")
    (warning,) = outputs
    assert "did you mean 'loss'?" in str(warning)
