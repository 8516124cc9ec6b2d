"""Kink warnings: an evaluation that lands where the derivative is a convention.

At a tie of max/min, the kink of relu, a jump of sign/floor/ceil/round or
the boundary of a where, the derivative is not determined by the function:
gradlang follows the language reference (docs/language.md), section 5 and the frameworks disagree among
themselves. This module finds such points and says so, naming gradlang's
convention and what TensorFlow, JAX and PyTorch give there. What each
primitive's kink is, and what to say about it, is the `kink` of its record in
the registry (gradlang/expr/primitives/); abs has none of its own: its derivative
sign(u) is where its convention is met, so a plain value abs(0) is not warned
about. Each warning is a short line about this point plus a paragraph about
the convention (`KinkWarning.detail`), which a shell says once per run.

The expression DAG is walked once (iteratively, each distinct subexpression
once); every candidate node contributes the arguments it needs, and all of
them are evaluated together in one compiled NumPy call (float64, as the
frameworks see it). So a tie is an exact floating-point tie.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import math

import sympy as sp
from sympy.core.relational import Relational

from gradlang.expr import primitives
from gradlang.expr.functions import MaxShare, MinShare, Relu
from gradlang.errors import Warning
from gradlang.lazy import np
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.walk import dag_atoms
from gradlang.expr.source import to_source

_MAX_TEXT = 60


KinkWarning = Warning  # short: this point; detail: gradlang's convention and the frameworks'


@dataclass(frozen=True)
class _Check:
    """One candidate kink: what to evaluate, when it is hit, and what to say."""

    key: tuple
    exprs: tuple
    hit: Callable  # list of arrays -> boolean array
    describe: Callable  # list of floats (at the first hit) -> KinkWarning
    same: tuple = ()  # expressions all 0 where either convention gives the same derivative: no warning there


# --- public API -----------------------------------------------------------------


def kink_warnings(exprs, mapping: dict) -> list[KinkWarning]:
    """Messages for every kink of `exprs` (scalar SymPy expressions) hit at the point `mapping`."""
    checks = _candidates(exprs)
    if not checks:
        return []  # most values have no kink: the mapping (100,000 symbols for a big vector) is not read
    symbols, values = _numeric_mapping(mapping)
    return [message for message, _, _ in _run(exprs, symbols, values, checks)]


def kink_warnings_batch(exprs, symbols, arrays) -> list[KinkWarning]:
    """Messages for kinks hit anywhere in an elementwise evaluation, with how many points hit each."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    out = []
    for message, count, total in _run(exprs, list(symbols), arrays):
        out.append(KinkWarning(f"at {count} of {total} points: {message.short}", message.detail))
    return out


def kink_warnings_points(exprs, symbols, points: list) -> list[KinkWarning]:
    """kink_warnings_batch without NumPy (core/pure_points.py): the points one at a time, counted alike."""
    checks = _candidates(exprs)
    found: dict = {}
    for point in points:
        for key, (message, _, _) in _run(exprs, list(symbols), list(point), checks, keyed=True) if checks else []:
            first, count = found.get(key, (message, 0))
            found[key] = (first, count + 1)
    return [KinkWarning(f"at {count} of {len(points)} points: {first.short}", first.detail)
            for first, count in found.values()]


def tie_message(name: str, shown: str, count: int, tied: list, extremum: float, stopped: bool = False) -> KinkWarning:
    """A tie's warning from its parts: `shown` the arguments as written (cut), `count` of them, `tied` the texts of
    those attaining `extremum`. _tie's words, and a tensor's max over many components (tools/tensor_kinks.py)."""
    kink = primitives.lookup(name).kink
    warning = KinkWarning(
        f"{name}({shown}) has a tie: {len(tied)} of its {count} arguments ({', '.join(tied)}) "
        f"attain the {'maximum' if name == 'max' else 'minimum'} {_num(extremum)}; "
        f"gradlang shares the gradient equally (1/{len(tied)} each).",
        f"{name} at a tie: gradlang shares the gradient equally among the tied arguments "
        f"(docs/language.md, section 5). {kink.convention}.",
    )
    return KinkWarning(warning.short + _STOPPED_NOTE, warning.detail) if stopped else warning


