"""The command line through subprocesses: every flag, format, exit status and the caret errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """\
x: R^2
diff(x[0] * stop_gradient(x[1])^2, x[0])
grad(x[0] * x[1], x) at x = [2, 3]
1/0
never(printed)
"""


def gradlang(*args, stdin: str = "", cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "80", **(env or {})}
    environment.pop("GRADLANG_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "gradlang", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=SAFETY_NET,
    )


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "prog.grad").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "ok.grad").write_text("a: R\ndiff(a^3, a) at a = 2\nsg(a) * a\n", encoding="utf-8")
    return tmp_path


def test_script_prints_results_then_the_error_with_a_caret(tmp):
    run = gradlang("--plain", "prog.grad", cwd=tmp)
    assert run.returncode == 1
    assert run.stdout == "stop_gradient(x[1])^2\n[3, 2]\n"
    assert run.stderr.splitlines()[:3] == [
        "prog.grad:4:3: ValueError: division by zero",
        "    1/0",
        "      ^",
    ]
    assert "Traceback" not in run.stderr


def test_plain_is_the_default_when_not_a_terminal(tmp):
    assert gradlang("ok.grad", cwd=tmp).stdout == "12\na*stop_gradient(a)\n"


def test_success_exits_zero(tmp):
    run = gradlang("ok.grad", cwd=tmp)
    assert run.returncode == 0 and run.stderr == ""


def test_dash_reads_standard_input(tmp):
    run = gradlang("--plain", "-", stdin="diff(t^2, t)\n", cwd=tmp)
    assert (run.returncode, run.stdout) == (0, "2*t\n")


def test_dash_e_runs_one_line(tmp):
    run = gradlang("-e", "x: R^3; grad(max(x), x) at x = [1, 3, 3]", cwd=tmp)
    assert (run.returncode, run.stdout) == (0, "[0, 1/2, 1/2]\n")


def test_dash_e_error_names_the_place(tmp):
    run = gradlang("-e", "diff(x, x^2)", cwd=tmp)
    assert run.returncode == 1
    first = run.stderr.splitlines()[0]
    assert first.startswith("<-e>:1:9: DiffError:")
    assert run.stderr.splitlines()[2] == "            ^^^"


def test_syntax_error_caret(tmp):
    run = gradlang("-e", "x + * 2", cwd=tmp)
    lines = run.stderr.splitlines()
    assert run.returncode == 1 and "SyntaxError" in lines[0]
    assert lines[1:] == ["    x + * 2", "        ^"]


def test_error_on_a_continued_line_points_at_that_line(tmp):
    (tmp / "multi.grad").write_text("[1,\n 2,\n foo(3)]\n", encoding="utf-8")
    run = gradlang("multi.grad", cwd=tmp)
    assert run.returncode == 1
    assert run.stderr.startswith("multi.grad:3:2: NameError")
    assert run.stderr.splitlines()[1] == "     foo(3)]"


def test_json_lines_keys_and_error_object(tmp):
    run = gradlang("--json", "prog.grad", cwd=tmp)
    assert run.returncode == 1
    objects = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(objects) == 3
    first, second, error = objects
    assert {"line", "source", "kind", "text", "latex", "value"} <= set(first)
    assert first["line"] == 2 and first["kind"] == "value" and first["value"] is None
    assert first["latex"] == r"\operatorname{sg}\left(x_{1}\right)^{2}"
    assert second["value"] == [3.0, 2.0] and second["text"] == "[3, 2]"
    assert error == {"kind": "error", "error": "ValueError", "message": "division by zero", "line": 4, "column": 3}
    assert "prog.grad:4:3" in run.stderr


def test_json_special_floats_are_strings(tmp):
    run = gradlang("--json", "-e", "[inf, -inf, nan, 0.5]", cwd=tmp)
    assert json.loads(run.stdout)["value"] == ["inf", "-inf", "nan", 0.5]


def test_json_explain_has_steps(tmp):
    run = gradlang("--json", "-e", "explain diff(t * stop_gradient(t), t)", cwd=tmp)
    data = json.loads(run.stdout)
    assert data["kind"] == "explain" and data["text"] == "stop_gradient(t)"
    assert {"rule", "expr", "result", "substeps"} <= set(data["steps"][0])


def test_latex_script_is_a_fragment(tmp):
    run = gradlang("--latex", "ok.grad", cwd=tmp)
    assert run.returncode == 0
    assert "% line 3:\n% sg(a) * a\n\\[\na \\operatorname{sg}\\left(a\\right)\n\\]\n" in run.stdout


def test_latex_one_line(tmp):
    assert gradlang("--latex", "-e", "x: R^2; x[0]*sg(x[1])", cwd=tmp).stdout == "x_{0} \\operatorname{sg}\\left(x_{1}\\right)\n"


def test_pretty_transcript_without_colour(tmp):
    run = gradlang("--pretty", "ok.grad", cwd=tmp)
    assert run.returncode == 0
    assert run.stdout == "2 ┃ diff(a^3, a) at a = 2\n  → 12\n\n3 ┃ sg(a) * a\n  → a⋅sg(a)\n"
    assert "\x1b[" not in run.stdout


def test_pretty_with_colour_on_a_forced_terminal(tmp):
    run = gradlang("--pretty", "-e", "a*sg(a)", cwd=tmp, env={"NO_COLOR": "", "FORCE_COLOR": "1"})
    assert "\x1b[" in run.stdout and "sg" in run.stdout


def test_formats_are_mutually_exclusive(tmp):
    run = gradlang("--json", "--latex", "ok.grad", cwd=tmp)
    assert run.returncode == 2 and "not allowed with" in run.stderr


@pytest.mark.parametrize(
    "args",
    [("--bogus",), ("ok.grad", "-e", "1"), ("-e",), ("missing.grad",), ("-i", "missing.grad")],
)
def test_usage_errors_exit_two(tmp, args):
    run = gradlang(*args, cwd=tmp)
    assert run.returncode == 2 and "usage:" in run.stderr and "Traceback" not in run.stderr


def test_version(tmp):
    from gradlang import __version__

    run = gradlang("--version", cwd=tmp)
    assert (run.returncode, run.stdout.strip()) == (0, f"gradlang {__version__}")


def test_help_has_examples(tmp):
    run = gradlang("--help", cwd=tmp)
    assert run.returncode == 0
    for text in ("examples:", "gradlang -e", "--json", "--latex", "-i FILE", "exit status"):
        assert text in run.stdout


def test_dash_i_runs_the_script_then_the_repl(tmp):
    run = gradlang("--plain", "-i", "ok.grad", stdin="diff(a^2, a)\n_ + 1\n", cwd=tmp)
    assert run.returncode == 0
    assert run.stdout == "12\na*stop_gradient(a)\n2*a\n2*a + 1\n"


def test_no_arguments_with_piped_input_is_the_repl(tmp):
    run = gradlang(stdin="y = 2\n1/0\ny^3\n", cwd=tmp)
    assert run.returncode == 1  # the REPL goes on after an error, but a script must be able to tell
    assert run.stdout == "8\n"
    assert "ValueError: division by zero" in run.stderr


def test_piped_repl_without_errors_exits_0(tmp):
    assert gradlang(stdin="y = 2\ny^3\n", cwd=tmp).returncode == 0


def test_warnings_go_to_standard_error(tmp):
    run = gradlang("-e", "diff(max(t, 0), t) at t = 0", cwd=tmp)
    assert run.returncode == 0 and run.stdout == "1/2\n"
    assert run.stderr.startswith("<-e>:1: warning: max(t, 0) has a tie")
    data = json.loads(gradlang("--json", "-e", "diff(max(t, 0), t) at t = 0", cwd=tmp).stdout)
    assert len(data["warnings"]) == 1 and "tie" in data["warnings"][0]


def test_no_traceback_for_an_unreadable_file(tmp):
    (tmp / "bad.grad").write_bytes(b"\xff\xfe\x00bad")
    run = gradlang("bad.grad", cwd=tmp)
    assert run.returncode == 2 and "Traceback" not in run.stderr
