"""A fixed slice of the tensor-engine fuzzer: random programs at symbolic size, and hostile ones.

The programs are drawn from fixed seeds (derandomized, as the suite's other
fuzz tests are), so a failure here names a seed that `benchmarks/tensor_fuzz.py
--seed S --programs 1` reproduces. Each statement is judged by
tests/tensor/tensor_judge.py against the component engine at literal sizes (or
JAX where the component engine has no such builtin); the long run lives in
benchmarks/tensor_fuzz.py, its results in benchmarks/FUZZ.md.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("jax")  # the second oracle; the test extra installs it

from tests.tensor import tensor_hostile, tensor_judge  # noqa: E402

ALLOWED = {"ok", "refused", "documented-error", "both-error", "ieee", "no-oracle", "convention?", "slow-exact"}
PROGRAM_SEEDS = range(14)
HOSTILE_SEEDS = range(80)


@pytest.mark.parametrize("seed", PROGRAM_SEEDS)
def test_a_random_program_agrees_with_the_component_engine(seed):
    program = tensor_judge.make(seed, depth=2)
    bugs = [f for f in tensor_judge.run_program(program) if f.verdict not in ALLOWED]
    assert not bugs, tensor_judge.describe(program) + "\n" + "\n".join(map(str, bugs))


def test_hostile_programs_fail_only_with_errors_a_user_can_read():
    findings = [tensor_judge.run_hostile(tensor_hostile.draw(random.Random(seed))) for seed in HOSTILE_SEEDS]
    bugs = [f for f in findings if f.verdict == "bug"]
    assert not bugs, "\n".join(map(str, bugs))
