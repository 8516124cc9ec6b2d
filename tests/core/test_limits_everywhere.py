"""The robustness cases of issues 12 and 16, each run the three ways a program reaches gradlang.

From the CLI (`python -m gradlang`, a file), from a `Session` in the main
thread and from a `Session` in a worker thread (as a web server runs it), each
case must end in a clean error or the right answer, within a bounded amount of
work (CPU seconds, which a loaded machine does not inflate as it does the
wall clock) and under 2 GiB (a sum of 100,000 terms under 1 GiB, as docs/limits.md promises). Every
way runs in a fresh subprocess, and its peak memory is its own (`_own_peak`);
the results are written in the case's format, as the shells and an embedding
host would, since rendering is a stage that must be bounded too. The large
sources are generated in the child, never stored.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]
GIB = 1024**3
# The work a case may do: far below what the unbounded cases took (minutes, gigabytes). A hang is
# caught by the safety net (tests/safety.py); speed is measured in benchmarks/FUZZ.md, not here.
CPU_SECONDS = 30.0

DOUBLING = "f(x) = sin(x) + cos(x)\ng0(x) = f(f(x))\n" + "".join(
    f"g{i}(x) = g{i - 1}(g{i - 1}(x))\n" for i in range(1, 30)) + "expand(g29(y))"

# id -> (source, expected: an error kind or the text of the last value, output format, memory bound)
CASES = {
    "source-50-megabytes": (lambda: "x+" * 25_000_000 + "x", "LimitError", "json", 2 * GIB),
    "source-million-lines": (lambda: "y = x + 1\n" * 1_000_000, "LimitError", "json", 2 * GIB),
    "line-of-a-million-terms": (lambda: "x+" * 1_000_000 + "x", "LimitError", "json", 2 * GIB),
    "float-power-huge-exponent": (lambda: "2.0^(10^30000)", "inf", "json", 2 * GIB),
    "pretty-matrix-300x300": (lambda: "W: R^(300,300)\nW", None, "pretty", 2 * GIB),
    "sum-of-100000-terms": (lambda: "x: R^100000\nsum(x)", None, "json", GIB),
    "sum-of-100000-at-points": (lambda: "x: R^100000\nsum(x) at x = linspace(0, 1, 100000)", "50000.0", "json", GIB),
    "sum-of-20000-terms-pretty": (lambda: "x: R^20000\nsum(x)", None, "pretty", GIB),
    "gradcheck-too-large": (lambda: "x: R^30000\ngradcheck(sum(x*x), x) at x = linspace(0, 1, 30000)",
                            "LimitError", "json", 2 * GIB),
    "prod-of-big-integers": (lambda: "a = 10^30000\nb = prod([a, a, a, a, a, a, a, a, a, a])", "LimitError", "json", 2 * GIB),
    "matmul-squaring": (lambda: "A = [[10^10, 1], [1, 1]]\n" + "A = A @ A\n" * 16, "LimitError", "json", 2 * GIB),
    "plot-range-too-wide": (lambda: "plot(t, t, -1e308, 1e308)", "ValueError", "json", 2 * GIB),
    # The statement budget (the CLI's is the default 60 s, so this one runs as a Session with 3 s).
    "doubling-chain": (lambda: DOUBLING, "LimitError", "json", 2 * GIB),
}
SESSION_ONLY = {"doubling-chain"}


# --- the child: one way, one case ------------------------------------------------------------


def _session_way(source: str, fmt: str, in_thread: bool, time_limit: float) -> dict:
    """Run and render in this process (in a worker thread if asked); what ended it and how long it took."""
    from gradlang import GradlangError, Session
    from gradlang.render.emit import Emitter

    outcome: dict = {}

    def work():
        out = io.StringIO()
        emitter = Emitter(fmt, out, io.StringIO())
        start = time.monotonic()
        try:
            for result in Session(time_limit=time_limit).iter_run(source, "<case>"):
                emitter.result(result)
                outcome["text"] = result.text
            outcome["kind"] = "value"
        except GradlangError as error:
            outcome["kind"] = error.kind
            outcome["message"] = error.message
        outcome["seconds"] = time.monotonic() - start

    if in_thread:
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(SAFETY_NET)
    else:
        work()
    return outcome


def _cli_way(source: str, fmt: str) -> dict:
    """Run `python -m gradlang --FORMAT file` as a child of this process; its outcome from its output."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.grad"
        path.write_text(source)
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "gradlang", f"--{fmt}", str(path)], capture_output=True,
                              text=True, timeout=SAFETY_NET, env={**os.environ, "NO_COLOR": "1"})
    outcome = {"seconds": time.monotonic() - start, "kind": "value", "stderr": done.stderr[-2000:]}
    lines = [json.loads(line) for line in done.stdout.splitlines()] if fmt == "json" else []
    errors = [line for line in lines if line.get("kind") == "error"]
    if errors:
        outcome.update(kind=errors[-1]["error"], message=errors[-1]["message"])
    elif lines:
        outcome["text"] = lines[-1].get("text")
    if not errors and done.returncode != 0:  # refused before running: the CLI's usage error names the limit
        outcome["kind"] = "LimitError" if "the limit" in done.stderr else f"exit status {done.returncode}"
    outcome["traceback"] = "Traceback" in done.stdout + done.stderr
    return outcome


def _child(case: str, way: str) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (8 * GIB, 8 * GIB))  # a regression fails here, not on the machine
    make, _, fmt, _ = CASES[case]
    cpu = time.process_time()
    if way == "cli":
        outcome = _cli_way(make(), fmt)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        outcome["cpu"] = usage.ru_utime + usage.ru_stime
    else:
        time_limit = 3.0 if case in SESSION_ONLY else SAFETY_NET  # 3 s: that case is ended by the clock
        outcome = _session_way(make(), fmt, way == "thread", time_limit)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        outcome["cpu"] = time.process_time() - cpu
    outcome["peak"] = usage.ru_maxrss * 1024 if way == "cli" else _own_peak()  # kilobytes on Linux
    print(json.dumps(outcome))


def _own_peak() -> int:
    """This process's own peak memory in bytes: VmHWM, the high-water mark of its own address space.

    ru_maxrss would not do here: Linux carries the peak of the address space an exec
    replaces into it, so a child of a large pytest process would report pytest's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --- the test ---------------------------------------------------------------------------------


def _ways():
    for case in CASES:
        for way in ("cli", "main", "thread"):
            if way == "cli" and case in SESSION_ONLY:
                continue
            yield pytest.param(case, way, id=f"{case}-{way}")


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss and RLIMIT_AS are read as Linux has them")
@pytest.mark.parametrize("case, way", list(_ways()))
def test_robustness_case_ends_cleanly_fast_and_small(case, way):
    _, expected, _, memory = CASES[case]
    code = f"from tests.core.test_limits_everywhere import _child; _child({case!r}, {way!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=SAFETY_NET * 2,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.splitlines()[-1])
    print(f"{case} {way}: {outcome['kind']} in {outcome['seconds']:.1f} s ({outcome['cpu']:.1f} s CPU), "
          f"peak {outcome['peak'] / 2**20:.0f} MiB")
    assert not outcome.get("traceback"), outcome
    assert outcome["kind"] != "InternalError", outcome
    if expected is None or not expected.endswith("Error"):
        assert outcome["kind"] == "value", outcome
        assert expected is None or outcome.get("text") == expected, outcome
    else:
        assert outcome["kind"] == expected, outcome
    assert outcome["cpu"] < CPU_SECONDS, outcome
    assert outcome["peak"] < memory, f"peak {outcome['peak'] / GIB:.2f} GiB: {outcome}"
