"""Python loops the trace unrolled, named in the program's header with the number of iterations it ran.

jax.make_jaxpr and torch.export run a Python `for` or `while` and record
each iteration's operations one after another: the program holds the loop
at its traced length, and nothing in it says so. The tracers record the place
of every operation in order (`Writer.places`: file, line, column, operation);
the user's file is read with Python's `ast` (never run) for its loops, and a
loop's iterations are counted as the occurrences of the first operation its
body ran (the same line, column and operation come back once per iteration).
A run is a stretch of operations inside the loop's lines: a loop in a helper
called twice (SwAV's Sinkhorn, once per view) runs twice.
"""

from __future__ import annotations

import ast
import functools
import os


def note_loops(writer) -> None:
    """A header comment for each Python loop of the user's files whose body the trace ran."""
    files = list(dict.fromkeys(place[0] for place in writer.places if place[0]))
    for file in files:
        in_file = [place if place[0] == file else None for place in writer.places]
        for start, last, text in _loops(os.path.realpath(file)):
            runs = _runs(in_file, start, last)
            if runs:
                writer.note(f"a Python loop at {file}:{start} ({text}) is unrolled at its traced length: "
                            f"{_counted(runs)}")


def _runs(places: list, first: int, last: int) -> list:
    """The iterations of each run through lines first..last (the loop's header and body): occurrences of the
    run's first operation."""
    runs, current = [], []
    for place in places:
        if place is not None and first <= place[1] <= last:
            current.append(place[1:])
        elif current:
            runs.append(current.count(current[0]))
            current = []
    if current:
        runs.append(current.count(current[0]))
    return runs


def _counted(runs: list) -> str:
    if len(runs) == 1:
        return f"{runs[0]} iteration(s)"
    if len(set(runs)) == 1:
        return f"{len(runs)} runs of {runs[0]} iteration(s) each"
    return f"{len(runs)} runs of {', '.join(str(r) for r in runs)} iteration(s)"


@functools.lru_cache(maxsize=64)
def _loops(file: str) -> tuple:
    """(first line, last line, the first line as written) of each loop in the file."""
    try:
        with open(file, encoding="utf-8") as handle:
            source = handle.read()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return ()
    lines = source.splitlines()
    found = [(node.lineno, node.end_lineno, lines[node.lineno - 1].strip())
             for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While, ast.AsyncFor))]
    return tuple(sorted(found))
