"""The long run of the tensor-engine fuzzer: random programs at symbolic size, and hostile ones.

    PYTHONPATH=. nice -n 10 python benchmarks/tensor_fuzz.py --programs 300 --hostile 1000 --seed 1000 --out /tmp/tf.txt
    PYTHONPATH=. nice -n 10 python benchmarks/tensor_fuzz.py --programs 0 --hostile 0 --rank3 200 --seed 1000

Program i is drawn from seed `--seed + i` by tests/tensor/tensor_programs.py and
judged statement by statement by tests/tensor/tensor_judge.py (its docstring
has the oracles and verdicts); hostile program i from the same seed by
tests/tensor/tensor_hostile.py. One line per program; every finding that is
not ok (or refused, or a proper error of a hostile program) goes to --out in
full; at the end, the count of each verdict. Results are in benchmarks/FUZZ.md.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.tensor import tensor_hostile, tensor_judge, tensor_rank3  # noqa: E402
from benchmarks import tensor_fuzz_points  # noqa: E402

QUIET = {"ok", "refused", "error"}  # every other verdict is written out in full


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--hostile", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--points", type=int, default=0, help="programs at points mixing literal and symbolic sizes")
    parser.add_argument("--rank3", type=int, default=0, help="rank-3 programs with broadcasting and axes, against JAX")
    parser.add_argument("--out", default="tensor-fuzz-findings.txt")
    options = parser.parse_args()
    with open(options.out, "w") as out:
        programs(options, out)
        hostile(options, out)
        tensor_fuzz_points.points(options.seed, options.points, options.depth, out)
        rank3(options, out)


def programs(options, out) -> None:
    counts: collections.Counter = collections.Counter()
    for i in range(options.programs):
        start = time.perf_counter()
        program = tensor_judge.make(options.seed + i, options.depth)
        findings = tensor_judge.run_program(program)
        counts.update(f.verdict for f in findings)
        _write(out, tensor_judge.describe(program), findings)
        print(f"{i + 1:5d} {time.perf_counter() - start:6.1f} s  {dict(counts)}", flush=True)
    print("programs:", options.programs, "statements:", sum(counts.values()), dict(counts), flush=True)


def hostile(options, out) -> None:
    counts: collections.Counter = collections.Counter()
    for i in range(options.hostile):
        source = tensor_hostile.draw(random.Random(options.seed + i))
        finding = tensor_judge.run_hostile(source)
        counts[finding.verdict] += 1
        _write(out, f"hostile, seed {options.seed + i}", [finding])
        if (i + 1) % 50 == 0:
            print(f"hostile {i + 1:5d}  {dict(counts)}", flush=True)
    print("hostile programs:", options.hostile, dict(counts), flush=True)


def rank3(options, out) -> None:
    """Rank-3 programs (tests/tensor/tensor_rank3.py): loss and gradients against JAX at both spellings of sizes."""
    counts: collections.Counter = collections.Counter()
    for i in range(options.rank3):
        finding = tensor_rank3.run(options.seed + i, options.depth)
        counts[finding.verdict] += 1
        _write(out, f"rank 3, seed {options.seed + i}", [finding])
        print(f"rank3 {i + 1:5d}  {dict(counts)}", flush=True)
    if options.rank3:
        print("rank-3 programs:", options.rank3, dict(counts), flush=True)


def _write(out, head: str, findings: list) -> None:
    unusual = [f for f in findings if f.verdict not in QUIET]
    if unusual:
        out.write(head + "\n" + "\n".join(map(str, unusual)) + "\n\n")
        out.flush()


if __name__ == "__main__":
    main()
