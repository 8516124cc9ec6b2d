"""One printer per format: records print through it, warnings say the convention once, golden files never write themselves."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich
from gradlang.render.emit import Emitter
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]
RECORDS = "x: R^2\nexplain backward(x[0]*sg(x[1]), x)\ngradcheck(x[0]^2 * sg(x[1]), x) at x = [1, 2]\nt: R\nplot(t^2, t, 0, 1)"


@pytest.mark.parametrize("printer", [to_plain, to_latex, to_json, to_rich], ids=lambda p: p.__name__)
def test_every_record_goes_through_the_one_printer_of_each_format(printer):
    results = Session().run(RECORDS)
    records = [record for result in results for record in (*result.steps, *result.attachments)]
    assert {type(r).__name__ for r in records} == {"BackwardView", "GradcheckReport", "Plot"}
    for record in [*records, *results]:
        assert printer(record) is not None


def test_records_carry_no_text_methods():
    results = Session().run(RECORDS)
    for record in [r for result in results for r in (*result.steps, *result.attachments)]:
        assert not [name for name in dir(record) if name.startswith("to_")]


def test_pi_is_pi_in_latex():
    assert to_latex(sp.pi) == r"\pi" and to_latex(2 * sp.pi * sp.Symbol("x")) == r"2 \pi x"


def test_the_convention_paragraph_is_said_once_per_run_and_lines_are_wrapped():
    err = io.StringIO()
    emitter = Emitter("plain", io.StringIO(), err)
    for result in Session().iter_run("t: R\nrelu(t) at t = 0\nrelu(2*t) at t = 0\nsign(t) at t = 0"):
        emitter.result(result)
    text = err.getvalue()
    assert text.count("tf.nn.relu") == 1 and text.count("sign at a jump:") == 1
    assert text.count("warning: ") == 3 and "(docs/language.md," in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_missing_golden_file_fails(tmp_path):
    test = tmp_path / "test_missing.py"
    test.write_text(
        "import sys\nsys.path.insert(0, %r)\nimport golden_util\n"
        "golden_util.GOLDEN = __import__('pathlib').Path(%r)\n"
        "def test_it():\n    golden_util.check_golden('absent.txt', 'text')\n" % (str(Path(__file__).parent), str(tmp_path)),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "GRADLANG_UPDATE_GOLDEN"}
    env["PYTHONPATH"] = str(REPO)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=SAFETY_NET)
    assert run.returncode == 1 and "no golden file" in run.stdout
    assert not (tmp_path / "absent.txt").exists()
