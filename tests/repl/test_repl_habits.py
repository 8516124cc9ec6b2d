"""The REPL as a Python user meets it: exit, help, piped errors, unclosed brackets, history, :vars, :load."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory

from gradlang.shell.history import file_history
from gradlang.shell.repl import GradlangCompleter, Repl, describe_binding, line_loop
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]


def make_repl(fmt: str = "plain"):
    out, err = io.StringIO(), io.StringIO()
    return Repl(fmt=fmt, out=out, err=err), out, err


@pytest.mark.parametrize("word", ["exit", "quit", "exit()", "quit()"])
def test_exit_and_quit_leave(word):
    repl, out, err = make_repl()
    assert repl.execute(word) is False
    assert out.getvalue() == "" and err.getvalue() == ""


def test_a_user_name_called_exit_is_still_a_name():
    repl, out, _ = make_repl()
    repl.execute("exit = 3")
    assert repl.execute("exit") is True and out.getvalue() == "3\n"


@pytest.mark.parametrize("typed", ["help", "help()"])
def test_help_typed_as_in_python_shows_the_help(typed):
    repl, out, _ = make_repl()
    repl.execute(typed)
    assert "Commands:" in out.getvalue() and "stop_gradient" in out.getvalue()


@pytest.mark.parametrize("typed", ["help(grad)", "?grad", "grad?", "? grad", "help( grad )"])
def test_help_on_one_name_as_in_python(typed):
    repl, out, err = make_repl()
    repl.execute(typed)
    assert out.getvalue().startswith("grad: gradient") and err.getvalue() == ""


def test_a_piped_repl_exits_1_after_an_error_and_goes_on():
    repl, out, _ = make_repl()
    assert line_loop(repl, io.StringIO("1/0\n2 + 2\n")) == 1
    assert out.getvalue() == "4\n"
    repl, _, _ = make_repl()
    assert line_loop(repl, io.StringIO("2 + 2\n")) == 0


def test_an_unclosed_bracket_is_blamed_where_it_opened_and_does_not_swallow_what_follows():
    repl, out, err = make_repl()
    line_loop(repl, io.StringIO("y = (1 + 2\n\nz = 5\nz + 1\n"))
    assert err.getvalue().startswith("<stdin>:1:5: SyntaxError: '(' is never closed")
    assert out.getvalue() == "6\n"


def test_a_command_ends_an_unfinished_statement():
    repl, out, err = make_repl()
    assert line_loop(repl, io.StringIO("v = [1, 2\n:quit\n3\n")) == 1
    assert "'[' is never closed" in err.getvalue() and out.getvalue() == ""


def test_input_that_is_not_utf8_is_reported_and_skipped():
    repl, out, _ = make_repl()
    assert line_loop(repl, io.BytesIO(b"\xef\xbb\xbf1 + 1\n\xff\n2 + 2\n")) == 1
    assert out.getvalue().splitlines() == ["2", "'standard input' is not UTF-8 text (byte 0xFF on line 1)", "4"]


def test_help_wraps_under_its_own_column():
    repl, out, _ = make_repl()
    repl.execute(":help")
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    description = lines[1].index("declare")
    continuation = lines[2]
    assert continuation[:description].strip() == "" and continuation[description] != " "


def test_vars_summarises_long_values():
    repl, out, _ = make_repl()
    repl.execute("W: R^(30,30)\nk = 3\nC = components(W)")
    repl.execute(":vars")
    w, k, c = out.getvalue().splitlines()
    assert w == "W: R^(30,30)"  # a declared matrix: its declaration, as written
    assert len(c) <= 72 and c.startswith("C = [[W[0, 0]") and c.endswith("… (30×30)")
    assert k == "k = 3"
    assert describe_binding("s", 5) == "s = 5"


def test_tab_after_load_completes_file_names(tmp_path, monkeypatch):
    (tmp_path / "lesson.grad").write_text("1\n")
    (tmp_path / "lemma.txt").write_text("1\n")
    monkeypatch.chdir(tmp_path)
    repl, _, _ = make_repl()
    completions = GradlangCompleter(repl).get_completions(Document(":load les"), CompleteEvent(completion_requested=True))
    assert [c.text for c in completions] == ["son.grad"]


def test_load_refuses_devices_directories_and_non_utf8(tmp_path):
    (tmp_path / "latin.grad").write_bytes(b"x = 1 # caf\xe9\n")
    repl, out, _ = make_repl()
    for target in ("/dev/zero", str(tmp_path), str(tmp_path / "latin.grad")):
        repl.execute(f":load {target}")
    lines = out.getvalue().splitlines()
    assert "not a regular file" in lines[0] and "directory" in lines[1] and "not UTF-8" in lines[2]
    assert repl.running and repl.failures == 3


def test_export_of_a_session_with_non_utf8_free_text_does_not_crash(tmp_path):
    repl, out, _ = make_repl()
    line_loop(repl, io.BytesIO(b"f(u) = u^2 # caf\xe9\nf(u) = u^2\n:export numpy\n"))
    assert "def f(u)" in out.getvalue() and repl.running


@pytest.mark.parametrize("where", ["directory", "/proc/version", "/dev/full"])
def test_an_unusable_history_file_falls_back_to_memory_with_a_note(tmp_path, monkeypatch, capsys, where):
    path = {"directory": str(tmp_path)}.get(where, where)
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    monkeypatch.setenv("GRADLANG_HISTORY", path)
    history, note = file_history()
    history.load_history_strings = lambda: iter(())  # (a loaded history is not the point here)
    history.append_string("1 + 1")  # what prompt_toolkit does with a line the user typed
    history.append_string("2 + 2")
    assert list(history.get_strings())[-2:] == ["1 + 1", "2 + 2"]  # kept, in memory
    notes = [text for text in (note, capsys.readouterr().err) if text]
    assert len(notes) == 1 and path in notes[0] and "memory" in notes[0]  # said once


def test_a_usable_history_file_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADLANG_HISTORY", str(tmp_path / "h"))
    history, note = file_history()
    assert note is None and not isinstance(history, InMemoryHistory)


def test_the_repl_starts_and_leaves_with_history_on_dev_full(tmp_path):
    """Under a pseudo-terminal the prompt_toolkit REPL starts; with /dev/full it must not hang."""
    pty = pytest.importorskip("pty")
    code = ("import os, sys, pty\n"
            "pid, fd = pty.fork()\n"
            "if pid == 0:\n"
            "    os.execvp(sys.executable, [sys.executable, '-m', 'gradlang', '--plain'])\n"
            "import time; time.sleep(3); os.write(fd, b'1 + 1\\r'); time.sleep(1); os.write(fd, b'exit\\r')\n"
            "out = b''\n"
            "while True:\n"
            "    try:\n"
            "        chunk = os.read(fd, 4096)\n"
            "    except OSError:\n"
            "        break\n"
            "    if not chunk: break\n"
            "    out += chunk\n"
            "print(os.waitpid(pid, 0)[1]); sys.stdout.write(out.decode('utf-8', 'replace'))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "GRADLANG_HISTORY": "/dev/full", "TERM": "dumb"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=SAFETY_NET)
    status, _, screen = run.stdout.partition("\n")
    assert status == "0", run.stdout + run.stderr
    assert "memory" in screen and "Traceback" not in screen and "2" in screen


# --- a near miss is named -------------------------------------------------------------


@pytest.mark.parametrize("typed, unknown, meant", [("x: R\ndif(x^2, x)", "dif", "diff"),
                                                   ("x: R^3\nsofmax(x)", "sofmax", "softmax"),
                                                   ("square(u) = u^2\nsquare(2) + sqare(3)", "sqare", "square")])
def test_an_unknown_function_near_a_known_one_is_named(typed, unknown, meant):
    repl, _, err = make_repl()
    repl.execute(typed)
    assert f"unknown function '{unknown}' (did you mean '{meant}'?)" in err.getvalue()


def test_an_unknown_function_far_from_every_name_gets_no_guess():
    repl, _, err = make_repl()
    repl.execute("zzyzx(1)")
    assert "unknown function 'zzyzx'" in err.getvalue() and "did you mean" not in err.getvalue()


@pytest.mark.parametrize("topic, meant", [("stop", "stop_gradient"), ("gradd", "grad"), ("jacobain", "jacobian")])
def test_help_on_a_near_miss_names_what_was_meant(topic, meant):
    repl, out, _ = make_repl()
    repl.execute(f":help {topic}")
    assert f"no help for '{topic}' (did you mean '{meant}'?)" in out.getvalue()


@pytest.mark.parametrize("typed, offered", [(":format p", ["pretty", "plain"]), (":format ", ["pretty", "plain", "latex", "json"]),
                                            (":full o", ["on", "off"]), (":export to", ["torch"])])
def test_tab_after_a_command_offers_its_own_words(typed, offered):
    repl, _, _ = make_repl()
    completions = [c.text for c in GradlangCompleter(repl).get_completions(Document(typed), CompleteEvent())]
    assert completions == offered


# --- Ctrl-Z -------------------------------------------------------------------------

_JOB = """
import os, sys, pty, signal
pid, fd = pty.fork()
if pid == 0:  # the shell's side: the REPL as a foreground job of its own, watched for a stop
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)
        os.execvp(sys.executable, [sys.executable, '-m', 'gradlang', '--plain'])
    os.setpgid(child, child)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, child)
    _, status = os.waitpid(child, os.WUNTRACED)
    os.write(1, b'\\nSTOPPED\\n' if os.WIFSTOPPED(status) else b'\\nRAN ON\\n')
    if os.WIFSTOPPED(status):
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    os._exit(0)
screen = b''
while b'gradlang>' not in screen:  # drawn once the terminal is in raw mode, where ^Z is a key
    chunk = os.read(fd, 4096)
    if b'\\x1b[6n' in chunk:
        os.write(fd, b'\\x1b[1;1R')  # answer the cursor position request as a terminal does
    screen += chunk
os.write(fd, b'\\x1a\\rexit\\r')  # Ctrl-Z; if it does not suspend, the REPL reads on and leaves
while b'STOPPED' not in screen and b'RAN ON' not in screen:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    screen += chunk
os.waitpid(pid, 0)
print('STOPPED' if b'STOPPED' in screen else 'RAN ON')
"""


def test_ctrl_z_at_the_prompt_suspends_the_repl_as_python_does(tmp_path):
    pytest.importorskip("pty")
    env = {**os.environ, "PYTHONPATH": str(REPO), "GRADLANG_HISTORY": str(tmp_path / "h"), "TERM": "xterm"}
    run = subprocess.run([sys.executable, "-c", _JOB], capture_output=True, text=True, env=env, timeout=SAFETY_NET)
    assert run.stdout.strip() == "STOPPED", run.stdout + run.stderr