def shown_arguments(texts: list) -> str:
    """Arguments written out as _show_args writes them, from the texts of the first few (enough to pass the cut)."""
    return _cut(", ".join(texts), _MAX_TEXT - 2)


# --- the walk ----------------------------------------------------------------------


def _numeric_mapping(mapping: dict):
    symbols, values = [], []
    for symbol, value in mapping.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue  # a symbolic value: the symbol stays unknown
        symbols.append(symbol)
        values.append(number)
    return symbols, values


def _run(exprs, symbols: list, values: list, checks=None, keyed: bool = False):
    """(message, points hit, points) for each kink hit; with `keyed`, (check key, that) pairs."""
    found = _found(exprs, symbols, values, checks)
    return list(found.items()) if keyed else list(found.values())


def _found(exprs, symbols: list, values: list, checks=None) -> dict:
    checks = [c for c in (_candidates(exprs) if checks is None else checks) if _known(c.exprs, symbols)]
    if not checks:
        return {}
    from gradlang.expr.numeric import evaluate  # its code printer and every primitive record: on the first kink checked (#41)

    needed = list(dict.fromkeys(e for c in checks for e in (*c.exprs, *_same(c, symbols))))
    results = dict(zip(needed, evaluate(needed, symbols, values)))
    if all(isinstance(r, float) for r in results.values()):
        return _run_point(checks, results, symbols)
    shape = np.broadcast_shapes(*[np.shape(v) for v in values]) if values else ()
    total = int(np.prod(shape)) if shape else 1
    found: dict = {}
    for check in checks:
        if check.key in found:
            continue
        arrays = [np.broadcast_to(results[e], shape) for e in check.exprs]
        mask = np.broadcast_to(check.hit(arrays), shape) & ~_agreeing(check, symbols, results, shape)
        if mask.any():
            first = np.argwhere(mask)[0] if shape else ()
            point = [float(a[tuple(first)]) for a in arrays]
            found[check.key] = (check.describe(point), int(mask.sum()), total)
    return found


def _run_point(checks, results: dict, symbols) -> dict:
    """One point computed without NumPy (expr/pure_numeric.py): each check reads Python floats."""
    found: dict = {}
    for check in checks:
        point = [results[e] for e in check.exprs]
        agreeing = _same(check, symbols) and all(results[e] == 0 for e in _same(check, symbols))
        if check.key not in found and check.hit(point) and not agreeing:
            found[check.key] = (check.describe(point), 1, 1)
    return found


def _same(check: _Check, symbols) -> tuple:
    """The check's agreement expressions, when the point gives them numbers (else it warns as before)."""
    return check.same if check.same and _known(check.same, symbols) else ()


