"""The tensor fuzzer's points that mix literal and symbolic sizes: its long run.

    PYTHONPATH=. nice -n 10 python benchmarks/tensor_fuzz_points.py --programs 200 --seed 9000 --out /tmp/tfp.txt

Program i is tests/tensor/tensor_points.py's of seed `--seed + i`: the tensor
fuzzer's program with some sizes written as numbers, its statements at points
with literal-size tensors, lists and constants beside symbolic ones, negative
indices and `explain … at`, judged against the same statements at literal sizes.
benchmarks/tensor_fuzz.py runs it too (`--points N`). Results are in
benchmarks/FUZZ.md.
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fuzz_options import fuzz_parser  # noqa: E402

from tests.tensor import tensor_points  # noqa: E402

QUIET = {"ok", "refused", "error", "both-error", "documented-error"}  # every other verdict is written out in full


def main() -> None:
    parser = fuzz_parser(__doc__, programs=100, seed=9000, out="tensor-fuzz-points.txt")
    options = parser.parse_args()
    with open(options.out, "w") as out:
        points(options.seed, options.programs, options.depth, out)


def points(seed: int, count: int, depth: int, out) -> collections.Counter:
    """Run `count` programs from `seed`, writing every unusual finding to `out`; the count of each verdict."""
    counts: collections.Counter = collections.Counter()
    for i in range(count):
        start = time.perf_counter()
        mixed = tensor_points.make(seed + i, depth)
        findings = tensor_points.run_mixed(mixed)
        counts.update(f.verdict for f in findings)
        unusual = [f for f in findings if f.verdict not in QUIET]
        if unusual:
            out.write(tensor_points.describe(mixed) + "\n" + "\n".join(map(str, unusual)) + "\n\n")
            out.flush()
        print(f"points {i + 1:5d} {time.perf_counter() - start:6.1f} s  {dict(counts)}", flush=True)
    print("mixed-size programs:", count, "statements:", sum(counts.values()), dict(counts), flush=True)
    return counts


if __name__ == "__main__":
    main()
