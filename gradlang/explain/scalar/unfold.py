"""`explain[unfold] …`: derive the builtins from their definitions instead of their own rules.

A derivation normally keeps a builtin at the level the user wrote it
(sigmoid' = σ(1 − σ), ∇ logsumexp = softmax, ∂softmax = diag(s) − s sᵀ; the
language reference, sections 6 and 8). Asked to unfold, explain first
replaces each builtin by its definition in the primitives below it and then
derives that, rule by rule, with no vector identity (they are the builtins'
rules): softmax(v)ₖ = exp(vₖ)/Σⱼ exp(vⱼ), logsumexp(v) = log(Σⱼ exp(vⱼ)),
norm(v) = sqrt(Σⱼ vⱼ²), sigmoid(u) = 1/(1 + exp(−u)), softplus(u) =
log(1 + exp(u)), log1p(u) = log(1 + u), expm1(u) = exp(u) − 1. The
definitions are the mathematical ones: the max shift that keeps softmax and
logsumexp finite is an implementation detail of evaluation, not part of the
function, so it is not unfolded into a stop. Each unfolded builtin is listed
as a `definition:` line, as user functions are; the closing check still
compares with the engine's derivative of what the user wrote (equal values,
a different spelling). Each definition is written in its primitive's record
(`Primitive.unfold`, expr/primitives/), and DEFINITIONS is read from them.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.expr import primitives
from gradlang.expr.values import elements, elementwise, is_scalar, to_symbolic

_FORMS = ("component", "vector", "call")  # softmax, then the reductions of a vector, then the elementwise


def _definitions() -> dict:
    """class -> (its definition in primitives, the definition as a reader sees it), from each record's `unfold`.

    Listed (and so shown) the vector functions first, the component one
    (softmax) before the reductions, then the elementwise ones, each group in
    the registry's order."""
    found = [r for r in primitives.records() if r.unfold]
    return {r.cls: r.unfold for r in sorted(found, key=lambda r: _FORMS.index(r.form))}


DEFINITIONS = _definitions()


def unfolded(expr):
    """The expression with every builtin of DEFINITIONS replaced by its definition (inner ones first)."""
    if not isinstance(expr, sp.Basic):
        return expr
    for cls, (definition, _) in DEFINITIONS.items():
        expr = expr.replace(cls, definition)
    return expr


def builtins_in(expr) -> list:
    """The classes of DEFINITIONS that occur in the expression, in the table's order."""
    if not isinstance(expr, sp.Basic):
        return []
    return [cls for cls in DEFINITIONS if expr.has(cls)]


def unfolded_request(request):
    """The request with its expression unfolded and each unfolded builtin's definition listed.

    Returns the request unchanged when it holds no builtin. For a selected
    request (grad(e, x)[1]) the whole request is unfolded too, so the title
    still reads as the user wrote it.
    """
    expr = to_symbolic(request.expr)
    found = builtins_in(expr if is_scalar(expr) else sp.Tuple(*elements(expr)))
    if not found:
        return request
    definitions = tuple(getattr(request, "definitions", ())) + tuple(DEFINITIONS[cls][1] for cls in found)
    changes = {"expr": elementwise(unfolded, expr), "definitions": definitions}
    whole = getattr(request, "whole", None)
    if whole is not None:
        changes["whole"] = unfolded_request(whole)
    return replace(request, **changes)
