"""The closing check of a derivation: does what it derived equal what the engine computes?

Every explanation ends with one: the derivation's result (Explanation.derived,
assembled from its steps) is compared with the engine's diff/grad/jacobian/
hessian. At the statement's point (`explain … at x = 3`) both are evaluated
and compared numerically, and the numbers are kept to show; when a stop
changes the gradient (a blocking or inventing stop), the value and the true
gradient (the derivative with every stop removed) are kept too, as the JAX
docs set them side by side. Without a point the two must be the same
expression, or agree at a fixed test point. A disagreement is reported with
both numbers, never hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.core.explaining import whole_request
from gradlang.core.substitute import substitute
from gradlang.errors import GradlangError
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.tensor import Var, is_size
from gradlang.expr.tensor.listed import ListAt, is_list
from gradlang.expr.tensor.lower import lowered
from gradlang.expr.values import elements, is_scalar, to_symbolic
from gradlang.expr.walk import dag_atoms
from gradlang.explain.explanation import engine_derivative

RELATIVE = 1e-9          # numbers closer than this (relative to their size, or 1) agree
_CHANGING = ("blocking", "inventing")  # verdicts of stops that make the gradient differ from the true one


@dataclass(frozen=True)
class Check:
    """The closing check: agrees, and at the point (when there is one) the numbers.

    operation is the call the user wrote (diff, grad, …); point is the
    explain.Point's (name, value) pairs shown, or, for a failed check
    without a point, the test point used; derived and engine are the two
    derivatives there; value and true (the true gradient) are set only when
    a stop changes the gradient; kind says how a check at a symbolic size was
    made, and sizes the sizes a numeric one drew.
    """

    operation: str
    agrees: bool
    point: tuple = ()
    derived: object = None
    engine: object = None
    value: object = None
    true: object = None
    kind: str = ""      # at a symbolic size (explain_sizes.py): "symbolic" (proved) or "numeric" (random point)
    sizes: tuple = ()   # a numeric check's random sizes, (name, value) pairs


def checked(explanation, point=None):
    """The explanation with its closing check (unchanged when the derivation gives no assembled result)."""
    if explanation.derived is None:
        return explanation
    request = explanation.request
    operation = _operation(whole_request(request))
    engine = engine_derivative(request)
    if point is None:
        return replace(explanation, check=_without_point(operation, explanation.derived, engine))
    derived_at, engine_at = _at(explanation.derived, point.pairs), _at(engine, point.pairs)
    if derived_at is None or engine_at is None:
        return replace(explanation, check=_without_point(operation, explanation.derived, engine))
    check = Check(operation, _close(derived_at, engine_at), point.shown, derived_at, engine_at)
    if any(entry.verdict in _CHANGING for entry in explanation.ledger):
        expr = to_symbolic(request.expr)
        true = _at(engine_derivative(request, unstopped(expr)), point.pairs)
        check = replace(check, value=_at(expr, point.pairs), true=true)
    return replace(explanation, check=check)


def whole_operation(request) -> str:
    """The call the user wrote whose result a derivation of the request must equal."""
    return _operation(whole_request(request))


def _operation(request) -> str:
    """The call whose result the derivation must equal: for blocked, the derivative it compares."""
    if request.operation != "blocked":
        return request.operation
    if is_scalar(to_symbolic(request.wrt)):
        return "diff"
    return "grad" if is_scalar(to_symbolic(request.expr)) else "jacobian"


def _without_point(operation: str, derived, engine) -> Check:
    """Equal as expressions, or at a fixed test point (whose numbers are kept if they differ)."""
    if _same(derived, engine):
        return Check(operation, True)
    test = _test_point(derived, engine)
    derived_at, engine_at = _at(derived, test), _at(engine, test)
    agrees = derived_at is not None and engine_at is not None and _close(derived_at, engine_at)
    if agrees:
        return Check(operation, True)
    return Check(operation, False, tuple((str(s), v) for s, v in test), derived_at, engine_at)



def _same(a, b) -> bool:
    pairs = list(zip(_elements(a), _elements(b)))
    return all(x == y for x, y in pairs) and len(pairs) == len(_elements(a))


def _elements(value) -> list:
    """The numbers or formulas of a value, in order; of a list of gradients (grad(L, [W, b])), its entries'."""
    if is_list(value):
        return [item for entry in value.entries for item in _elements(entry)]
    return elements(to_symbolic(value))


def _test_point(*values) -> tuple:
    """A fixed point away from the usual special values (0, ±1, integers), one value per free symbol."""
    free = set()
    for value in values:
        for e in _elements(value):
            free |= dag_atoms(e, sp.Symbol) if isinstance(e, sp.Basic) else set()
    ordered = sorted((s for s in free if not (isinstance(s, Var) or is_size(s))), key=lambda s: s.name)
    return tuple((s, sp.Float(0.37 + 0.29 * k)) for k, s in enumerate(ordered))  # a tensor or a size takes no float


def _at(value, pairs):
    """The value at the point (exact when everything is exact), or None if it cannot be evaluated there.

    A list of gradients (grad(L, [W, b])) entry by entry, as `at` takes it: one compiled evaluation of
    the whole list would hand the common-subexpression pass a matrix inside a list, which it cannot rebuild."""
    if is_list(value):
        entries = [_at(entry, pairs) for entry in value.entries]
        return None if any(e is None for e in entries) else ListAt(entries)
    try:  # a tensor formula at literal sizes (grad(L, [W, b]) keeps its formulas) by its components
        return substitute(lowered(value), list(pairs), [], None)
    except GradlangError:
        return None


def _close(a, b) -> bool:
    """Element by element: equal numbers (nan with nan, inf with inf), or equal expressions when symbols remain."""
    left, right = _elements(a), _elements(b)
    if len(left) != len(right):
        return False
    rest = _test_point(a, b)
    return all(_agree(x.xreplace(dict(rest)), y.xreplace(dict(rest))) for x, y in zip(left, right))


def _agree(x, y) -> bool:
    try:
        u, v = complex(sp.N(x, 17)), complex(sp.N(y, 17))
    except (TypeError, ValueError):
        return x == y
    if u != u or v != v:  # nan
        return u != u and v != v
    if u == v:
        return True
    return abs(u - v) <= RELATIVE * max(1.0, abs(u), abs(v))
