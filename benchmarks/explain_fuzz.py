"""Explain fuzzer: every statement of a random tensor program wrapped in `explain`, in all four formats.

    PYTHONPATH=. nice -n 10 python benchmarks/explain_fuzz.py --programs 100 --seed 21001 --out /tmp/ex.txt

Program i is tests/tensor/tensor_judge.py's program of seed `--seed + i` (symbolic sizes m, n). Each
of its statements runs as `explain STATEMENT` and as `explain STATEMENT at POINT` (the program's float
point), and the Result is printed by gradlang.render's four printers: to_plain, to_rich (rendered by a
rich Console), to_latex and to_json (dumped with allow_nan=False: JSON has no nan). Verdicts: "ok";
"error" (a proper GradlangError with a line and column, e.g. a documented refusal); "bug" (an
InternalError, an error without a position, a Python exception from running or printing, JSON that is
not JSON, or a derivation whose check line says ✗ or none at all). The numbers are not judged here:
tensor_fuzz.py judges the same statements against JAX.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradlang import Session  # noqa: E402
from gradlang.render import to_json, to_latex, to_plain, to_rich  # noqa: E402
from tests.tensor import tensor_judge, tensor_programs  # noqa: E402

CHECKED = ("grad(", "jacobian(", "hessian(", "diff(")  # derivations that end in a ✓ line


def printed(result) -> str:
    """The result in all four formats; the plain text is returned (the others must only not fail)."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(to_rich(result))
    to_latex(result)
    json.dumps(to_json(result), allow_nan=False)
    return to_plain(result)


def judge(session: Session, source: str, statement: str) -> tuple[str, str]:
    """(verdict, detail) of one explained statement."""
    try:
        texts = [printed(result) for result in session.iter_run(source)]
    except Exception as error:  # noqa: BLE001 - every failure is judged
        wrong = tensor_judge.internal(error)
        if wrong is None:
            return "error", f"{error.kind}: {error.message}"
        return "bug", wrong
    text = "\n".join(texts)
    if "✗" in text:
        return "bug", "a check says ✗:\n" + text
    if statement.startswith(CHECKED) and "✓" not in text:
        return "bug", "no ✓ check:\n" + text
    return "ok", ""


def run_program(seed: int, depth: int, out) -> collections.Counter:
    program = tensor_judge.make(seed, depth)
    session = Session(time_limit=tensor_judge.TIME_LIMIT)
    session.run(tensor_programs.DECLARATIONS)
    counts: collections.Counter = collections.Counter()
    at = tensor_judge.at_text(program.point, program.k)
    for statement, _ in tensor_judge.statements(program):
        for source in (f"explain {statement}", f"explain {statement} at {at}"):
            verdict, detail = judge(session, source, statement)
            counts[verdict] += 1
            if verdict == "bug":
                out.write(f"[bug] seed {seed}: {source}\n    {detail}\n\n")
                out.flush()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=21001)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--out", default="explain-fuzz-findings.txt")
    options = parser.parse_args()
    counts: collections.Counter = collections.Counter()
    with open(options.out, "w") as out:
        for i in range(options.programs):
            start = time.perf_counter()
            counts.update(run_program(options.seed + i, options.depth, out))
            print(f"{i + 1:5d} {time.perf_counter() - start:6.1f} s  {dict(counts)}", flush=True)
    print("programs:", options.programs, "statements:", sum(counts.values()), dict(counts), flush=True)


if __name__ == "__main__":
    main()
