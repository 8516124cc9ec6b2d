"""Random programs written twice, at symbolic and at literal sizes: the same numbers and the same printed formula.

One engine (docs/architecture.md, "Literal sizes"): `x: R^3` is the formula
`x: R^n` is, so each statement of a random program of the tensor fuzzer
(tensor_programs.py: every tensor operation, with stops) must give the same
numbers at the same float point, to 1e-12, and print the same text once the
sizes and the index k are written as their numbers. Two display choices of
render/shown.py are allowed to differ, and only they: a value that is all
numbers prints as its numbers (`[0, 0]`, not `zeros(2)`), and a formula that
picks components (`x[0]`, `W[k]`) may print by them.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang import Session
from tests.tensor import tensor_judge as judge
from tests.tensor import tensor_programs as tp

SEEDS = range(4)
PICKS = re.compile(r"\[(\d+|k)\]|\[argmax|row")
NUMBERS_ONLY = re.compile(r"^[\[\]\d\s,.\-e+]*$|^(nan|inf|-inf)$")


def _sessions(p: judge.Program) -> tuple:
    symbolic, literal = Session(time_limit=judge.TIME_LIMIT), Session(time_limit=judge.TIME_LIMIT)
    symbolic.run(tp.DECLARATIONS)
    literal.run(tp.LITERAL.format(m=p.m, n=p.n))
    return symbolic, literal


def _text(session: Session, source: str):
    try:
        return session.run(source)[-1].text
    except Exception as error:  # noqa: BLE001 - a refusal must be the same at both spellings
        return f"{type(error).__name__}"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_program_gives_the_same_numbers_at_literal_and_symbolic_sizes(seed):
    p = judge.make(seed, depth=2)
    symbolic, literal = _sessions(p)
    for text, _ in judge.statements(p):
        by_name = judge.run(symbolic, f"{text} at {judge.at_text(p.point, p.k)}")
        by_number = judge.run(literal, f"{judge.literal(text, p)} at {judge.at_text(p.point, None)}")
        if isinstance(by_name, Exception) or isinstance(by_number, Exception):
            assert type(by_name) is type(by_number), (text, by_name, by_number)
            continue
        assert by_name.shape == by_number.shape, text
        np.testing.assert_allclose(by_number, by_name, rtol=1e-12, atol=1e-300, err_msg=text)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_program_prints_the_same_formula_at_literal_and_symbolic_sizes(seed):
    p = judge.make(seed, depth=2)
    symbolic, literal = _sessions(p)
    for text, _ in judge.statements(p):
        by_name = _folded(judge.literal(_text(symbolic, text), p))
        by_number = _text(literal, judge.literal(text, p))
        if by_name == by_number or NUMBERS_ONLY.match(by_number) or PICKS.search(text):
            continue
        pytest.fail(f"{text}\n  at R^n:  {by_name}\n  at R^{p.n}: {by_number}")


# integer arithmetic of sizes (a range's bound m + n, concat's length) once the sizes are numbers: 2 + 1 is 3
SIZE_ARITHMETIC = re.compile(r"(?<![\w.^)\]])\d+(?:\s*[-+*]\s*\d+)+(?![\w.(\[^*])")


def _folded(text: str) -> str:
    """Sums and products of sizes written as numbers, folded as SymPy folds them at literal sizes."""
    import sympy as sp

    return SIZE_ARITHMETIC.sub(lambda match: str(sp.sympify(match.group(0))), text)


def test_sizes_written_as_numbers_fold():
    assert _folded("(s*t1)[2:2 + 1] + zeros(2*3 - 1) + 2*x + x^2 + 1") == "(s*t1)[2:3] + zeros(5) + 2*x + x^2 + 1"


def test_the_printed_check_can_fail():
    """The exceptions are narrow: a formula printed by its components where nothing picks one is caught."""
    assert not NUMBERS_ONLY.match("[y[0]^2, x[0]]") and NUMBERS_ONLY.match("[[0, 0], [1.5, -2e-3]]")
    assert not PICKS.search("max(dot(y, y), min(x))") and PICKS.search("sin((x)[0])")
