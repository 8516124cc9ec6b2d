"""Walls in derivations (issue 40): for every derivation program of tests/ and examples/
(tests/explain/every_program.py), the widest plain line, the number of plain lines and the CPU seconds.

    PYTHONPATH=$PWD python benchmarks/derivation_walls.py            # all programs, about 6 minutes
    PYTHONPATH=$PWD python benchmarks/derivation_walls.py infonce    # the programs whose name holds a word
    PYTHONPATH=$PWD python benchmarks/derivation_walls.py --walls    # only those over the limits

A wall is a line over COLUMNS characters or a derivation over LINES plain lines; each `explain` of a
program is one derivation. CPU seconds are the session's whole run (the statements before the explain
included, rendering not), so they bound the derivation from above; over SECONDS is a wall too.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COLUMNS = 100
LINES = 25
SECONDS = 1.0


def measure(source: str) -> list[tuple[int, int, float]]:
    """(widest line, plain lines, CPU seconds) of each explain of the program, in order; the seconds are
    those since the printing statement before it (the statements between included)."""
    from gradlang.core.session import Session
    from gradlang.render import to_plain

    out = []
    start = time.process_time()
    for result in Session().iter_run(source):
        seconds = time.process_time() - start
        if result is not None and result.kind == "explain":  # the derivations ("# …"), not the value after them
            lines = [line for line in to_plain(result).splitlines() if line.startswith("#")]
            out.append((max(len(line) for line in lines), len(lines), seconds))
        start = time.process_time()
    return out


def main(argv: list[str]) -> int:
    from tests.explain.every_program import every_program

    only_walls = "--walls" in argv
    words = [a for a in argv if not a.startswith("--")]
    programs = [(n, s) for n, s in every_program() if not words or any(w in n for w in words)]
    walls = derivations = 0
    for name, source in programs:
        sizes = measure(source)
        for k, (columns, lines, seconds) in enumerate(sizes):
            derivations += 1
            wall = columns > COLUMNS or lines > LINES or seconds > SECONDS
            walls += wall
            if wall or not only_walls:
                label = name if len(sizes) == 1 else f"{name}#{k + 1}"
                print(f"{'WALL' if wall else '    '} {columns:4d} cols {lines:3d} lines {seconds:6.2f} s  {label}",
                      flush=True)
    print(f"{walls} of {derivations} derivations over {COLUMNS} columns, {LINES} lines or {SECONDS:g} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
