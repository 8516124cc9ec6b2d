"""Deciding a ledger's question numerically when the rewrites cannot: at a few random points.

A stop's verdict asks whether the term it removes is 0, and whether it only
cancels gradient the surrogate has. The bounded rewrites decide that for
the forms they know; for the rest the terms are evaluated, as whole-array
NumPy formulas (expr/tensor/numbers.py), at `POINTS` points drawn from one
fixed seed: the same points on every run, so the same verdict and the same
bytes. Half the points are positive (log and sqrt are defined there), half
of either sign (a where or relu branch that positive points never take). A
point where a term is not finite is skipped; the verdict says how many
points decided it.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.walk import dag_atoms

POINTS = 8
SEED = 20261126
SIZE = 3            # each symbolic size, at the points
RELATIVE = 1e-9     # a term this small beside the gradient (or 1) is 0


@dataclass(frozen=True)
class Sample:
    """The terms at the points that gave finite numbers: one tuple of arrays per point."""

    values: tuple

    @property
    def count(self) -> int:
        return len(self.values)


def _symbols(formulas) -> tuple[list, list]:
    """(Vars and scalar symbols, size symbols) of the formulas, each sorted by name."""
    atoms: set = set()
    for f in formulas:
        atoms |= dag_atoms(f, sp.Symbol) if isinstance(f, sp.Basic) else set()
    sizes = {s for a in atoms if isinstance(a, Var) for s in a.shape if isinstance(s, sp.Symbol)}
    sizes |= {a for a in atoms if shapes.is_size(a)}
    values = [a for a in atoms if a not in sizes]
    return sorted(values, key=lambda s: s.name), sorted(sizes, key=lambda s: s.name)


def _draw(rng, symbol, sizes: dict, positive: bool):
    low = 0.2 if positive else -1.8
    if isinstance(symbol, Var):
        shape = tuple(int(sizes.get(n, n)) for n in symbol.shape)
        return rng.uniform(low, 1.8, size=shape)
    return float(rng.uniform(low, 1.8))


def sample(formulas) -> Sample:
    """The formulas (tensor formulas or scalar expressions) at the random points."""
    import numpy as np

    from gradlang.errors import GradlangError
    from gradlang.expr.tensor import numbers

    values, size_symbols = _symbols(formulas)
    sizes = {s: SIZE for s in size_symbols}
    rng = np.random.default_rng(SEED)
    taken = []
    for k in range(POINTS):
        point = {s: _draw(rng, s, sizes, positive=k % 2 == 0) for s in values}
        try:
            numbers_at = tuple(np.asarray(numbers.evaluate(f, point, sizes), dtype=float) for f in formulas)
        except (GradlangError, TypeError, ValueError, ArithmeticError, IndexError):
            continue
        if all(np.all(np.isfinite(a)) for a in numbers_at):
            taken.append(numbers_at)
    return Sample(tuple(taken))


def zero_at(term, beside=()) -> int | None:
    """At how many random points `term` is 0 (relative to the size of `beside`, or 1): all that gave
    numbers, or None when it is not 0 at one of them."""
    import numpy as np

    taken = sample([term, *beside])
    for numbers_at in taken.values:
        scale = max([1.0] + [float(np.max(np.abs(a))) for a in numbers_at[1:] if a.size])
        if np.max(np.abs(numbers_at[0]), initial=0.0) > RELATIVE * scale:
            return None
    return taken.count


def cancels(removed, kept) -> bool:
    """Wherever the removed term is not 0, does it cancel the surrogate's gradient (kept + removed = 0)?

    Then the stop did not take a gradient away: it gave the surrogate one the
    function lacks (the straight-through estimator)."""
    import numpy as np

    taken = sample([removed, kept])
    if not taken.count:
        return False
    for r, k in taken.values:
        r, k = np.broadcast_arrays(r, k)
        scale = RELATIVE * max(1.0, float(np.max(np.abs(k), initial=0.0)))
        moved = np.abs(r) > scale
        if np.any(np.abs(r + k)[moved] > scale):
            return False
    return True
