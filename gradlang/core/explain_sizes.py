"""The closing check of a tensor derivation, one mechanism at every size: does it equal grad?

The check says which kind it is (issues 36, 40), in the same words at `R^3`
and `R^n` wherever it can prove the equality:

- **symbolic**: the derived formula is grad's, as written or once the tensor
  rewrites reduce their difference to 0: equal at every size and point;
- **numeric**: else, both formulas at one random point (whole-array NumPy),
  at a symbolic size with random sizes too, drawn from a fixed seed so the
  same program prints the same bytes; the line names the sizes it took.

A formula NumPy cannot evaluate (an index that a scalar gives) is left
unchecked at a symbolic size rather than given a verdict it has no evidence
for; at a literal size explain_views checks its components instead.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.listed import is_list
from gradlang.expr.tensor.nodes import Literal, Var, shape_of
from gradlang.expr.tensor.shapes import as_basic, is_size
from gradlang.expr.walk import dag_atoms

SEED = 40           # the random point and sizes of a numeric check: fixed, so the output is the same bytes
SIZES = (2, 5)      # each size drawn from 2..5: small enough to be instant, large enough to tell a sum from a term
TRIES = 3           # points tried when one gives a value that is not finite (log of a negative entry)
RELATIVE = 1e-9


def size_check(operation: str, derived, engine):
    """The Check of a tensor derivation against the engine's result at any size, or None (cannot tell).

    At a literal size the numeric check draws only the point (the sizes are the declared ones, none named)."""
    from gradlang.core.explain_check import Check

    if _proved(derived, engine):
        return Check(operation, True, kind="symbolic")
    found = _numeric(derived, engine)
    if found is None:
        return None
    agrees, sizes = found
    return Check(operation, agrees, kind="numeric", sizes=sizes)


def resized(explanation):
    """A rule table's failed check redone here when its values hold a tensor or a size (sum(A)/n^2 of
    diff(L, a) at R^(n,n)): its fixed test point gives only the scalars numbers, so equal formulas written
    apart were compared as expressions and said to differ (explain fuzzer seeds 21011, 21012)."""
    from dataclasses import replace

    check = explanation.check
    if check is None or check.agrees or check.kind or check.derived is None or check.engine is None:
        return explanation
    held = _symbols(_entries(check.derived) + _entries(check.engine))
    if not any(isinstance(s, Var) or is_size(s) for s in held):
        return explanation
    found = size_check(check.operation, check.derived, check.engine)  # both at the test point's scalars
    return replace(explanation, check=found) if found is not None else explanation


def _entries(value) -> list:
    """The formulas to compare, one by one: a list's entries (grad(L, [W, b])), a vector's of scalars
    (grad(L, [a, c]) is a SymPy array in the derivation, a tensor Literal in the engine), else the value."""
    if is_list(value):
        return list(value.entries)
    if isinstance(value, sp.NDimArray):
        return list(value)
    if isinstance(value, Literal) and len(value.shape) == 1:
        return list(value.entries)
    return [value]


def _proved(derived, engine) -> bool:
    """The same formulas, or formulas whose difference the tensor rewrites reduce to 0 (entry by entry)."""
    from gradlang.derive.tensor.rewrite import tidy
    from gradlang.errors import GradlangError

    left, right = _entries(derived), _entries(engine)
    if len(left) != len(right):
        return False
    for a, b in zip(left, right):
        if a == b:
            continue
        try:
            if shape_of(a) != shape_of(b) or tidy(sp.Add(a, -b)) != 0:
                return False
        except GradlangError:
            return False
    return True


def _numeric(derived, engine):
    """(agrees, the sizes taken as (name, value) pairs) at a random point, or None when NumPy cannot tell."""
    from gradlang.lazy import has_numpy, np

    left, right = _entries(derived), _entries(engine)
    if not has_numpy() or len(left) != len(right):
        return None
    rng = np.random.default_rng(SEED)
    symbols = _symbols(left + right)
    sizes = {s: int(rng.integers(SIZES[0], SIZES[1] + 1)) for s in symbols if is_size(s)}
    for _ in range(TRIES):
        point = {s: _value(s, sizes, rng) for s in symbols if not is_size(s)}
        found = _compared(left, right, point, sizes)
        if found is not None:
            return found, tuple((s.name, n) for s, n in sizes.items())
    return None


def _symbols(formulas: list) -> list:
    """Every symbol of the formulas (tensors, scalars, and the sizes in their shapes), sorted by name."""
    found: set = set()
    for formula in formulas:
        if isinstance(formula, sp.Basic):
            found |= dag_atoms(formula, sp.Symbol)
    for v in [s for s in found if isinstance(s, Var)]:
        for size in shape_of(v):
            found |= {s for s in as_basic(size).free_symbols if is_size(s)}
    return sorted(found, key=lambda s: (s.name, type(s).__name__))


def _value(symbol, sizes: dict, rng):
    """A random positive number, or array of the symbol's shape at the sizes (positive: log and sqrt stay real)."""
    if not isinstance(symbol, Var) or not shape_of(symbol):
        return float(rng.uniform(0.2, 1.2))
    shape = tuple(int(as_basic(n).xreplace(sizes)) for n in shape_of(symbol))
    return rng.uniform(0.2, 1.2, size=shape)


def _compared(left: list, right: list, point: dict, sizes: dict):
    """True or False when both sides evaluate to finite numbers at the point, None when they do not."""
    from gradlang.expr.tensor import numbers
    from gradlang.lazy import np

    try:
        pairs = [(_at(numbers, a, point, sizes), _at(numbers, b, point, sizes)) for a, b in zip(left, right)]
    except Exception:  # a node NumPy has no spelling for, an index a scalar gives: cannot tell
        return None
    if not all(np.all(np.isfinite(u)) and np.all(np.isfinite(v)) for u, v in pairs):
        return None
    return all(np.shape(u) == np.shape(v) and np.allclose(u, v, rtol=RELATIVE, atol=RELATIVE) for u, v in pairs)


def _at(numbers, formula, point: dict, sizes: dict):
    """One formula at the point: only the symbols it holds (a number is itself)."""
    if not isinstance(formula, sp.Basic) or not formula.free_symbols:
        used = {}
    else:
        held = dag_atoms(formula, sp.Symbol)
        used = {s: v for s, v in point.items() if s in held}
    return numbers.evaluate(as_basic(formula), used, {s: n for s, n in sizes.items()})
