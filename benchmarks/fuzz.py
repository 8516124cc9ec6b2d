"""The long differential fuzz run (issue 12): random programs against JAX, with a summary.

    PYTHONPATH=. python benchmarks/fuzz.py --programs 3000 --seed 1 --out /tmp/fuzz.txt

Draws programs from tests/fuzz/fuzz_programs.py, judges every statement with
tests/fuzz/differential.py, prints one line per program and, at the end, the
count of each verdict; every finding that is not ok goes to --out in full.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fuzz"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from differential import describe, run_program  # noqa: E402
from fuzz_programs import programs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="fuzz-findings.txt")
    options = parser.parse_args()
    counts: collections.Counter = collections.Counter()
    out = open(options.out, "w")
    done = [0]

    @seed(options.seed)
    @settings(max_examples=options.programs, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(programs())
    def search(program):
        start = time.perf_counter()
        findings = run_program(program)
        counts.update(f.verdict for f in findings)
        unusual = [f for f in findings if f.verdict != "ok"]
        if unusual:
            out.write(describe(program) + "\n" + "\n".join(map(str, unusual)) + "\n\n")
            out.flush()
        done[0] += 1
        print(f"{done[0]:5d} {time.perf_counter() - start:6.1f} s  {dict(counts)}", flush=True)

    search()
    print("statements:", sum(counts.values()), dict(counts))


if __name__ == "__main__":
    main()
