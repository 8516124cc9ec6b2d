"""Output holes found by probing (issue 29): closed and failing streams, invisible characters, --json, -e, --plot-dir.

Closed streams are made as a shell makes them (`>&-`): the child's descriptor
is closed before gradlang starts, so Python gives it `sys.stdout = None`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest
from test_cli import REPO, gradlang  # pytest puts this folder on sys.path (no __init__.py here)

from gradlang.render.messages import safe_text
from tests.safety import SAFETY_NET


def closed(*fds: int):
    """A preexec_fn closing the child's descriptors (0 stdin, 1 stdout, 2 stderr), as `>&-` does."""
    return lambda: [os.close(fd) for fd in fds]


def run(args, tmp_path, close=(), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    environment.pop("GRADLANG_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "gradlang", *args], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, cwd=tmp_path, env=environment, timeout=SAFETY_NET,
                          preexec_fn=closed(*close), text=True)


def one_line_without_traceback(stderr: str, words: str) -> None:
    assert stderr.count("\n") == 1 and words in stderr, stderr
    assert "Traceback" not in stderr and "InternalError" not in stderr


# --- row 15: standard streams closed or failing -----------------------------------------------


@pytest.mark.parametrize("args", [["-e", "1+1"], ["--json", "-e", "1+1"], ["--export", "numpy", "-e", "f(x) = x"],
                                  ["--version"]])
def test_closed_standard_output_is_one_line_and_exit_1(args, tmp_path):
    result = run(args, tmp_path, close=[1], stdout=None)
    assert result.returncode == 1
    one_line_without_traceback(result.stderr, "standard output is closed")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--plain", "-e", "1+1"], ["--pretty", "-e", "1+1"], ["--json", "-e", "1+1"],
                                  ["--latex", "-e", "1+1"], ["--export", "jax", "-e", "f(x) = x"], ["--plain", "-"]])
def test_a_full_disk_is_one_line_and_exit_1(args, tmp_path):
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    with open("/dev/full", "w") as full:  # `gradlang … > /dev/full`; `-` reads the program below
        result = subprocess.run([sys.executable, "-m", "gradlang", *args], input="1 + 1\n", stdout=full,
                                stderr=subprocess.PIPE, cwd=tmp_path, env=environment, timeout=SAFETY_NET, text=True)
    assert result.returncode == 1
    one_line_without_traceback(result.stderr, "cannot write standard output: No space left on device")


def test_a_reader_that_goes_away_is_a_quiet_end_not_a_bug(tmp_path):
    program = "x = linspace(0, 1, 20000); x; x; x; x; x"  # far more than a pipe holds
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    child = subprocess.Popen([sys.executable, "-m", "gradlang", "--json", "--full", "-e", program], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
    assert child.stdout.read(10) == b'{"line": 1'
    child.stdout.close()  # `| head -c 10`
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=SAFETY_NET) == 0
    assert stderr == ""


def test_closed_standard_input_is_said_for_the_repl_and_for_dash(tmp_path):
    repl = run([], tmp_path, close=[0], stdin=None)
    assert repl.returncode == 1
    one_line_without_traceback(repl.stderr, "standard input is closed")
    dash = run(["-"], tmp_path, close=[0], stdin=None)
    assert dash.returncode == 2 and "cannot read standard input: it is closed" in dash.stderr
    assert "Traceback" not in dash.stderr


def test_closed_standard_error_still_exits_1_on_an_error(tmp_path):
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "gradlang", "-e", "1; 1/0"], stdout=subprocess.PIPE,
                            stderr=None, cwd=tmp_path, env=environment, timeout=SAFETY_NET, preexec_fn=closed(2), text=True)
    assert (result.returncode, result.stdout) == (1, "1\n")


# --- row 17: invisible characters that act on a terminal -------------------------------------------


@pytest.mark.parametrize("char, name", [("\u202e", "RIGHT-TO-LEFT OVERRIDE"), ("\u200d", "ZERO WIDTH JOINER"),
                                        ("\u2066", "LEFT-TO-RIGHT ISOLATE"), ("\ufeff", "ZERO WIDTH NO-BREAK SPACE")])
def test_format_characters_in_a_name_are_named_and_escaped(char, name, tmp_path):
    result = gradlang("-e", f"ab{char}cd = 1", cwd=tmp_path)
    assert result.returncode == 1 and char not in result.stderr + result.stdout
    message, line, caret = result.stderr.splitlines()[:3]
    assert message == f"<-e>:1:3: SyntaxError: unexpected character U+{ord(char):04X} ({name})"
    assert line == "    ab\ufffdcd = 1" and caret.index("^") == line.index("\ufffd")


def test_format_characters_in_a_transcript_are_escaped(tmp_path):
    (tmp_path / "t.grad").write_text("1 + 1 # \u202eevil\u200d\n", encoding="utf-8")
    for flag in ("--pretty", "--latex"):
        result = gradlang(flag, "t.grad", cwd=tmp_path)
        assert result.returncode == 0 and "\u202e" not in result.stdout and "\u200d" not in result.stdout


def test_every_format_character_is_made_visible():
    """The hard-coded ranges of render/messages.py cover Unicode's Cf category as this Python knows it."""
    missed = [hex(code) for code in range(0x110000)
              if unicodedata.category(chr(code)) == "Cf" and safe_text(chr(code)) == chr(code)]
    assert missed == []


# --- row 18: --json, several -e, --plot-dir ---------------------------------------------------------


def test_json_says_an_unreadable_file_as_a_json_error(tmp_path):
    result = gradlang("--json", "missing.grad", cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stdout.splitlines()
    assert json.loads(line) == {"kind": "error", "error": "UsageError", "line": None, "column": None,
                                "message": "cannot read 'missing.grad': No such file or directory"}
    assert "cannot read 'missing.grad'" in result.stderr


def test_json_says_any_usage_error_as_a_json_error(tmp_path):
    result = gradlang("--json", "-e", "1", "--export", "cobol", cwd=tmp_path)
    assert result.returncode == 2 and json.loads(result.stdout)["error"] == "UsageError"


def test_several_dash_e_run_in_order_as_lines_of_one_program(tmp_path):
    result = gradlang("--plain", "-e", "x = 2; x", "-e", "x + 1", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "2\n3\n")
    error = gradlang("--plain", "-e", "1", "-e", "1/0", cwd=tmp_path)
    assert error.returncode == 1 and error.stdout == "1\n"
    assert error.stderr.startswith("<-e>:2:3: ValueError: division by zero\n    1/0\n      ^")


def test_plot_dir_naming_a_file_is_an_error_before_the_program_runs(tmp_path):
    (tmp_path / "afile").write_text("keep\n", encoding="utf-8")
    result = gradlang("--plain", "--plot-dir", "afile", "-e", "1 + 1", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "gradlang: --plot-dir 'afile' is not a directory\n"
    as_json = gradlang("--json", "--plot-dir", "afile", "-e", "1 + 1", cwd=tmp_path)
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["message"] == "--plot-dir 'afile' is not a directory"
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "keep\n"
