"""Standard output written whole or an error: under `ulimit -f`, --export never ends in a silent truncated module.

Python's unbuffered text stream (PYTHONUNBUFFERED=1, python -u) drops the rest
of a short write without a word: `gradlang --export numpy … > out.py` wrote
1024 bytes and exited 0. The CLI puts a buffer between (shell/cli.py,
_whole_writes), which writes all or fails, and the failure is one line.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]
PROGRAM = "x: R^3; f(x) = sum(x^2)" + " + sum(x^3)" * 400


def _limited():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_export_to_a_file_over_the_size_limit_fails_in_one_line(tmp_path, unbuffered):
    environment = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": unbuffered}
    environment.pop("GRADLANG_DEBUG", None)
    with open(tmp_path / "out.py", "wb") as out:
        run = subprocess.run([sys.executable, "-m", "gradlang", "--export", "numpy", "-e", PROGRAM], stdout=out,
                             stderr=subprocess.PIPE, text=True, env=environment, timeout=SAFETY_NET,
                             preexec_fn=_limited)
    assert run.returncode == 1
    assert run.stderr == "gradlang: cannot write standard output: File too large\n"


def test_output_under_the_limit_is_whole(tmp_path):
    environment = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    with open(tmp_path / "out.txt", "wb") as out:
        run = subprocess.run([sys.executable, "-m", "gradlang", "--plain", "-e", "x: R^3; sum(x); 1 + 1"],
                             stdout=out, stderr=subprocess.PIPE, text=True, env=environment, timeout=SAFETY_NET,
                             preexec_fn=_limited)
    assert run.returncode == 0 and (tmp_path / "out.txt").read_text() == "sum(x)\n2\n"
