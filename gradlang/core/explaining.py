"""The explain statement's surface: the components it selects, its point.

Its options (`explain[depth=1]`, `explain[unfold]`) are read with the rest of
its syntax (syntax/lower.py). `explain grad(e, x)[1]` and
`explain jacobian(f, x)[i, j]` derive only the selected components (the
request is narrowed before anything is derived); `explain … at x = v` gives
the point at which the closing check (explain_check.py) shows numbers.
The session calls these; nothing here evaluates the statement itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.derive.derivatives import DerivativeRequest
from sympy import Basic

from gradlang import limits
from gradlang.errors import LimitError
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import tree_size
from gradlang.expr.values import elements, from_elements, is_scalar, shape_of, to_symbolic
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import FLAGS, OPTIONS

_SELECTABLE = ("diff", "grad", "jacobian", "hessian", "blocked")


# --- components ---------------------------------------------------------------


@dataclass(frozen=True)
class SelectedRequest(DerivativeRequest):
    """A derivative request narrowed to the components an index selects: grad(e, x)[1].

    whole is the request as written and indices the (non-negative) positions,
    so a derivation can be titled as the user wrote it.
    """

    whole: object = None
    indices: tuple = ()


def selected(body: lo.Node, derivations: list, evaluate) -> list:
    """The derivations, with the one the statement indexes narrowed to the selected components.

    Only an index applied directly to a derivative call narrows it (`grad(e, x)[1]`,
    possibly under `at`); `evaluate` evaluates an index node (already checked by the
    statement's own evaluation).
    """
    node = body.body if isinstance(body, lo.At) else body
    if not (isinstance(node, lo.Index) and isinstance(node.base, lo.Call)):
        return derivations
    call = node.base
    if call.name not in _SELECTABLE:
        return derivations
    span = call.span
    indices = [int(to_symbolic(evaluate(argument))) for argument in node.indices]
    return [_narrowed(r, indices) or r if r.span == span else r for r in derivations]


def _narrowed(request, indices: list):
    """The request for the selected components only (None: no narrower request; all are derived)."""
    result = to_symbolic(request.result)
    indices = tuple(i % n for i, n in zip(indices, shape_of(result)))
    common = dict(result=_pick(result, indices), whole=request, indices=indices)
    if request.operation == "hessian":
        if len(indices) != 2:
            return None
        variables = to_symbolic(request.wrt)
        specs = tuple((variables[i], 1) for i in indices)
        return _selected(request, operation="diff", specs=specs, **common)
    expr = to_symbolic(request.expr)
    own = len(shape_of(expr))
    if request.operation == "diff":
        return _selected(request, expr=_pick(expr, indices), **common)
    wrt = to_symbolic(request.wrt)
    return _selected(request, expr=_pick(expr, indices[:own]), wrt=_pick(wrt, indices[own:]), **common)


def _selected(request, **changes) -> SelectedRequest:
    fields = {name: getattr(request, name) for name in DerivativeRequest.__dataclass_fields__}
    return SelectedRequest(**{**fields, **changes})


def _pick(value, indices: tuple):
    """value[i], value[i, j], or row i of a matrix, as the language indexes."""
    if not indices or is_scalar(value):
        return value
    shape = shape_of(value)
    if len(shape) == 1:
        return value[indices[0]]
    if len(indices) == 2:
        return value[indices[0], indices[1]]
    return from_elements((shape[1],), list(value.row(indices[0])))


def whole_request(request):
    """The request as the user wrote it (before any selection)."""
    return getattr(request, "whole", None) or request


# --- the point ----------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """Where `explain … at …` evaluates: (name as written, value) to show, (symbol, value) to substitute."""

    shown: tuple
    pairs: tuple


def point(body: lo.Node, evaluator) -> Point | None:
    """The statement's point, when it is `e at x = v, …` with one value per symbol."""
    if not isinstance(body, lo.At):
        return None
    bindings = body.bindings
    pairs, batch = evaluator._bindings(bindings, {})
    if batch:
        return None  # a list given to a scalar: many points, no single one to check at
    shown = tuple((_target_text(b.target), evaluator.evaluate(b.value)) for b in bindings)
    return Point(shown, tuple(pairs))


def _target_text(target: lo.Target) -> str:
    return f"{target.name}[{', '.join(target.indices)}]" if target.indices else target.name


__all__ = ["FLAGS", "OPTIONS", "Point", "SelectedRequest", "point", "selected", "whole_request"]


def check_printable(derivations: list) -> None:
    """Refuse early the derivations too large to derive step by step or to print (limits.MAX_PRINTED_NODES).

    Even with its shared parts named, a printed result writes every argument of
    every distinct subexpression once, so the arguments of its DAG are a lower
    bound on its printed size. softmax of 1000 components has a million (each
    component holds the whole row): explain used to derive and check it for
    minutes before the printer refused it (issue 29, row 19)."""
    for request in derivations:
        _check_tree(request)
        items = [e for e in elements(to_symbolic(request.result)) if isinstance(e, Basic)]
        arguments = sum(len(kids) for kids in build_dag(items).children)
        if arguments > limits.MAX_PRINTED_NODES:
            raise LimitError(
                f"this derivative written out has at least {arguments} nodes even with its shared parts named, "
                f"above the limit of {limits.MAX_PRINTED_NODES}; explain selected components "
                "(explain grad(e, x)[0]) or a smaller size", request.span)


def _check_tree(request) -> None:
    """The expression derived step by step, written out as a tree, within limits.MAX_EXPLAINED_TREE_NODES.

    The rules apply SymPy's own arithmetic, whose assumptions walk a shared
    subexpression once per path to it: `explain diff(f30, x)` of a doubling
    chain (60 distinct subexpressions, 2^30 as a tree) never ended."""
    items = [e for e in elements(to_symbolic(request.expr)) if isinstance(e, Basic)]
    if items and tree_size(items, cap=limits.MAX_EXPLAINED_TREE_NODES + 1) > limits.MAX_EXPLAINED_TREE_NODES:
        raise LimitError(
            f"explain derives step by step an expression of at most {limits.MAX_EXPLAINED_TREE_NODES} nodes "
            "written out as a tree, and this one has more (its parts are shared); ask for the derivative "
            "without explain", request.span)
