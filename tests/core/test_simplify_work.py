"""simplify is bounded by a count of work, not by seconds, and no spelling of a constant costs more (issue #41).

Each program below used to take seconds in SymPy's simplify (a layer norm over
five scalars 5–7 s, a large rational power over 30 s, past the statement
limit), with `0.5` and `1/2` alike. Now every step of simplify is paid for
from a budget of units counted from the formula before the step runs
(expr/simplify_steps.py, expr/simplify_work.py): the meter never passes the
budget, both spellings end the same way (simplified, or stopped with the same
note), the value is still the formula's, and the printed bytes are the same
under every hash seed. No timing is asserted: the counts are the bound.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from gradlang import Session, limits
from gradlang.expr import bounded
from gradlang.expr.simplify_steps import simplify
from gradlang.expr.simplify_work import Meter, OutOfWork, expansion_work, polynomial_work
from tests.safety import SAFETY_NET

ROOT = Path(__file__).resolve().parents[2]
STOPPED = "budget of work ran out"

HOSTILE = {
    "layer norm of five scalars": """a, b, c, d, e: R
m = (a + b + c + d + e)/5
v = ((a - m)^2 + (b - m)^2 + (c - m)^2 + (d - m)^2 + (e - m)^2)/5
simplify(diff(HALF * 5 * v / sqrt(v + HALF), a))
""",
    "large rational powers": """x, y: R
simplify((x^(1000001/1000) + y^(7/3))^3 / (x^(1/1000) - y^(1/3)) - x^(333/7)*y^(HALF))
""",
    "nested sqrt, exp and log": """x, y, z: R
f = log(exp(sqrt(x^2 + sqrt(y^2 + exp(log(z^2 + HALF)))))) / sqrt(HALF + exp(-sqrt(x^2 + y^2 + z^2)))
simplify(diff(f, x) + diff(f, y) + diff(f, z))
""",
    "layer norm at symbolic size": """n: size
x, g, beta, t: R^n
mu = mean(x)
v = mean((x - mu)^2)
xhat = (x - mu) / sqrt(v + HALF)
L = HALF * sum((g*xhat + beta - t)^2)
simplify(grad(L, x))
""",
    "softmax of twelve": """x: R^12
y = softmax(x)
simplify(diff(log(y[0]) * HALF + y[1]^2 * HALF, x[0]))
""",
}
SPELLINGS = ("0.5", "1/2")


class _Recording(Meter):
    """The meters the session's simplifications open, kept to read their counts."""

    opened: list = []

    def __init__(self, units: int):
        super().__init__(units)
        _Recording.opened.append(self)


def _run(source: str, monkeypatch):
    bounded._simplified.cache_clear()
    _Recording.opened = []
    monkeypatch.setattr(bounded, "Meter", _Recording)
    return Session().run(source)[-1]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_spelling_ends_the_same_way_within_the_budget(name, monkeypatch):
    ends = []
    for half in SPELLINGS:
        result = _run(HOSTILE[name].replace("HALF", half), monkeypatch)
        assert _Recording.opened and all(m.spent <= m.budget == limits.SIMPLIFY_WORK for m in _Recording.opened)
        ends.append((any(STOPPED in w for w in result.warnings), _head(result.value)))
    assert ends[0] == ends[1], ends


def _head(value) -> tuple:
    """The printed result's class: the functions it is written with (a root counts as one), not its numbers."""
    if not isinstance(value, sp.Basic):
        return ()
    kinds = {type(f).__name__ for f in value.atoms(sp.Function)}
    return tuple(sorted(kinds | ({"root"} if any(not p.exp.is_Integer for p in value.atoms(sp.Pow)) else set())))


@pytest.mark.parametrize("name", ["layer norm of five scalars", "nested sqrt, exp and log", "large rational powers"])
def test_a_stopped_simplification_is_still_the_formula(name, monkeypatch):
    source = HOSTILE[name].replace("HALF", "1/2")
    result = _run(source, monkeypatch)
    assert any(STOPPED in w for w in result.warnings), result.warnings  # these pass the budget
    raw = Session().run(source.replace("simplify(", "("))[-1].value
    rng = random.Random(41)
    for _ in range(3):
        point = {s: sp.Float(rng.uniform(0.5, 2.0)) for s in raw.free_symbols}
        assert complex(result.value.evalf(subs=point)) == pytest.approx(complex(raw.evalf(subs=point)), rel=1e-9)


def test_within_the_budget_the_steps_are_sympys():
    """Under the budget the result is sympy.simplify's own, step for step (the examples' goldens hold)."""
    x, y = sp.symbols("x y", real=True)
    for expr in (sp.sin(x) ** 2 + sp.cos(x) ** 2, (x ** 2 - y ** 2) / (x - y), sp.exp(x) * sp.exp(-x) + sp.log(x * y),
                 sp.sqrt(x ** 2 + 2 * x + 1) / (x + 1), (1 - sp.exp(x) / (sp.exp(x) + sp.exp(y))) * sp.exp(y)):
        meter = Meter(limits.SIMPLIFY_WORK)
        assert simplify(expr, meter) == sp.simplify(expr) and meter.spent < meter.budget


def test_the_counts_stop_at_the_budget_whatever_the_formula():
    x, y, z, w = sp.symbols("x y z w")
    for expr, count in (((x + y + z + w + 1) ** 60, polynomial_work),  # 635 376 terms from 5 nodes
                        (x ** sp.Rational(1000001, 1000) - 1, polynomial_work),  # degree 1 000 001 in x^(1/1000)
                        (sum(x ** k for k in range(100)) / (y + z + 1) ** 20, expansion_work)):  # 100 copies of 231 terms
        meter = Meter(limits.SIMPLIFY_WORK)
        with pytest.raises(OutOfWork):
            count(expr, meter)
        assert meter.spent == meter.budget
    small = Meter(limits.SIMPLIFY_WORK)
    polynomial_work((x ** 2 - 1) / (x - 1), small)
    assert 0 < small.spent < 100


def test_the_count_does_not_read_the_numbers():
    """0.5 and 1/2 are one monomial each: the count of a formula is its structure's."""
    a, b = sp.symbols("a b")
    counts = []
    for half in (sp.Float(0.5), sp.Rational(1, 2)):
        meter = Meter(10 ** 6)
        expansion_work((a + half * b) ** 4 / (half + a * b) ** 2 + half / (a - b), meter)
        counts.append(meter.spent)
    assert counts[0] == counts[1]


@pytest.mark.parametrize("half", SPELLINGS)
def test_the_printed_bytes_are_the_same_under_every_hash_seed(half, tmp_path):
    program = tmp_path / "ln.grad"
    program.write_text(HOSTILE["layer norm of five scalars"].replace("HALF", half)
                       + HOSTILE["nested sqrt, exp and log"].replace("HALF", half))
    outputs = set()
    for seed in ("0", "1", "4141"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-m", "gradlang", "--plain", str(program)], env=env,
                              capture_output=True, timeout=SAFETY_NET, check=False)
        outputs.add(done.stdout + done.stderr)
    assert len(outputs) == 1
