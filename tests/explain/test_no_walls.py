"""No walls (issue 40): every derivation of tests/ and examples/ (tests/explain/every_program.py) reads in at most
100 columns and 25 plain lines, as the CLI prints it ("# " included); benchmarks/derivation_walls.py reports
them all.

The derivations listed in WALLS still pass a limit, each for the reason given; a change that shortens one
may remove it from the list, one that lengthens any other derivation fails here.
"""

from __future__ import annotations

import pytest

from benchmarks.derivation_walls import COLUMNS, LINES, measure
from tests.explain.every_program import every_program

# a Hessian entry by scalars (latex:hessian_entry, 38 lines) left the list: it now derives its second derivative
# from the first's simpler form and refers to a step met again by another variable (25 lines)
# VICReg (tests/explain/hidden_like) left it too: a rule that does not fit beside its line gives its name
WALLS: dict = {}
PROGRAMS = [(name, source) for name, source in every_program() if name not in WALLS]


@pytest.mark.parametrize("name, source", PROGRAMS, ids=[name for name, _ in PROGRAMS])
def test_the_derivation_has_no_wall(name, source):
    for columns, lines, _ in measure(source):
        assert columns <= COLUMNS and lines <= LINES, (name, columns, lines)


def test_the_listed_walls_are_programs_of_the_set():
    names = {name for name, _ in every_program()}
    assert set(WALLS) <= names


@pytest.mark.parametrize("name", sorted(WALLS))
def test_a_listed_wall_is_still_a_wall(name):
    """The list is strict: a derivation that now fits is taken off it (and kept off by the test above)."""
    [source] = [source for n, source in every_program() if n == name]
    assert any(columns > COLUMNS or lines > LINES for columns, lines, _ in measure(source)), name
