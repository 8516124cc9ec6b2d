"""--full on the command line and :full in the REPL: large values printed whole."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradlang.shell.repl import Repl
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("flags, summarised", [((), True), (("--full",), False)])
def test_full_flag(flags, summarised, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    run = subprocess.run([sys.executable, "-m", "gradlang", "--plain", *flags, "-e", "linspace(0, 1, 1001)"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=SAFETY_NET)
    assert run.returncode == 0, run.stderr
    assert ("# R^1001, summarised" in run.stdout) == summarised
    assert run.stdout.count(", ") == (7 if summarised else 1000)  # the note has one too


def test_repl_full_setting():
    out = io.StringIO()
    repl = Repl(fmt="plain", out=out, err=io.StringIO())
    repl.execute("v = linspace(0, 1, 1001)")
    repl.execute(":full on")
    repl.execute("v")
    repl.execute(":full off")
    repl.execute("v")
    lines = out.getvalue().splitlines()
    assert lines[0] == "full printing: on" and lines[2] == "full printing: off"
    assert "…" not in lines[1] and lines[3].endswith("# R^1001, summarised")
