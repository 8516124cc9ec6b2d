"""CPU seconds of simplify per spelling of a constant, whole `gradlang` processes (issue #41).

Each program is written with its constant as `0.5` and as `1/2` and run as
`python -m gradlang --plain FILE`, interleaved, the repeats under three hash
seeds. Columns: the minimum CPU seconds of the child process (user + system,
start-up included), the ratio of the two spellings, whether simplify stopped on
its budget of work (limits.SIMPLIFY_WORK; the note it prints), and whether every
run of a spelling printed the same bytes. Before the budget of work, the layer
norm over five scalars took 5.6 s (1/2) and 6.9 s (0.5), the rational powers
36 s and 24 s (past the statement limit, nothing printed), the nested roots 1.9 s
and 2.1 s, the layer norm at symbolic size 2.3 s and 3.3 s.

    python benchmarks/bench_simplify.py             # every program, 3 repeats
    python benchmarks/bench_simplify.py --repeats 1 --only powers
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPELLINGS = ("0.5", "1/2")
SEEDS = ("0", "1", "4141")
PROGRAMS = {
    "layer norm of 5 scalars": """a, b, c, d, e: R
m = (a + b + c + d + e)/5
v = ((a - m)^2 + (b - m)^2 + (c - m)^2 + (d - m)^2 + (e - m)^2)/5
simplify(diff(HALF * 5 * v / sqrt(v + HALF), a))
""",
    "powers": """x, y: R
simplify((x^(1000001/1000) + y^(7/3))^3 / (x^(1/1000) - y^(1/3)) - x^(333/7)*y^(HALF))
""",
    "nested sqrt/exp/log": """x, y, z: R
f = log(exp(sqrt(x^2 + sqrt(y^2 + exp(log(z^2 + HALF)))))) / sqrt(HALF + exp(-sqrt(x^2 + y^2 + z^2)))
simplify(diff(f, x) + diff(f, y) + diff(f, z))
""",
    "layer norm at symbolic n": """n: size
x, g, beta, t: R^n
mu = mean(x)
v = mean((x - mu)^2)
xhat = (x - mu) / sqrt(v + HALF)
L = HALF * sum((g*xhat + beta - t)^2)
simplify(grad(L, beta))
simplify(grad(L, x))
""",
    "softmax of 12": """x: R^12
y = softmax(x)
simplify(diff(log(y[0]) * HALF + y[1]^2 * HALF, x[0]))
""",
}


def _run(path: Path, seed: str, timeout: float) -> tuple[float, bytes]:
    """(CPU seconds of the child, what it printed) of one whole gradlang process."""
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run([sys.executable, "-m", "gradlang", "--plain", str(path)], env=env,
                              capture_output=True, timeout=timeout, check=False)
        printed = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        printed = b"<timed out>"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), printed


def rows(names: list[str], repeats: int, timeout: float) -> list[str]:
    """One table row per program, its spellings run interleaved."""
    folder = Path(tempfile.mkdtemp(prefix="bench_simplify_"))
    lines = []
    for name in names:
        paths = []
        for k, half in enumerate(SPELLINGS):
            paths.append(folder / f"{k}.grad")
            paths[-1].write_text(PROGRAMS[name].replace("HALF", half))
        seconds: dict = {half: [] for half in SPELLINGS}
        printed: dict = {half: set() for half in SPELLINGS}
        for r in range(repeats):
            for half, path in zip(SPELLINGS, paths):
                cpu, out = _run(path, SEEDS[r % len(SEEDS)], timeout)
                seconds[half].append(cpu)
                printed[half].add(out)
        best = {half: min(seconds[half]) for half in SPELLINGS}
        stopped = "/".join("yes" if any(b"budget of work ran out" in o for o in printed[h]) else "no" for h in SPELLINGS)
        same = "/".join("yes" if len(printed[h]) == 1 else "NO" for h in SPELLINGS)
        lines.append(f"| {name} | {best['0.5']:.2f} | {best['1/2']:.2f} | {best['0.5'] / best['1/2']:.2f} "
                     f"| {stopped} | {same} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", action="append", help="a program's name (a part of it), repeatable")
    args = parser.parse_args()
    names = [n for n in PROGRAMS if not args.only or any(o in n for o in args.only)]
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| program | 0.5 CPU s | 1/2 CPU s | 0.5 / (1/2) | stopped on the budget (0.5/(1/2)) "
          "| same bytes every run and seed |")
    print("|---|---|---|---|---|---|")
    for line in rows(names, args.repeats, args.timeout):
        print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
