"""`e at x = v`: substitute values, exactly or through compiled NumPy code.

Three paths, chosen by what is given:
- exact values for every symbol: SymPy substitution, exact in, exact out
  (division by zero is an error, a complex result is an error: gradlang is real);
- a float anywhere and no symbol left over: compiled NumPy evaluation, IEEE 754
  semantics (inf, nan) as NumPy and the frameworks give;
- a list given to a scalar symbol: elementwise NumPy evaluation, the lists
  broadcast together, the batch axis first (as jax.vmap puts it).
"""

from __future__ import annotations

import builtins

import sympy as sp

from gradlang import limits
from gradlang.expr.bounded import tidy
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.domain import check_real
from gradlang.expr.exact import combine
from gradlang.expr.graph import build_dag
from gradlang.expr.source import to_source
from gradlang.core.floats import fold_floats
from gradlang.lazy import has_numpy, np
from gradlang.expr.values import describe_shape, elements, from_elements, is_condition, shape_of, to_symbolic
from gradlang.expr.walk import dag_atoms, dag_has, rebuild, rebuild_all

def substitute(value, pairs: list, batch: list, notes: list | None = None, written_out: bool = False):
    """The value with `pairs` (symbol, value) substituted and `batch` (symbol, array) mapped over.

    Warnings about evaluating exactly at a kink or tie go to `notes`. `written_out`: an exact result
    may write softmax and logsumexp of numbers out (core/at.py's components of a tensor formula).
    """
    value = to_symbolic(value)
    if batch and not has_numpy():  # the browser page: one point at a time
        from gradlang.core import pure_points

        return pure_points.batch(value, pairs, batch, notes, substitute)
    if batch:
        _warn_kinks_batch(value, pairs, batch, notes)
        return _batch(value, pairs, batch)
    mapping = dict(pairs)
    items = elements(value)
    if mapping:
        _warn_kinks(items, mapping, notes)
    if _inexact(mapping.values()) or _inexact(items):
        return _floating(value, items, mapping)
    return _exact(value, items, mapping, written_out)


def _warn_kinks(items, mapping, notes) -> None:
    if notes is None:
        return
    from gradlang.tools.kinks import kink_warnings

    notes.extend(w for w in kink_warnings([e for e in items if isinstance(e, sp.Expr)], mapping) if w not in notes)


def _warn_kinks_batch(value, pairs, batch, notes) -> None:
    if notes is None:
        return
    from gradlang.tools.kinks import kink_warnings_batch

    mapping = dict(pairs)
    items = [rebuild(e, mapping) for e in elements(value) if isinstance(e, sp.Expr)]
    symbols, arrays = [s for s, _ in batch], [a for _, a in batch]
    notes.extend(w for w in kink_warnings_batch(items, symbols, arrays) if w not in notes)


def settle(value):
    """A printed value: floats make numbers floating point, exact numbers are tidied."""
    if isinstance(value, np.ndarray):
        return value
    return substitute(value, [], [])


def _inexact(exprs) -> bool:
    """Whether a float (or an IEEE special) appears anywhere: one walk over the shared DAG of all
    (none when a value given is a float itself, as all are for a vector given 100,000 numbers)."""
    exprs = [e for e in exprs if isinstance(e, sp.Basic)]
    return any(isinstance(e, sp.Float) for e in exprs) or dag_has(exprs, sp.Float, sp.oo, -sp.oo, sp.nan)


def free_symbols(items) -> set:
    """The symbols of a list of items, in one walk over their shared DAG (SymPy's own
    `free_symbols` visits a shared subtree once per path: exponential on compositions)."""
    return dag_atoms([e for e in items if isinstance(e, sp.Basic)], sp.Symbol)


def _exact(value, items, mapping, written_out=False):
    results = [_tidy(e) for e in _rebuilt(items, mapping, combine)]
    results = _by_definition_if_not_longer(results) if written_out else results
    dag = build_dag([r for r in results if isinstance(r, sp.Basic)])  # one walk: items share
    if any(n is sp.zoo or n is sp.nan for n in dag.nodes):
        raise ValueError("the result is undefined at this point (division by zero)")
    for result in results:
        if isinstance(result, sp.Expr) and result.is_number and result.is_extended_real is False:
            raise ValueError(f"the result {to_source(result)} is not a real number")
    check_real(dag)  # min(sqrt(-4), 1): SymPy cannot tell that the whole is not real
    return from_elements(shape_of(value), results)


def _rebuilt(items: list, mapping: dict, combine=None) -> list:
    """Every SymPy item rebuilt with the mapping in one walk over their shared DAG; others kept."""
    rebuilt = iter(rebuild_all([e for e in items if isinstance(e, sp.Basic)], mapping, combine))
    return [next(rebuilt) if isinstance(e, sp.Basic) else e for e in items]


def _tidy(expr):
    """Cancel an exact number into one fraction when it is small enough; symbols are left alone.

    The bound is a size (expr/bounded.py), never a clock: under a time budget a
    loaded machine printed `grad(…) at x = [1, 3, 3]` uncancelled where an idle
    one printed `2*exp(2)/(1 + 2*exp(2))`.
    """
    if not (isinstance(expr, sp.Expr) and expr.is_number) or expr.is_Rational:
        return expr
    return tidy(expr, sp.cancel, work=limits.BLOCKED_SIMPLIFY_WORK)


