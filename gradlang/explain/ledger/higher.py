"""The ledger of a derivative of order two or more: what each written stop removes from THAT derivative.

At first order a stop sg(u) removes ā·∂u/∂x, the adjoint arriving times the stopped value's derivative
(components.py, tensor.py). A second derivative differentiates that product once more, and the stopped value
stands in both factors, so the first-order term is not what the stop removes from it: in
diff(a*b*sg(a − b), a, b) the true derivative is 2a − 2b, the kept one a − b, so the stop removes a − b, not
the first-order a*b. Here the stops are taken in the order the ledger lists them and made transparent one
after another (expr/stopgrad.transparent):

    rᵢ = D(f, stops 1..i transparent) − D(f, stops 1..i−1 transparent),

with D the derivative the user wrote (diff(·, a, b), hessian(·, x)). The terms telescope: D(unstopped f) =
D(f) + r₁ + … + rₖ exactly, whatever the order and the nesting of the stops. Each verdict is read off rᵢ by
the first-order ledger's own rule (0: neutral; a term that only cancels part of the kept derivative:
inventing; else blocking). An entry of order two or more has no adjoint arriving (a first-order notion).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.expr.stopgrad import transparent, unstopped
from gradlang.expr.values import elements, shape_of, to_symbolic
from gradlang.explain.ledger.components import LEDGER_WORK, Work, tidy_all, terms_verdict, order_of

_OWN = ("constant", "untaken", "same", "inside")  # entries whose term is 0 by what they are (written.py)


def telescoped(explanation, phrase):
    """The explanation of a derivative of order two or more with each entry's term and verdict found in the
    ledger's order (the module's docstring), and its summary's count of verdicts to match."""
    request, entries = explanation.request, explanation.ledger
    if not entries or order_of(request) < 2:
        return explanation
    take = derivative_taken(request)
    expr = to_symbolic(request.expr)
    tensor, work = _by_tensors(request), Work(LEDGER_WORK)  # one budget of simplification for the ledger
    kept = before = take(expr)
    done: list = []
    out: list = []
    for entry in entries:
        if any(getattr(entry, field) for field in _OWN) or not entry.reaching:
            out.append(replace(entry, order=order_of(request)))
            continue
        done += list(entry.parts or (entry.stop,))
        after = take(transparent(expr, done))
        out.append(_decided(entry, (after, before, kept), tensor, order_of(request), work))
        before = after
    out = _same_verdicts(out)
    old, new = phrase(entries), phrase(tuple(out))
    summary = explanation.summary.replace(old, new) if old and old in explanation.summary else explanation.summary
    return replace(explanation, ledger=tuple(out), summary=summary)


def derivative_taken(request):
    """D, the derivative the request takes, as a function of the expression: at the tensor level for a
    hessian by a declared vector (the Jacobian of the gradient, as the engine takes it) and for a diff by
    declared scalars that a tensor part holds (each order a tangent, as the engine's diff), else by
    components."""
    from gradlang.derive.tensor import forward, reverse

    if request.operation == "hessian" and _by_tensors(request):
        return lambda e: forward.tangent(reverse.grad(e, request.wrt), request.wrt)
    if _by_tensors(request):
        variables = [v for v, n in request.specs for _ in range(n)]
        return lambda e: _tangents(e, variables)
    from gradlang.derive import derivatives as derive

    if request.operation == "diff":
        return lambda e: derive.diff(e, list(request.specs))
    return lambda e: derive.hessian(e, to_symbolic(request.wrt))


def _tangents(expr, variables: list):
    from gradlang.derive.tensor import forward

    for variable in variables:
        expr = forward.tangent(expr, variable)
    return expr


def _by_tensors(request) -> bool:
    """Is D taken at the tensor level: a hessian by a declared vector, or a diff of a tensor formula one of
    whose tensor parts holds a variable (the component rules take those parts as constants)?"""
    from gradlang.expr.tensor import is_tensor
    from gradlang.expr.tensor.nodes import Var
    from gradlang.expr.walk import tensor_parts_hold

    if request.operation == "hessian":
        return isinstance(request.wrt, Var)
    variables = [v for v, _ in request.specs] if request.operation == "diff" else []
    return bool(variables) and is_tensor(request.expr) and tensor_parts_hold(request.expr, variables)


def _decided(entry, derivatives: tuple, tensor: bool, order: int, work):
    """The entry with its term rᵢ = after − before (derivatives: after, before, kept; its stops evaluated, as
    `blocked` has them) and the verdict that term gives."""
    after, before, kept = derivatives
    common = dict(adjoint=(), shown=None, zero_form=(), evidence="", order=order)
    if tensor:
        from gradlang.derive.tensor.rewrite import Tidier
        from gradlang.explain.ledger.tensor import removed_verdict

        removed = _tidied(unstopped(after - before), Tidier())
        removed = sp.S.Zero if _zeros(removed) else removed
        verdict, evidence = removed_verdict(removed, kept)
        return replace(entry, removed=((removed,),), kept=((kept,),), verdict=verdict, level="tensor",
                       **{**common, "evidence": evidence})
    removed = tidy_all([unstopped(a - b) for a, b in zip(_flat(after), _flat(before))], work)
    verdict, evidence = terms_verdict((removed,), (tuple(_flat(kept)),))
    return replace(entry, removed=(removed,), kept=(tuple(_flat(kept)),), verdict=verdict, level="components",
                   shape=shape_of(kept), **{**common, "evidence": evidence})


_EXPAND_NODES = 200  # tree nodes of a tensor term expanded before it is tidied (as `blocked` does, by size)


def _tidied(term, tidy):
    """A tensor term tidied, expanded first when small: a difference of two hessians holds the same products
    on both sides ((3Σx + 3)·diag(2x) − 3·diag(2x)·Σx), which only expanding cancels."""
    from gradlang.expr.walk import tree_size

    if tree_size(term, cap=_EXPAND_NODES + 1) <= _EXPAND_NODES:
        try:
            term = sp.expand(term)
        except (TypeError, ValueError, AttributeError):  # a tensor node SymPy cannot expand through
            pass
    return tidy(term)


def _flat(value) -> list:
    return list(elements(value)) if shape_of(value) else [value]


def _zeros(value) -> bool:
    from gradlang.expr.tensor.nodes import Zeros

    return value == 0 or isinstance(value, Zeros)


def _same_verdicts(entries: list) -> list:
    """A stop whose value another written stop gave ("the same stop as t27") repeats that entry's verdict as
    found here (written.py took it from the entry before its term was found)."""
    found = {e.stop: e.verdict for e in entries if not e.same}
    out = []
    for entry in entries:
        if entry.same and entry.stop in found:
            first = found[entry.stop]
            verdict = "neutral" if first in ("blocking", "inventing") else first
            entry = replace(entry, verdict=verdict, same=(first, entry.same[1]))
        out.append(entry)
    return out
