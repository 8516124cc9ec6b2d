"""Start-up of gradlang beside `import sympy`, as whole processes (issue #41).

Each command is run as its own Python process, the commands interleaved (so a
burst of load on the shared cores hits all alike), and timed in CPU seconds of
the child (user + system, from RUSAGE_CHILDREN); the table gives the median of
the repeats and the ratio to `python -c "import sympy"`. Bytecode is written by
one run of each command first, as an installed package has it (a checkout run
with PYTHONDONTWRITEBYTECODE=1 compiles every module at every start: a third of
gradlang's start-up). The issue asks start-up <= 1.2x `import sympy`.

    python benchmarks/bench_startup.py                 # 9 repeats
    python benchmarks/bench_startup.py --repeats 15 --imports
    python benchmarks/bench_startup.py --repeats 15 --before /tmp/old   # `git archive OLD | tar -x -C /tmp/old`

--imports adds the modules `gradlang -e '1 + 1'` imports beyond `import sympy`,
by their own time under `python -X importtime` (the least of 3 runs; inflated
by the timer, but in proportion), the largest first.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "examples" / "stable_softmax.grad")  # README's quickstart runs it

COMMANDS = {
    "python -c 'import sympy'": ["-c", "import sympy"],
    # SymPy and lark, what `1 + 1` could not avoid until the parser shipped built (syntax/standalone_parser.py,
    # lark's run-time and the tables, without importing lark). A sum of numbers builds no SymPy Add.
    # `import sympy` without the interpreter's last garbage collection at exit, which walks every object SymPy
    # made (a quarter of the row above): the `gradlang` command skips it (shell/command.py), so this row is
    # the like-for-like base for its rows; the ratio is over the row above.
    "python -c 'import sympy' (no exit collection)": ["-c", "import sympy, gc; gc.freeze()"],
    "python -c 'import sympy, lark'": ["-c", "import sympy, lark"],
    # What any program with a symbol pays before gradlang's own modules: SymPy's first symbolic sum (Add
    # imports sympy.tensor.tensor and sympy.combinatorics, whatever adds).
    "python -c 'import sympy, lark; x + 1'": ["-c", "import sympy, lark; sympy.Symbol('x') + 1"],
    "python -c 'import gradlang'": ["-c", "import gradlang"],
    "python -c 'from gradlang import Session'": ["-c", "from gradlang import Session"],
    "gradlang --plain -e '1 + 1'": ["-m", "gradlang", "--plain", "-e", "1 + 1"],
    "gradlang --plain -e 'x: R^n; grad(sum(exp(x)), x)'": ["-m", "gradlang", "--plain", "-e",
                                                           "n: size\nx: R^n\ngrad(sum(exp(x)), x)"],
    "gradlang --plain examples/stable_softmax.grad": ["-m", "gradlang", "--plain", FLAGSHIP],
}
TARGET = 1.2  # issue #41: start-up <= 1.2x `import sympy`
OURS = [name for name in COMMANDS if name.startswith("gradlang")]  # the rows --before runs again from another tree


def _environment(tree: str | None = None) -> dict:
    """The children's environment: bytecode written and read, as installed; `tree` first on the path."""
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from their bytecode
    if tree is not None:
        environment["PYTHONPATH"] = tree
    return environment


def cpu_seconds(arguments: list, environment: dict) -> float:
    """CPU seconds (user + system) of one whole Python process, run in the first folder of its PYTHONPATH
    (`python -c` and `-m` put the working folder first on sys.path: elsewhere, a gradlang there would win)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    folder = environment.get("PYTHONPATH", str(ROOT)).split(os.pathsep)[0] or str(ROOT)
    subprocess.run([sys.executable, *arguments], env=environment, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd=folder)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _runs(before: str | None) -> dict:
    """{row: (arguments, environment)}; with `before`, gradlang's rows again from that tree (a checkout of an
    older commit), interleaved with the rest."""
    runs = {name: (arguments, _environment()) for name, arguments in COMMANDS.items()}
    if before is not None:
        runs.update({f"before: {name}": (COMMANDS[name], _environment(before)) for name in OURS})
    return runs


def measure(repeats: int, before: str | None = None) -> dict:
    """{row: [CPU seconds of each repeat]}, the rows interleaved, after one run each not counted."""
    runs = _runs(before)
    for arguments, environment in runs.values():
        cpu_seconds(arguments, environment)  # writes the bytecode
    times: dict = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (arguments, environment) in runs.items():
            times[name].append(cpu_seconds(arguments, environment))
    return times


def _own_times(arguments: list, environment: dict) -> dict:
    """{module: its own import time in µs} under -X importtime."""
    done = subprocess.run([sys.executable, "-X", "importtime", *arguments], env=environment, check=True,
                          capture_output=True, text=True)
    own = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = line[len("import time:"):].split("|")
            if parts[0].strip().isdigit():
                own[parts[2].strip()] = int(parts[0])
    return own


def _least_own_times(arguments: list, environment: dict, runs: int = 3) -> dict:
    """{module: the least of its own import times over a few runs} (a loaded machine inflates some runs)."""
    runs_seen = [_own_times(arguments, environment) for _ in range(runs)]
    return {name: min(seen.get(name, us) for seen in runs_seen) for name, us in runs_seen[0].items()}


def print_imports(limit: int = 25) -> None:
    environment = _environment()
    sympy = _least_own_times(COMMANDS["python -c 'import sympy'"], environment)
    ours = _least_own_times(COMMANDS["gradlang --plain -e '1 + 1'"], environment)
    extra = {name: us for name, us in ours.items() if name not in sympy}
    print(f"\nImported by `gradlang -e '1 + 1'` beyond `import sympy`: {len(extra)} modules, "
          f"{sum(extra.values()) / 1000:.0f} ms of own time under -X importtime; the largest:\n")
    print("| module | own ms |\n|---|---|")
    for name, us in sorted(extra.items(), key=lambda item: (-item[1], item[0]))[:limit]:
        print(f"| {name} | {us / 1000:.1f} |")


def print_table(times: dict, repeats: int) -> None:
    """Medians, their ratio to `import sympy`, and the median of the ratios within each round of runs (which
    a burst of load on the shared cores, hitting one round, moves less)."""
    sympy = times["python -c 'import sympy'"]
    base = statistics.median(sympy)
    print(f"Start-up, CPU seconds of whole processes, median of {repeats} interleaved runs\n")
    print("| command | CPU s | / import sympy | median of per-round ratios |\n|---|---|---|---|")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        per_round = statistics.median(s / b for s, b in zip(seconds, sympy))
        print(f"| `{name}` | {median:.3f} | {median / base:.2f} | {per_round:.2f} |")
    ratio = statistics.median(times["gradlang --plain -e '1 + 1'"]) / base
    like = statistics.median(times["gradlang --plain -e '1 + 1'"]) / statistics.median(
        times["python -c 'import sympy' (no exit collection)"])
    print(f"\n`gradlang -e '1 + 1'` / `import sympy` = {ratio:.2f}: the target <= {TARGET} is "
          f"{'met' if ratio <= TARGET else 'not met'}; over `import sympy` without the exit collection "
          f"(like for like) {like:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--imports", action="store_true", help="list the modules imported beyond sympy's")
    parser.add_argument("--before", metavar="TREE", help="also run gradlang's rows from this tree, interleaved")
    options = parser.parse_args()
    print_table(measure(options.repeats, options.before), options.repeats)
    if options.imports:
        print_imports()


if __name__ == "__main__":
    main()
