"""The MLP at widths up to 4096 with .npy inputs, beside JAX and hand-written NumPy (issue 26).

Run by bench_language.py after its own table (or alone). For each width the
inputs are written as .npy files to a temporary directory and the program of
programs.mlp_files reads them with load(). Columns:

- `grad s` — the `g = grad(loss, W1)` statement through `Session.run` (CPU
  seconds, best of 7: it touches no array, and CPU time is what a loaded
  machine does not inflate); `at s` — `g at …` through `Session.run` with the
  arrays bound from Python (`Session.bind`), wall seconds, best of 10;
  `at with load s` — the program's own `at`, reading the four files;
- `NumPy s` — the same gradient written by hand in NumPy (programs.mlp_by_hand)
  on the same arrays in memory, wall seconds, best of 10, each run right after
  one of `at s`; `at/NumPy`;
- `CLI s` — the whole `gradlang --plain FILE` command, start-up and loading
  included; `JAX s` — a whole Python process that imports JAX, loads the same
  files, jits jax.grad of the same loss in float64 and runs it once; `CLI/JAX`.
  Both wall seconds, the minimum of the repeats, one run first not counted;
- `CLI MB` — the peak RSS of the command (os.wait4), `arrays MB` — the arrays
  it holds (the four inputs and the gradient), `base MB` — the peak RSS of
  `gradlang --plain -e '1 + 1'` (Python, SymPy, gradlang), and `MB ratio` =
  (CLI MB - base MB) / arrays MB;
- `max rel. diff vs JAX` — of Session.run's numbers against JAX's.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

import numpy as np

import programs
from gradlang.core.session import Session

WIDTHS = (16, 256, 1024, 4096)
HEADER = ["width", "grad s", "at s", "NumPy s", "at/NumPy", "CLI s", "JAX s", "CLI/JAX", "CLI MB", "arrays MB",
          "base MB", "MB ratio", "max rel. diff vs JAX", "max diff / max abs", "at with load s"]


# Runs a command and prints its peak RSS in kB. A child forked from this process (which holds the
# arrays) would count this process's pages in its peak, exec or not; one forked from this small
# runner counts only its own.
PEAK = ("import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def run(command: list[str]) -> float:
    """Wall seconds of one whole command."""
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command} failed: {done.stderr.decode()[-2000:]}")
    return seconds


def best_run(command: list[str], repeats: int) -> tuple[float, float]:
    """(wall seconds, the minimum of `repeats` runs after one not counted; peak RSS in MB of one more run)."""
    seconds = min([run(command) for _ in range(repeats + 1)][1:])  # the first caches bytecode, as an install does
    peak = subprocess.run([sys.executable, "-c", PEAK, *command], capture_output=True, text=True, check=True)
    return seconds, int(peak.stdout) / 1024


def wall(function, repeats: int, clock=time.perf_counter):
    times, value = [], None
    for _ in range(repeats):
        start = clock()
        value = function()
        times.append(clock() - start)
    return min(times), value


def session_times(program, arrays: dict, repeats: int) -> dict:
    """grad: the gradient statement; at: `g at …` with the arrays bound from Python (Session.bind), as
    the hand-written NumPy has them in memory; loaded: the program's own `at`, reading the files."""
    session = Session(time_limit=None)
    session.run("\n".join(program.declare + program.build))
    grad, _ = wall(lambda: session.run(program.grad), max(repeats, 7), time.process_time)  # no arrays: CPU s
    for name, array in arrays.items():
        session.bind(f"{name}_data", array)
    given = ", ".join(f"{name} = {name}_data" for name in arrays)
    x0, W1, b1, w2 = (arrays[k] for k in ("x0", "W1", "b1", "w2"))
    at, hand, results, expected = [], [], None, None
    for _ in range(max(repeats, 10)):  # interleaved, so a burst of load on the shared cores hits both alike
        seconds, results = wall(lambda: session.run(f"g at {given}, c = 0.1"), 1)
        at.append(seconds)
        seconds, expected = wall(lambda: programs.mlp_by_hand(x0, W1, b1, w2), 1)
        hand.append(seconds)
    loaded, from_files = wall(lambda: session.run(program.at), repeats)
    np.testing.assert_array_equal(results[0].value, from_files[0].value)
    value = np.asarray(results[0].value, dtype=float)
    np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-300)
    return {"grad": grad, "at": min(at), "hand": min(hand), "loaded": loaded, "value": value}


