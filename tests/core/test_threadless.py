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

from tests.safety import SAFETY_NET

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
                          timeout=SAFETY_NET, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_budget_without_threads_stops_a_long_statement_as_a_limit_error():
    out = _run("""
session = Session(time_limit=0.05)  # the statement takes seconds unbounded: only the budget can stop it sooner
try:
    session.eval("x: R^30\\nhessian(prod(exp(x) + sin(x)), x)")
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


EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.grad"))


@pytest.fixture(scope="module")
def without_numpy() -> dict:
    """Every example's results as JSON objects, computed in one browser-like interpreter."""
    out = _run(f"""
from pathlib import Path
for name in {EXAMPLES!r}:
    for result in Session().iter_run(Path("examples", name + ".grad").read_text()):
        print(json.dumps({{"example": name, "result": to_json(result)}}))
""")
    found: dict = {}
    for line in out.splitlines():
        record = json.loads(line)
        found.setdefault(record["example"], []).append(record["result"])
    return found


@pytest.mark.parametrize("example", EXAMPLES)
def test_numbers_without_numpy_are_numpys_numbers(example, without_numpy):
    """Pure-Python floats give the command's results (the JSON `gradlang --json` prints); a float may
    differ from NumPy's in its last bits, because NumPy's exp, log and power are its own vectorised ones,
    and because the page takes a float point by the formula's components where NumPy takes the whole
    formula (core/at.py): a difference of two near-equal gradients (adversarial_training's blocked part,
    about 4e-4 from terms near 0.4) turns their last bit into some 400 units of its own, so 1e-12."""
    from gradlang import Session
    from gradlang.render.json import to_json

    source = (ROOT / "examples" / f"{example}.grad").read_text()
    want = [json.loads(json.dumps(to_json(r))) for r in Session().iter_run(source)]
    got = without_numpy.get(example, [])
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert same_result(g, w, ulps=4096), (g, w)


def test_lists_of_points_and_linspace_without_numpy():
    out = _run("""
session = Session()
for line in ["t: R", "sigmoid(t) at t = linspace(-2, 2, 5)", "linspace(-1e308, 1e308, 3)",
             "diff(relu(t), t) at t = [-1.0, 0.0, 0.0, 2.0]", "1 / t at t = [0.0, 2.0, -4.0]"]:
    for result in session.iter_run(line):
        print(dumps(to_json(result)))
""")
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["value"] for r in results] == [
        [0.11920292202211755, 0.2689414213699951, 0.5, 0.7310585786300049, 0.8807970779778823],
        [-1e308, 0.0, 1e308],  # as _evenly_spaced: JAX's formula where b - a overflows
        [0.0, 0.0, 0.0, 1.0],
        ["inf", 0.5, -0.25],
    ]
    assert results[2]["warnings"][0].startswith("at 2 of 4 points: relu(t) is at its kink (t = 0)")


@pytest.mark.parametrize("x", [0.0, -0.0, 1.5, -2.5, 1e-300, 710.0, -745.5, 1e308, float("inf"), float("-inf"),
                               float("nan"), -1.0, 2.0])
def test_pure_numeric_keeps_numpys_special_values(x):
    """inf, nan and signed zeros as NumPy's float64 gives them, where Python's math raises."""
    import warnings

    import numpy as np

    from gradlang.expr import pure_numeric as pure

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name in ["exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
                     "sinh", "cosh", "tanh", "floor", "ceil", "round", "abs", "sign"]:
            want, got = float(getattr(np, name)(np.float64(x))), float(getattr(pure, name)(x))
            assert same_result(got, want) or (math.isnan(got) and math.isnan(want)), (name, x, got, want)
        for y in [0.0, -0.0, 2.0, -3.0, 0.5, 1e308]:
            for name in ["power", "divide", "maximum", "minimum", "logaddexp"]:
                want, got = float(getattr(np, name)(np.float64(x), np.float64(y))), float(getattr(pure, name)(x, y))
                assert same_result(got, want) or (math.isnan(got) and math.isnan(want)), (name, x, y, got, want)


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


def test_a_budget_without_threads_counts_cpu_time_not_waiting():
    # The traced path reads this thread's CPU clock too: a wait of 4 s fits a budget of 2 s (the statement's own
    # CPU, its builtins' first imports included, is a small part of the budget: no limit is near).
    out = _run("""
import time
original = Session._show
def waits(self, statement, source):
    time.sleep(4)
    return original(self, statement, source)
Session._show = waits
print(Session(time_limit=2).eval("x: R\\ndiff(x * stop_gradient(x), x)"))
print("threads:", threading.active_count())
""")
    assert out.split("\n")[:2] == ["stop_gradient(x)", "threads: 1"], out
