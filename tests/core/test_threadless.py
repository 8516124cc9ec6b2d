"""gradlang as the browser page runs it (docs/web.md): no thread can start, NumPy cannot be imported.

Each case runs in a fresh interpreter where `threading.Thread.start` raises as
Pyodide's does and `import numpy` fails, so the budget's traced path and
expr/pure_numeric.py are what compute, on the normal machine.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BROWSER_LIKE = """
import json, sys, threading
sys.modules["numpy"] = None  # import numpy -> ImportError, as in the page
def _no_thread(self):
    raise RuntimeError("can't start new thread")
threading.Thread.start = _no_thread
from gradlang import LimitError, Session
from gradlang.render.json import dumps, to_json
"""


def _run(body: str) -> str:
    done = subprocess.run([sys.executable, "-c", BROWSER_LIKE + body], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_budget_without_threads_stops_a_long_statement_as_a_limit_error():
    out = _run("""
session = Session(time_limit=0.5)
try:
    session.eval("x: R\\nsimplify(diff(exp(sin(x)^40 * cos(x)^40 * tanh(x)^30), x, x, x, x, x, x))")
    print("finished")
except LimitError as error:
    print("LimitError", error)
assert "numpy" not in sys.modules or sys.modules["numpy"] is None
print("threads:", threading.active_count())
""")
    assert out.startswith("LimitError"), out
    assert "threads: 1" in out  # no watchdog was started


def test_a_budget_without_threads_lets_a_quick_statement_finish():
    out = _run("""
print(Session(time_limit=60).eval("x: R\\ndiff(x * stop_gradient(x), x)"))
""")
    assert out.strip() == "stop_gradient(x)"


def test_size_limits_hold_without_threads():
    out = _run("""
try:
    Session().eval("x: R^100001")
except LimitError as error:
    print("LimitError", error)
""")
    assert out.startswith("LimitError"), out


@pytest.mark.parametrize("example", ["stable_softmax", "adversarial_training", "em_gaussian_mixture", "vq_vae"])
def test_numbers_without_numpy_are_numpys_numbers(example):
    """Pure-Python floats give the same results; a float may differ from NumPy's in its last bits,
    because NumPy's exp and log are its own vectorised ones, not the C library's."""
    source = (ROOT / "examples" / f"{example}.grad").read_text()
    out = _run(f"""
for result in Session().iter_run({source!r}):
    print(dumps(to_json(result)))
""")
    expected = subprocess.run([sys.executable, "-m", "gradlang", "--json", f"examples/{example}.grad"],
                              capture_output=True, text=True, timeout=600, cwd=ROOT).stdout
    got, want = [json.loads(line) for line in out.splitlines()], [json.loads(line) for line in expected.splitlines()]
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert same_result(g, w), (g, w)


def same_result(got, want, ulps: int = 8) -> bool:
    """Equal JSON, floats to within a few units in the last place (values, and numbers in text)."""
    if isinstance(got, float) and isinstance(want, float):
        return got == want or math.isclose(got, want, rel_tol=ulps * 2.0**-52, abs_tol=1e-300)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(same_result(g, w, ulps) for g, w in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(same_result(got[k], want[k], ulps) for k in got)
    if isinstance(got, str) and isinstance(want, str) and got != want:
        return _same_numbers_in_text(got, want, ulps)
    return got == want


def _same_numbers_in_text(got: str, want: str, ulps: int) -> bool:
    import re

    number = r"-?\d+\.\d+(?:e-?\d+)?"
    if re.sub(number, "#", got) != re.sub(number, "#", want):
        return False
    return all(same_result(float(g), float(w), ulps) for g, w in zip(re.findall(number, got), re.findall(number, want)))
