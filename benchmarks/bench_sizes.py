"""The same program at literal and at symbolic sizes, through the `gradlang` command (issue #36).

One engine means a size written `1023` costs what a size written `n` costs:
each case is one program written twice, `x: R^1023` and `n: size; x: R^n`,
run as a user runs it (`python -m gradlang --plain FILE`, start-up
included), interleaved, and timed in CPU seconds of the child process (user +
system; the minimum of the repeats, since the machine is shared). The last
column is literal over symbolic; the issue asks for at most 1.5.

    python benchmarks/bench_sizes.py              # every case, 2 repeats
    python benchmarks/bench_sizes.py --repeats 3 --only hessian
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MLP = "{decl}\nL = sum((W2 @ tanh(W1 @ x + b1) - y)^2)\n{statement}\n"


def _mlp(size, symbolic: bool, statement: str) -> str:
    if symbolic:
        decl = "h, d, o: size\nW1: R^(h,d)\nW2: R^(o,h)\nx: R^d\nb1: R^h\ny: R^o"
    else:
        decl = f"W1: R^({size},{size})\nW2: R^({size},{size})\nx: R^{size}\nb1: R^{size}\ny: R^{size}"
    return MLP.format(decl=decl, statement=statement)


def _vector(size, symbolic: bool, names: str) -> str:
    return f"n: size\n{names}: R^n" if symbolic else f"{names}: R^{size}"


LAYER_NORM = ("y = (x - mean(x)) / sqrt(mean((x - mean(x))^2) + 0.00001)\n"
              'grad(sum(w * y), x) at x = load("{dir}/x.npy"), w = load("{dir}/w.npy")\n')
CROSS_ENTROPY = 'hessian(logsumexp(z) - dot(t, z), z) at z = load("{dir}/x.npy"), t = load("{dir}/w.npy")\n'
SOFTMAX = 'jacobian(softmax(x), x) at x = load("{dir}/x.npy")\n'

CASES = {  # name -> (size, program text at literal or symbolic size, extra command-line flags)
    "layer norm grad, 1023": (1023, lambda s, sym: _vector(s, sym, "x, w") + "\n" + LAYER_NORM, []),
    "hessian cross-entropy, 256": (256, lambda s, sym: _vector(s, sym, "z, t") + "\n" + CROSS_ENTROPY, []),
    "hessian cross-entropy, 1024": (1024, lambda s, sym: _vector(s, sym, "z, t") + "\n" + CROSS_ENTROPY, []),
    "jacobian softmax, 2048": (2048, lambda s, sym: _vector(s, sym, "x") + "\n" + SOFTMAX, []),
    "print MLP gradient, 8": (8, lambda s, sym: _mlp(s, sym, "grad(L, W1)"), []),
    "explain MLP gradient, 32": (32, lambda s, sym: _mlp(s, sym, "explain grad(L, W1)"), []),
    "explain MLP gradient, 48": (48, lambda s, sym: _mlp(s, sym, "explain grad(L, W1)"), []),
    "--export numpy MLP gradient, 48": (48, lambda s, sym: _mlp(s, sym, "g = grad(L, W1)"), ["--export", "numpy"]),
}


def _cpu_of(command: list, cwd: str, timeout: float) -> float | None:
    """CPU seconds (user + system) of one child process, or None if it failed or ran out of time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.stderr.write(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}\n")
        return None
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _files(folder: Path, size: int) -> None:
    rng = np.random.default_rng(size)
    np.save(folder / "x.npy", rng.normal(size=size))
    np.save(folder / "w.npy", rng.normal(size=size))


def run(names: list, repeats: int, timeout: float) -> list:
    """(name, literal s, symbolic s) per case: the minimum over the repeats, literal and symbolic interleaved."""
    rows = []
    for name in names:
        size, text, flags = CASES[name]
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            _files(folder, size)
            times = {}
            for symbolic in (False, True):
                (folder / f"{symbolic}.grad").write_text(text(size, symbolic).replace("{dir}", scratch))
            for _ in range(repeats):
                for symbolic in (False, True):
                    command = [sys.executable, "-m", "gradlang", "--plain", *flags, f"{symbolic}.grad"]
                    spent = _cpu_of(command, scratch, timeout)
                    best = times.get(symbolic, float("inf"))
                    times[symbolic] = min(best, spent) if spent is not None else best
        rows.append((name, times[False], times[True]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--only", default="", help="run the cases whose name holds this text")
    options = parser.parse_args()
    names = [name for name in CASES if options.only in name]
    print(f"{'case':34} {'literal s':>10} {'symbolic s':>11} {'literal/symbolic':>17}")
    for name, literal, symbolic in run(names, options.repeats, options.timeout):
        ratio = literal / symbolic if symbolic not in (0, float("inf")) else float("nan")
        print(f"{name:34} {literal:10.2f} {symbolic:11.2f} {ratio:17.2f}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
