"""Limits are checked before memory is spent (issue #38, hostile-input probe).

A formula of symbolic size evaluated at a large point is refused from its
shapes, before NumPy or the component engine allocates: the probe's
`hessian(logsumexp(x), x) at x = linspace(0, 1, 100000)` asked NumPy for
74.5 GiB, and `eye(n) at n = 100000` grew to 3.7 GiB of components before
its LimitError. Each hostile case runs in a child under a 4 GiB address-space
limit, so a regression is an error here, never a machine out of memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradlang import LimitError, Session, limits
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]
GIB = 1024 ** 3


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))


def _cli(code: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "80"}
    environment.pop("GRADLANG_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "gradlang", "--plain", "-e", code], capture_output=True,
                          text=True, env=environment, timeout=SAFETY_NET, preexec_fn=_capped)


@pytest.mark.parametrize("formula, needs", [
    ("hessian(logsumexp(x), x)", "298.0 GiB"),
    ("jacobian(softmax(x), x)", "298.0 GiB"),
    ("diag(x)", "74.5 GiB"),
    ("outer(x, x)", "74.5 GiB"),
])
def test_a_symbolic_size_at_a_huge_point_is_refused_from_its_shapes(formula, needs):
    code = f"x: R^n; {formula} at x = linspace(0, 1, 100000)"
    run = _cli(code)
    assert run.returncode == 1 and run.stdout == ""
    first, line, caret = run.stderr.splitlines()[:3]
    assert first == (f"<-e>:1:9: LimitError: evaluating this at the point (its largest array, 100000×100000, is "
                     f"74.5 GiB) needs about {needs} of memory, above the limit of 4.0 GiB; raise it with --max-memory "
                     "(Session(max_memory=...) in Python)")
    assert line == f"    {code}" and caret == "    " + " " * 8 + "^" * (len(code) - 8)


def test_components_are_counted_before_they_are_built():
    run = _cli("x: R^n; eye(n) at n = 100000")
    assert run.returncode == 1
    assert run.stderr.splitlines()[0] == (
        "<-e>:1:9: LimitError: 100000×100000 is 10000000000 components, above the limit of 100000")


def test_a_result_too_large_to_print_is_placed_with_its_caret():
    run = _cli("x: R^n; sum(x^2) at n = 100000")
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "<-e>:1:9: LimitError: the result has about 3e+05 nodes even with its shared parts named, above the "
        "limit of 200000; evaluate it at a point with `at` instead",
        "    x: R^n; sum(x^2) at n = 100000",
        "            ^^^^^^^^^^^^^^^^^^^^^^",
    ]


def test_the_memory_bound_counts_every_array_held(monkeypatch):
    """outer(x, x) at 1000 holds x (8 kB) and the 1000×1000 matrix (8 MB): allowed at 8.1 MB, not below."""
    program = "x: R^n; outer(x, x) at x = linspace(0, 1, 1000)"
    grid = np.linspace(0, 1, 1000)
    np.testing.assert_array_equal(Session().eval(program), np.outer(grid, grid))
    monkeypatch.setattr(limits, "MAX_MEMORY_BYTES", 8 * 1000 * 1000)
    with pytest.raises(LimitError, match=r"needs about 7\.6 MiB of memory, above the limit of 7\.6 MiB; raise it with --max"):
        Session().run(program)


def test_matrix_products_are_bounded_by_their_multiply_adds(monkeypatch):
    rows = "[" + ", ".join("[" + ", ".join(f"{(i * 20 + j) / 7:.1f}" for j in range(20)) + "]"
                           for i in range(20)) + "]"
    program = f"A: R^(n,n); sum(A @ A @ A) at A = {rows}"
    matrix = np.array([[float(f"{(i * 20 + j) / 7:.1f}") for j in range(20)] for i in range(20)])
    np.testing.assert_allclose(float(Session().eval(program)), np.sum(matrix @ matrix @ matrix), rtol=1e-12)
    monkeypatch.setattr(limits, "MAX_NUMERIC_PRODUCTS", 2 * 20 ** 3 - 1)  # two products of 20³ each
    with pytest.raises(LimitError, match=r"1\.6e\+04 multiply-adds in @, einsum, inv and det, above the limit") as caught:
        Session().run(program)
    assert (caught.value.line, caught.value.column) == (1, 13)
