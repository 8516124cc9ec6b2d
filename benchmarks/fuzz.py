"""The long fuzz runs (issues 12 and 16): random programs against JAX, or through every format.

    PYTHONPATH=. nice -n 10 python benchmarks/fuzz.py --programs 3000 --seed 1 --out /tmp/fuzz.txt
    PYTHONPATH=. nice -n 10 python benchmarks/fuzz.py --grammar --programs 100000 --seed 1 --out /tmp/grammar.txt

The differential run draws programs from tests/fuzz/fuzz_programs.py, judges
every statement with tests/fuzz/differential.py, prints one line per program
and, at the end, the count of each verdict; every finding that is not ok goes
to --out in full. The grammar run (--grammar) draws as many programs from each
of tests/fuzz/test_grammar_fuzz.py's two strategies (the grammar itself, and
well-typed programs), runs each through all four output formats, and writes
every InternalError or traceback to --out, going on after each. Results are in
benchmarks/FUZZ.md.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "fuzz"), str(ROOT)]  # differential.py, and the `tests` package it imports

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from differential import describe, run_program  # noqa: E402
from fuzz_programs import programs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="fuzz-findings.txt")
    parser.add_argument("--grammar", action="store_true", help="the grammar fuzzer (all four formats)")
    parser.add_argument("--strategies", default="grammar,typed", help="with --grammar: which of grammar,typed")
    options = parser.parse_args()
    if options.grammar:
        grammar(options)
    else:
        differential(options)


def grammar(options) -> None:
    """Grammar-generated and well-typed programs through every format: count them and their failures."""
    from test_grammar_fuzz import _programs, _typed_programs, check_program

    out = open(options.out, "w")
    chosen = options.strategies.split(",")
    for name, strategy in [(n, make()) for n, make in (("grammar", _programs), ("typed", _typed_programs)) if n in chosen]:
        counts: collections.Counter = collections.Counter()
        start = time.perf_counter()

        @seed(options.seed)
        @settings(max_examples=options.programs, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def search(source):
            try:
                check_program(source)
                counts["clean"] += 1
            except Exception as failure:  # noqa: BLE001 - every failure is a finding, and the run goes on
                counts["failed"] += 1
                out.write(f"{source!r}\n{failure}\n\n")
                out.flush()
            if sum(counts.values()) % 500 == 0:
                print(f"{name}: {dict(counts)} in {time.perf_counter() - start:.0f} s", flush=True)

        search()
        print(f"{name} programs:", sum(counts.values()), dict(counts), flush=True)


def differential(options) -> None:
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