def _by_definition_if_not_longer(results: list) -> list:
    """The exact results with softmax and logsumexp of numbers written by their definitions (exp(a)/Σ exp,
    log Σ exp) and cancelled, when one of them holds such a node inside a larger expression and the
    whole is not longer so; else as they are.

    A tensor formula's components at an exact point hold them where the component derivative had the
    exponentials (the stable softmax's gradient at [1, 3, 3]: 2*exp(2)/(1 + 2*exp(2)), …, not a quotient
    of softmax([-2, 0, 0])[0]); one choice for the whole value, so a vector never mixes both, and a
    softmax alone stays as it is written (softmax(x) at x = [1, 3, 3])."""
    if not any(_holds_inside(r) for r in results):
        return results
    expanded = [_by_definition(r) for r in results]
    if all(e is r for e, r in zip(expanded, results)):
        return results
    expanded = [_tidy(e) if e is not r else e for e, r in zip(expanded, results)]
    return expanded if _length(expanded) <= _length(results) else results


def _holds_inside(result) -> bool:
    """A softmax or logsumexp of numbers inside the result, not the result itself (nor its negation)."""
    from gradlang.expr.primitives.vectors import LogSumExp, Softmax

    if not isinstance(result, sp.Expr) or isinstance(result, (Softmax, LogSumExp)):
        return False  # a condition (x == y at …) holds none, and has no negation
    if isinstance(-result, (Softmax, LogSumExp)):
        return False
    return any(isinstance(n, (Softmax, LogSumExp)) for n in build_dag([result]).nodes)


def _length(results: list) -> int:
    return sum(len(to_source(r)) for r in results if isinstance(r, sp.Basic))


def _by_definition(expr):
    """expr with each softmax and logsumexp of numbers written as its definition; expr itself if none."""
    from gradlang.expr.primitives.vectors import LogSumExp, Softmax

    if not isinstance(expr, sp.Basic):
        return expr
    found = {n for n in build_dag([expr]).nodes if isinstance(n, (Softmax, LogSumExp)) and n.is_number}
    return expr.xreplace({n: n.rewrite(sp.exp) for n in found}) if found else expr


def _floating(value, items, mapping):
    """Floats involved: IEEE numbers when nothing stays symbolic, else SymPy floats."""
    symbols = list(mapping)  # in the order given: deterministic, and sorting 100,000 symbols costs a second
    leftover = free_symbols(items) - set(symbols)
    if leftover or any(is_condition(e) for e in items) or not all(_is_real_number(mapping[s]) for s in symbols):
        return from_elements(shape_of(value), fold_floats(rebuild_all(items, mapping)))
    items = [sp.nan if _is_complex_number(e) else e for e in items]
    if not symbols:
        return from_elements(shape_of(value), fold_floats(items))
    from gradlang.expr.numeric import evaluate, to_sympy_number

    outputs = evaluate(items, symbols, [float(mapping[s]) for s in symbols])
    return from_elements(shape_of(value), [to_sympy_number(o) for o in outputs])


def _is_complex_number(expr) -> bool:
    """sqrt(-4.0) and the like: NaN in IEEE arithmetic, as NumPy gives."""
    return isinstance(expr, sp.Expr) and expr.is_number and expr.is_extended_real is False


def _is_real_number(expr) -> bool:
    if isinstance(expr, (sp.Float, sp.Rational)):
        return True  # is_comparable asks for real and imaginary parts: slow for 100,000 points
    return isinstance(expr, sp.Expr) and expr.is_number and (expr.is_comparable or expr in (sp.oo, -sp.oo, sp.nan))


def _batch(value, pairs: list, batch: list) -> np.ndarray:
    """Evaluate elementwise over the given lists: shape (batch..., value...)."""
    try:
        batch_shape = np.broadcast_shapes(*[array.shape for _, array in batch])
    except builtins.ValueError:  # NumPy's, not gradlang's ValueError imported above
        shown = " and ".join(str(len(a)) if a.ndim == 1 else str(a.shape) for _, a in batch)
        raise ShapeError(f"lists of lengths {shown} cannot be evaluated together (equal lengths, or length 1)") from None
    if len(batch_shape) + len(shape_of(value)) > 2:
        raise ShapeError(
            f"{describe_shape(shape_of(value))} at {'×'.join(map(str, batch_shape))} points would have "
            f"{len(batch_shape) + len(shape_of(value))} axes; values are at most matrices"
        )
    if int(np.prod(batch_shape)) * max(1, len(elements(value))) > limits.MAX_NUMERIC_POINTS:
        raise LimitError(f"evaluating at more than {limits.MAX_NUMERIC_POINTS} points is above the limit")
    mapping = dict(pairs)
    items = _rebuilt(elements(value), mapping)
    symbols = [s for s, _ in batch]
    leftover = free_symbols(items) - set(symbols)
    if leftover:
        names = ", ".join(sorted(str(s) for s in leftover))
        raise ValueError(f"a list is given, so every symbol needs a value; {names} has none")
    from gradlang.expr.numeric import evaluate

    outputs = evaluate(items, symbols, [array for _, array in batch])
    stacked = np.stack([np.broadcast_to(o, batch_shape) for o in outputs], axis=-1)
    return stacked.reshape(batch_shape + shape_of(value))
