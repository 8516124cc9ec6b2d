"""The differential fuzzer (issue 12): random programs, every statement against JAX.

The normal suite runs a fixed, derandomized handful of programs (a few seconds
each). `pytest -m fuzz` runs the long search (FUZZ_EXAMPLES programs, 2000 unless
set; `benchmarks/fuzz.py` does the same from the command line with a summary).
A disagreement that gradlang's documented conventions explain is reported as
one; every other disagreement, InternalError or slow statement fails.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

pytest.importorskip("jax")  # the oracle; the test extra installs it, without it these tests skip
from differential import describe, run_program  # noqa: E402
from fuzz_programs import programs  # noqa: E402

ALLOWED = {"ok", "convention", "ieee-algebra", "overflow", "documented-error"}
QUICK = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "2000")), deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


def _check(program) -> None:
    bugs = [f for f in run_program(program) if f.verdict not in ALLOWED]
    assert not bugs, describe(program) + "\n\n" + "\n".join(map(str, bugs))


@QUICK
@given(programs(depth=2))
def test_random_programs_agree_with_jax(program):
    _check(program)


@pytest.mark.fuzz
@LONG
@given(programs())
def test_long_fuzz_run(program):
    _check(program)