def row(width: int, folder: str, repeats: int, base_mb: float) -> list[str]:
    program = programs.mlp_files(width, folder)
    arrays = {k: np.load(f"{folder}/{k}_{width}.npy") for k in ("W1", "b1", "w2", "x0")}
    times = session_times(program, arrays, repeats)
    hand = times["hand"]
    path = f"{folder}/mlp_{width}.grad"
    with open(path, "w") as handle:
        handle.write(program.source())
    cli, cli_mb = best_run([sys.executable, "-m", "gradlang", "--plain", path], repeats)
    out = f"{folder}/jax_{width}.npy"
    jax_s, _ = best_run([sys.executable, "-c", programs.JAX_MLP, folder, str(width), out], repeats)
    reference = np.load(out)
    difference = np.abs(times["value"] - reference)
    error = np.max(difference / np.maximum(np.abs(reference), 1e-300))
    normwise = np.max(difference) / np.max(np.abs(reference))
    arrays_mb = (2 * width * width + 3 * width) * 8 / 2**20
    return [str(width), f"{times['grad']:.4f}", f"{times['at']:.4f}", f"{hand:.4f}", f"{times['at'] / hand:.2f}",
            f"{cli:.3f}", f"{jax_s:.3f}", f"{cli / jax_s:.2f}", f"{cli_mb:.0f}", f"{arrays_mb:.1f}", f"{base_mb:.0f}",
            f"{(cli_mb - base_mb) / arrays_mb:.2f}", f"{error:.1e}", f"{normwise:.1e}", f"{times['loaded']:.4f}"]


def table(widths=WIDTHS, repeats: int = 3) -> list[list[str]]:
    """Print the table and return its rows."""
    print("\n2-layer tanh MLP with .npy inputs (issue 26):\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        np.save(f"{folder}/base.npy", np.zeros((64, 64)))  # the base: Python, SymPy, gradlang and NumPy, no arrays
        base = f'x: R^(64,64)\nsum(x) at x = load("{folder}/base.npy")'
        _, base_mb = best_run([sys.executable, "-m", "gradlang", "--plain", "-e", base], repeats)
        for width in widths:
            rows.append(row(width, folder, repeats, base_mb))
            print("| " + " | ".join(rows[-1]) + " |", flush=True)
    return rows


def print_targets(rows: list, startup_ratio: float | None = None) -> None:
    """The targets of issue 26, each with its measured number."""
    by = {int(r[0]): r for r in rows}

    def check(text: str, ratio: float, limit: float) -> None:
        print(f"- {text}: {ratio:.2f}x (<= {limit:g}: {'**met**' if ratio <= limit else '**not met**'})")

    print("\nTargets of issue 26 (measured above):")
    for width, limit in ((1024, 2.0), (4096, 3.0)):
        if width in by:
            check(f"whole gradlang run at width {width} against the whole JAX process", float(by[width][7]), limit)
    if 1024 in by and 16 in by:
        check("the grad statement at width 1024 against width 16", float(by[1024][1]) / float(by[16][1]), 1.5)
    if 1024 in by:
        check("`g at …` at width 1024 against hand-written NumPy", float(by[1024][4]), 2.0)
        check("peak RSS at width 1024 above the base, over the arrays it holds", float(by[1024][11]), 3.0)
    for column, what in ((12, "entry by entry"), (13, "max difference over max magnitude")):
        worst = max(float(r[column]) for r in rows)
        print(f"- the same numbers as JAX to 1e-12 relative at every width, {what}: at most {worst:.1e}, "
              f"{'**met**' if worst <= 1e-12 else '**not met**'}")
    if startup_ratio is not None:
        check("start-up against `import sympy`", startup_ratio, 1.5)


if __name__ == "__main__":
    widths = tuple(int(w) for w in sys.argv[1:]) or WIDTHS
    print_targets(table(widths))
