"""The command ends without the interpreter's last garbage collection over SymPy's objects (issue #41).

`gradlang` and `python -m gradlang` call shell/command.py: main, then gc.freeze(), so the collection the interpreter
runs as it exits does not walk every object SymPy made at import (a quarter of `import sympy`'s whole process).
`main`, which tests and other programs call in a process that goes on, must leave the collector as it was."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAFETY_NET = 300  # seconds: a safety net for a loaded machine, not a timing assertion

PROBE = """
import gc, sys
from gradlang.shell import cli, command
sys.argv = ["gradlang", "--plain", "-e", "1 + 1"]
status = {entry}()
print(status, gc.get_freeze_count() > 0, gc.isenabled())
"""


def _run(entry: str) -> list:
    done = subprocess.run([sys.executable, "-c", PROBE.format(entry=entry)], capture_output=True, text=True,
                          timeout=SAFETY_NET, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_the_command_freezes_what_is_alive_before_the_process_exits():
    assert _run("command.command") == ["2", "0 True True"]


def test_main_called_in_a_process_that_goes_on_freezes_nothing():
    assert _run("cli.main") == ["2", "0 False True"]


def test_the_installed_command_and_python_m_gradlang_go_through_command():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["gradlang"] == "gradlang.shell.command:command"
    probe = ("import runpy, gc, sys\nsys.argv = ['gradlang', '--plain', '-e', '1 + 1']\ntry:\n"
             "    runpy.run_module('gradlang', run_name='__main__')\n"
             "except SystemExit as e:\n    print(e.code, gc.get_freeze_count() > 0)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert done.stdout.strip().splitlines() == ["2", "0 True"], done.stderr
