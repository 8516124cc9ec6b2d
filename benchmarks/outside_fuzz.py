"""An outside differential fuzzer's long run: random tensor programs at symbolic sizes against JAX float64.

    PYTHONPATH=. nice -n 10 python benchmarks/outside_fuzz.py --programs 40 --seed 20000 --out /tmp/outside.txt

Program i is tests/fuzz/outside_judge.py's of seed `--seed + i` (generator in
tests/fuzz/outside_programs.py and outside_ops.py, written apart from the tensor
fuzzer): each statement at symbolic sizes, the same with the sizes and indices written
as numbers, JAX float64 on the drawn tree, and the plain text read back. Results are
in benchmarks/FUZZ.md.
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fuzz_options import fuzz_parser  # noqa: E402

from tests.fuzz import outside_judge  # noqa: E402

QUIET = {"ok"}


def main() -> None:
    parser = fuzz_parser(__doc__, programs=40, seed=20000, out="outside-fuzz.txt")
    parser.add_argument("--no-plain", action="store_true")
    options = parser.parse_args()
    counts: collections.Counter = collections.Counter()
    with open(options.out, "w") as out:
        for i in range(options.programs):
            start = time.perf_counter()
            program = outside_judge.make(options.seed + i, options.depth)
            findings = outside_judge.judge(program, plain=not options.no_plain)
            counts.update(f.verdict for f in findings)
            unusual = [f for f in findings if f.verdict not in QUIET]
            if unusual:
                out.write(outside_judge.describe(program) + "\n" + "\n".join(map(str, unusual)) + "\n\n")
                out.flush()
            print(f"outside {options.seed + i} {time.perf_counter() - start:6.1f} s  {dict(counts)}", flush=True)
    print("programs:", options.programs, "statements:", sum(counts.values()), dict(counts), flush=True)


if __name__ == "__main__":
    main()
