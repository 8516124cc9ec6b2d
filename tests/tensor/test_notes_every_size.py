"""The notes of a point are the same whatever the sizes are spelled (issue #36).

A kink the point sits on (a tie of max, sign's jump under abs's gradient, relu's
kink, a where on its boundary), and a name the formula lacks, were noted at
literal sizes up to 128 components given (read off the components) and never at
`R^n`. They are now found on the one tensor formula by whole-array NumPy, so
each program below prints the same, value and notes, at `R^3` and at `R^n`, and
at a size of 300 too.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session


def _printed(size: str, body: str) -> list:
    """(value, warnings) of each statement after the declarations, as printed."""
    declared = f"x: R^{size}\ny: R^{size}\nW: R^(2,{size})\nM: R^({size},{size})\n"
    return [(r.text, r.warnings) for r in Session().run(declared + body)]


PROGRAMS = [
    ("max(x) at x = [1.0, 3.0, 3.0]", "max(x[0], x[1], x[2]) has a tie: 2 of its 3"),
    ("grad(max(x), x) at x = [3.0, 1.0, 3.0]", "max(x[0], x[1], x[2]) has a tie"),
    ("min(x) at x = [2.0, 2.0, 2.0]", "min(x[0], x[1], x[2]) has a tie: 3 of its 3"),
    ("grad(sum(abs(x)), x) at x = [1.0, 0.0, -2.0]", "sign(x[1]) is at a jump (x[1] = 0)"),
    ("grad(sum(relu(W @ x)), x) at x = [1.0, 0.0, 0.0], W = [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0]]",
     "relu(W[1, 0]*x[0] + W[1, 1]*x[1] + W[1, 2]*x[2]) is at its kink"),
    ("sum(where(x > y, x, y)) at x = [1.0, 2.0, 3.0], y = [0.0, 2.0, 1.0]", "where(x[1] > y[1], …) is on the boundary"),
    ("grad(sum(max(x, y)), x) at x = [1.0, 2.0, 3.0], y = [0.0, 2.0, 1.0]", "max(x[1], y[1]) has a tie: 2 of its 2"),
    ("grad(sum(max(M, axis=1)), M) at M = [[1.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 0.0, 0.0]]",
     "max(M[0, 0], M[0, 1], M[0, 2]) has a tie"),
    ("exp(x[0] - sg(max(x))) at x = [3.0, 1.0, 3.0]", "inside stop_gradient"),
    ("sum(x) at x = [1.0, 2.0, 3.0], xx = 2.0", "'xx' does not occur in the expression"),
]


@pytest.mark.parametrize("body, said", PROGRAMS, ids=[p[1][:30] for p in PROGRAMS])
def test_a_point_on_a_kink_is_noted_alike_at_r3_and_rn(body, said):
    literal, symbolic = _printed("3", body), _printed("n", body)
    assert literal == symbolic
    assert any(said in w for w in literal[-1][1]), literal


@pytest.mark.parametrize("body", [
    "max(x) at x = [1.0, 2.0, 3.0]",
    "grad(sum(abs(x)), x) at x = [1.0, 0.5, -2.0]",
    "where(x == max(x), 1, 0) at x = [1.0, 3.0, 2.0]",  # on the boundary, but both branches are constants
    "grad(sum(where(x >= 0, x^2, 0)), x) at x = [0.0, 1.0, -1.0]",  # both branches have slope 0 there
    "grad(prod(x), x) at x = [1.0, 0.0, 2.0]",  # prod's gradient picks its exact branch at a zero: no convention
    "hessian(prod(x), x) at x = [1.0, 0.0, 0.0]",
])
def test_away_from_kinks_nothing_is_noted_at_either_size(body):
    literal, symbolic = _printed("3", body), _printed("n", body)
    assert literal == symbolic and literal[-1][1] == ()


def test_above_128_components_the_notes_are_still_said(tmp_path):
    """300 components given (the old bound was 128): the same notes at R^300 and R^n."""
    point = np.linspace(-1.0, 1.0, 300)
    point[[10, 20]] = 0.0
    np.save(tmp_path / "x.npy", point)
    body = f'grad(sum(abs(x)), x)[0] at x = load("{tmp_path / "x.npy"}")'
    literal, symbolic = (_printed(size, body) for size in ("300", "n"))
    assert literal == symbolic
    assert [w.split(" is at")[0] for w in literal[-1][1]] == ["sign(x[20])", "sign(x[10])"]


@pytest.mark.parametrize("size", ["3", "n"])
def test_a_kink_whose_argument_is_a_constant_tensor_is_read_as_numbers(size):
    """max(sum(zeros(3)^2), eps): the max's argument is a constant formula (what `v * 0.0` becomes, as
    F.normalize of a zero row translates), no float; the notes evaluate it as NumPy does, and the value is
    the all-zero row's: 0 (it was an InternalError, 'Cannot convert expression to float')."""
    head = "n: size\nx: R^n" if size == "n" else "x: R^3"
    results = Session().run(f"{head}\nu = x * 0.0\nsum(u / sqrt(max(sum(u * u), 1e-24))) at x = [0.5, -1.0, 2.0]")
    assert float(results[-1].value) == 0.0
