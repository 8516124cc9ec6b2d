"""The REPL: the shell itself, prompt_toolkit through pipe input, and a subprocess for Ctrl-C."""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradlang.shell.repl import GradlangCompleter, Repl, history_path, is_complete, line_loop, prompt_loop
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]


def make_repl(fmt: str = "plain") -> tuple[Repl, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Repl(fmt=fmt, out=out, err=err), out, err


def drive(repl: Repl, chunks: list[str], history=None, pause: float = 0.0) -> None:
    """Type chunks into the prompt_toolkit REPL through a pipe, then Ctrl-D.

    With a history given, typing waits until prompt_toolkit has loaded it (in a
    background task): an Up arrow that arrived before would find nothing, and
    a fixed pause is too short on a loaded machine.
    """
    with create_pipe_input() as pipe:
        def feed():
            _until_loaded(history)
            for chunk in [*chunks, "\x04"]:
                pipe.send_text(chunk)
                time.sleep(pause)

        feeder = threading.Thread(target=feed)
        feeder.start()
        prompt_loop(repl, input=pipe, output=DummyOutput(), history=history or InMemoryHistory(), show_banner=False)
        feeder.join()


def _until_loaded(history) -> None:
    """Wait until the prompt has loaded every line of `history` (a safety net of minutes if it never does)."""
    if history is None:
        return
    stored = len(list(history.load_history_strings()))
    deadline = time.monotonic() + SAFETY_NET
    while len(history.get_strings()) < stored and time.monotonic() < deadline:
        time.sleep(0.05)


# --- the shell ----------------------------------------------------------------


def test_underscore_is_the_last_result():
    repl, out, _ = make_repl()
    for line in ["x: R^2", "grad(x[0]^2 * x[1], x)", "_ at x = [1, 2]", "_ + [1, 1]"]:
        repl.execute(line)
    assert out.getvalue() == "[2*x[0]*x[1], x[0]^2]\n[4, 1]\n[5, 2]\n"


def test_error_keeps_the_state_of_before_the_line():
    repl, out, err = make_repl()
    repl.execute("a = 1")
    repl.execute("a = 2; b = 3; 1/0")
    repl.execute("a + 10")
    repl.execute("b")
    assert out.getvalue() == "11\nb\n"
    assert err.getvalue().startswith("<stdin>:1:17: ValueError: division by zero\n    a = 2; b = 3; 1/0\n")


def test_an_internal_error_is_reported_as_a_bug_without_traceback(monkeypatch):
    repl, out, err = make_repl()

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(repl.session, "iter_run", broken)
    repl.execute("1")
    assert "InternalError" in err.getvalue() and "bug" in err.getvalue() and "Traceback" not in err.getvalue()
    assert repl.running


def test_help_lists_statements_and_every_builtin():
    from gradlang.core.builtins import TABLE

    repl, out, _ = make_repl()
    repl.execute(":help")
    text = out.getvalue()
    assert "explain expr" in text and ":load FILE" in text
    for name in TABLE:
        assert f"  {name}" in text or f", {name}" in text or f"({name}" in text, name


def test_help_on_one_name():
    repl, out, _ = make_repl()
    repl.execute(":help grad")
    repl.execute(":help sg")
    repl.execute(":help at")
    lines = out.getvalue()
    assert lines.startswith("grad: gradient") and "example: " in lines
    assert "also called: stop_gradient" in lines and "at (keyword)" in lines


def test_vars_reset_and_format():
    repl, out, _ = make_repl()
    repl.execute("x: R^2\nf(v) = sum(v^2)\nk = 3")
    repl.execute(":vars")
    assert out.getvalue() == "x: R^2\nf(v) = sum(v^2)\nk = 3\n"  # a declared vector: its declaration
    repl.execute(":format latex")
    repl.execute("sg(k*t)")
    repl.execute(":format json")
    repl.execute(":format nope")
    repl.execute(":reset")
    repl.execute(":vars")
    tail = out.getvalue().splitlines()[3:]
    assert tail == [
        "output format: latex",
        r"\operatorname{sg}\left(3 t\right)",
        "output format: json",
        "unknown format 'nope': choose one of pretty, plain, latex, json",
        "every definition forgotten",
        "no names defined yet",
    ]


def test_load_runs_a_file_in_the_session(tmp_path):
    (tmp_path / "defs.grad").write_text("sq(u) = u^2\nsq(3)\n", encoding="utf-8")
    repl, out, _ = make_repl()
    repl.execute(f":load {tmp_path / 'defs.grad'}")
    repl.execute("sq(w)")
    repl.execute(":load nowhere.grad")
    assert out.getvalue().splitlines() == ["9", "w^2", "cannot read 'nowhere.grad': No such file or directory"]


@pytest.mark.parametrize("program, first_line", [
    ("t: R\nplot(t^2, t, 0, 1)", "1 ┤"),
    ("x: R\ngradcheck(x^2, x) at x = 2", "gradcheck: the surrogate gradient agrees"),
])
def test_a_chart_or_a_table_is_the_whole_answer(program, first_line):
    """The value of plot (its expressions) or gradcheck (its largest error) is not printed above what shows it."""
    repl, out, _ = make_repl("pretty")
    repl.execute(program)
    assert out.getvalue().lstrip().startswith(first_line), out.getvalue()
    assert repl.session.user_names()["_"] is not None  # the value is still `_`


def test_a_value_computed_from_a_gradcheck_is_still_printed():
    repl, out, _ = make_repl("pretty")
    repl.execute("x: R\n2 * (gradcheck(x^2, x) at x = 2)")
    assert out.getvalue().startswith("9.")


def test_quit_and_unknown_commands():
    repl, out, _ = make_repl()
    assert repl.execute(":nonsense") is True
    assert "unknown command" in out.getvalue()
    assert repl.execute(":quit") is False


def test_continuation_is_decided_by_open_brackets():
    assert is_complete("x + 1") and is_complete(":help (")
    assert not is_complete("f(x,") and not is_complete("[[1, 2],")
    assert is_complete("f(x) # unclosed ( in a comment")


def test_history_path_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADLANG_HISTORY", str(tmp_path / "h"))
    assert history_path() == tmp_path / "h"
    monkeypatch.delenv("GRADLANG_HISTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert history_path() == tmp_path / "gradlang" / "history"


def test_completer_offers_builtins_keywords_user_names_and_commands():
    repl, _, _ = make_repl()
    repl.execute("learning_rate = 0.1")
    completer = GradlangCompleter(repl)

    def complete(text):
        return [c.text for c in completer.get_completions(Document(text), None)]

    assert "stop_gradient" in complete("sto")
    assert "learning_rate" in complete("2 * lear")
    assert "explain" in complete("expl")
    assert complete(":he") == [":help"]
    assert complete("x + :") == []


# --- prompt_toolkit through a pipe ---------------------------------------------


def test_prompt_loop_continuation_underscore_and_errors():
    repl, out, err = make_repl()
    drive(repl, ["x: R^2\r", "grad(x[0] * sg(x[1]),\r", "     x)\r", "1/0\r", "_ at x = [3, 4]\r"])
    assert out.getvalue() == "[stop_gradient(x[1]), 0]\n[4, 0]\n"
    assert "ValueError" in err.getvalue()


def test_prompt_loop_tab_completion():
    repl, out, _ = make_repl()
    drive(repl, ["myvar = 5\r", "myv", "\t", " + stop_gr", "\t", "(t)\r"], pause=0.3)
    assert out.getvalue() == "stop_gradient(t) + 5\n"


def test_history_is_kept_across_sessions(tmp_path):
    path = tmp_path / "history"
    first, _, _ = make_repl()
    drive(first, ["a: R\r", "diff(a^2, a)\r"], history=FileHistory(str(path)))
    second, out, _ = make_repl()
    # Up arrow twice recalls the first session's lines.
    drive(second, ["\x1b[A\x1b[A\r", "\x1b[A\x1b[A\r"], history=FileHistory(str(path)), pause=0.2)
    assert "diff(a^2, a)" in path.read_text(encoding="utf-8")
    assert out.getvalue() == "2*a\n"


def test_ctrl_c_at_the_prompt_discards_the_line():
    repl, out, _ = make_repl()
    drive(repl, ["1 + \x03", "2 + 2\r"], pause=0.2)
    assert out.getvalue() == "4\n"


@pytest.mark.parametrize("chunks", [
    ["1+" * 60 + "1\r"],                    # read in one go
    ["1+" * 30, "1+" * 30 + "1", "\r"],     # the Enter read after the dropped keys
])
def test_a_line_typed_beyond_the_limit_is_dropped_whole_and_the_repl_goes_on(monkeypatch, chunks):
    # issue 29, row 20: a 1 MB line typed key by key never came back (prompt_toolkit redraws per key)
    monkeypatch.setattr("gradlang.limits.MAX_TYPED_CHARS", 100)
    repl, out, err = make_repl()
    drive(repl, [*chunks, "2 + 2\r"], pause=0.2)
    assert out.getvalue() == "4\n"
    assert "LimitError: a line typed at the prompt holds at most 100 characters" in err.getvalue()
    assert repl.failures == 1


def test_a_line_typed_within_the_limit_runs(monkeypatch):
    monkeypatch.setattr("gradlang.limits.MAX_TYPED_CHARS", 100)
    repl, out, _ = make_repl()
    drive(repl, ["1+" * 49 + "1\r"])
    assert out.getvalue() == "50\n"


# --- a subprocess: piped standard input and Ctrl-C -------------------------------


def _spawn(tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "gradlang", "--plain"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )


def test_ctrl_c_interrupts_a_long_computation_and_keeps_state(tmp_path):
    """Ctrl-C lands once `k` is printed: the REPL is then running the expansion after it on that line."""
    proc = _spawn(tmp_path)
    proc.stdin.write("k = 7\n")
    proc.stdin.write("k; expand((a + b + c + d + e + f + g)^18)\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], SAFETY_NET)
    assert ready and proc.stdout.readline() == "7\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate("k + 1\n", timeout=SAFETY_NET)
    assert proc.returncode == 0
    assert "interrupted" in out and out.rstrip().endswith("8")
    assert "Traceback" not in err


def test_line_loop_reads_statements_across_lines():
    repl, out, _ = make_repl()
    line_loop(repl, io.StringIO("v = [1,\n  2,\n  3]\nsum(v)\n:quit\nnot run\n"))
    assert out.getvalue() == "6\n"


@pytest.mark.parametrize("fmt", ["pretty", "plain", "latex", "json"])
def test_every_format_works_in_the_repl(fmt):
    repl, out, _ = make_repl(fmt)
    repl.execute("t*sg(t)")
    assert out.getvalue().strip()