def _agreeing(check: _Check, symbols, results: dict, shape) -> np.ndarray:
    """Where both sides of a kink have the same derivative, so its convention cannot show."""
    same = _same(check, symbols)
    if not same:
        return np.zeros(shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.logical_and.reduce([np.broadcast_to(results[e], shape) == 0 for e in same])


def _known(exprs, symbols) -> bool:
    known = set(symbols)
    return all(dag_atoms(e, sp.Symbol) <= known for e in exprs)


def _candidates(exprs) -> list[_Check]:
    """Walk the DAG iteratively, visiting each distinct subexpression once (per stopped-ness)."""
    seen, checks, stopped_only = set(), {}, {}
    stack = [(e, False) for e in exprs if isinstance(e, sp.Basic)]
    while stack:
        node, stopped = stack.pop()
        if (node, stopped) in seen:
            continue
        seen.add((node, stopped))
        record = primitives.by_class(node.func)
        kink = record.kink if record is not None else None
        check = _READERS[kink.kind](record, kink, node) if kink is not None else None
        if check is not None:
            checks.setdefault(check.key, check)
            stopped_only[check.key] = stopped_only.get(check.key, True) and stopped
        inner = stopped or isinstance(node, StopGradient)
        stack.extend((a, inner) for a in node.args if isinstance(a, sp.Basic))
    return [_noted(c) if stopped_only[k] else c for k, c in checks.items()]


def _noted(check: _Check) -> _Check:
    """A kink met only inside stop_gradient cannot change the gradient; say so."""
    def describe(point):
        warning = check.describe(point)
        return KinkWarning(warning.short + _STOPPED_NOTE, warning.detail)

    return replace(check, describe=describe)


_STOPPED_NOTE = " Here it is inside stop_gradient, so the gradient does not depend on the convention."


# --- one reader per kind of kink ------------------------------------------------------


def _show(expr) -> str:
    return _cut(to_source(expr), _MAX_TEXT)


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, a cut one ending in "…" so it never reads as a whole formula."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


def _point(record, kink, node) -> _Check:
    """A one-argument function at its kink or jump."""
    u = node.args[0]
    return _Check(
        (record.name, u), (u,), lambda a: kink.hit(a[0]),
        lambda p: KinkWarning(
            f"{record.name}({_show(u)}) is {kink.what} ({_show(u)} = {_num(p[0])}).",
            f"{record.name} {kink.what}: {kink.convention}",
        ),
    )


def _tie(record, kink, node) -> _Check:
    """max/min (or a share of one) with two or more arguments attaining the extremum."""
    args = node.args[1:] if isinstance(node, (MaxShare, MinShare)) else node.args
    name = "max" if node.pick is max else "min"

    def hit(arrays):
        if all(isinstance(a, float) for a in arrays):  # one point without NumPy (expr/pure_numeric.py)
            top = _extremum(name, arrays)
            return sum(a == top for a in arrays) >= 2
        stacked = np.stack(arrays)
        with np.errstate(invalid="ignore"):
            return (stacked == getattr(np, name)(stacked, axis=0)).sum(axis=0) >= 2

    def describe(point):
        extremum = _extremum(name, point)
        tied = [_show(args[i]) for i, v in enumerate(point) if v == extremum]
        return tie_message(name, _show_args(args), len(args), tied, extremum)

    return _Check((name, args), tuple(args), hit, describe)


def _extremum(name: str, point: list) -> float:
    """max or min of a point's floats, nan if any is nan (as NumPy's)."""
    return math.nan if any(v != v for v in point) else (max if name == "max" else min)(point)


def _show_args(args) -> str:
    return _cut(to_source(sp.Tuple(*args))[1:-1], _MAX_TEXT - 2) if len(args) > 1 else _show(args[0])


def _boundary(record, kink, node):
    """where(c, a, b) with its condition on the boundary; where(u > 0, 1, 0) is relu's derivative."""
    condition = node.args[0]
    if not isinstance(condition, Relational):
        return None
    lhs, rhs = condition.lhs, condition.rhs
    if isinstance(condition, sp.StrictGreaterThan) and rhs == 0 and node.args[1:] == (sp.S.One, sp.S.Zero):
        return _point(primitives.by_class(Relu), primitives.by_class(Relu).kink, Relu(lhs, evaluate=False))
    return _Check(
        (record.name, condition), (lhs, rhs), lambda a: a[0] == a[1],
        lambda p: KinkWarning(
            f"where({_show(condition)}, …) is on the boundary of its condition (both sides are {_num(p[0])}).",
            f"where on the boundary of its condition: {kink.convention}",
        ),
        _branch_slopes(*node.args[1:]),
    )


_MAX_BRANCH_SYMBOLS = 16  # above this many, the branches are not compared (one derivative per symbol)


def _branch_slopes(a, b) -> tuple:
    """∂a/∂s − ∂b/∂s for each symbol s of the branches: all 0 where the branch taken cannot change the derivative.

    At the boundary the derivative follows the branch the condition selects;
    when both branches have the same derivative there (a mask of constants,
    `where(v == max(v), 1, 0)`; `where(x >= 0, x^2, 0)` at 0), the convention
    changes nothing and a warning would only alarm.
    """
    symbols = sorted(dag_atoms(a, sp.Symbol) | dag_atoms(b, sp.Symbol), key=str)
    if len(symbols) > _MAX_BRANCH_SYMBOLS:
        return ()
    if not symbols:
        return (sp.S.Zero,)
    from gradlang.derive import derivatives  # on a branch met only: a program without derivatives imports no engine

    return tuple(derivatives.diff(a - b, [(symbol, 1)]) for symbol in symbols)  # gradlang's rules: sign′ is 0, not δ


_READERS = {"point": _point, "tie": _tie, "boundary": _boundary}
