"""A fixed slice of the outside differential fuzzer (benchmarks/outside_fuzz.py): a few seeds, quickly.

Each program (tests/fuzz/outside_judge.py) runs its statements at symbolic sizes, at literal
sizes and in JAX float64, and reads each result's plain text back; a wrong number, an internal
error, a disagreement of numbers between literal and symbolic sizes, or a plain text that reads
back to other numbers fails. Refusals are allowed here (they are listed by the long run).
"""

from __future__ import annotations

import pytest

pytest.importorskip("jax")

from tests.fuzz import outside_judge  # noqa: E402

BUGS = {"wrong", "internal", "plain"}
SEEDS = (20038, 20006, 3, 7, 11)


@pytest.mark.parametrize("seed", SEEDS)
def test_an_outside_program_agrees_with_jax_and_with_its_literal_sizes(seed):
    program = outside_judge.make(seed, depth=3)
    findings = outside_judge.judge(program)
    bugs = [f for f in findings if f.verdict in BUGS
            or (f.verdict == "disagree" and not f.detail.startswith("only the"))]
    assert not bugs, outside_judge.describe(program) + "\n" + "\n".join(map(str, bugs))
