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

COMMANDS = {
    "python -c 'import sympy'": ["-c", "import sympy"],
    # What any program pays before gradlang's own modules: SymPy, lark, and SymPy's first sum (Add imports
    # sympy.tensor.tensor and sympy.combinatorics, whatever adds).
    "python -c 'import sympy, lark; x + 1'": ["-c", "import sympy, lark; sympy.Symbol('x') + 1"],
    "python -c 'import gradlang'": ["-c", "import gradlang"],
    "python -c 'from gradlang import Session'": ["-c", "from gradlang import Session"],
    "gradlang --plain -e '1 + 1'": ["-m", "gradlang", "--plain", "-e", "1 + 1"],
    "gradlang --plain -e 'x: R^n; grad(sum(exp(x)), x)'": ["-m", "gradlang", "--plain", "-e",
                                                           "n: size\nx: R^n\ngrad(sum(exp(x)), x)"],
}


def _environment() -> dict:
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from their bytecode
    return environment


def cpu_seconds(arguments: list, environment: dict) -> float:
    """CPU seconds (user + system) of one whole Python process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *arguments], env=environment, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(repeats: int) -> dict:
    """{command: [CPU seconds of each repeat]}, the commands interleaved, after one run each not counted."""
    environment = _environment()
    for arguments in COMMANDS.values():
        cpu_seconds(arguments, environment)  # writes the bytecode
    times: dict = {name: [] for name in COMMANDS}
    for _ in range(repeats):
        for name, arguments in COMMANDS.items():
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--imports", action="store_true", help="list the modules imported beyond sympy's")
    options = parser.parse_args()
    times = measure(options.repeats)
    base = statistics.median(times["python -c 'import sympy'"])
    print(f"Start-up, CPU seconds of whole processes, median of {options.repeats} interleaved runs\n")
    print("| command | CPU s | / import sympy |\n|---|---|---|")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"| `{name}` | {median:.3f} | {median / base:.2f} |")
    if options.imports:
        print_imports()


if __name__ == "__main__":
    main()
