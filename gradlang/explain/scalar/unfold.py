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
a different spelling).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.expr.primitives.elementwise import Expm1, Log1p, Sigmoid, Softplus
from gradlang.expr.primitives.vectors import LogSumExp, Norm, Softmax
from gradlang.expr.values import elements, elementwise, is_scalar, to_symbolic


def _softmax(k, *v):
    return sp.exp(v[int(k)]) / sp.Add(*[sp.exp(a) for a in v])


# class -> (its definition in primitives, the definition as a reader sees it)
DEFINITIONS = {
    Softmax: (_softmax, "softmax(v)[k] = exp(v[k]) / sum(exp(v))"),
    LogSumExp: (lambda *v: sp.log(sp.Add(*[sp.exp(a) for a in v])), "logsumexp(v) = log(sum(exp(v)))"),
    Norm: (lambda *v: sp.sqrt(sp.Add(*[a ** 2 for a in v])), "norm(v) = sqrt(sum(v^2))"),
    Sigmoid: (lambda u: 1 / (1 + sp.exp(-u)), "sigmoid(u) = 1 / (1 + exp(-u))"),
    Softplus: (lambda u: sp.log(1 + sp.exp(u)), "softplus(u) = log(1 + exp(u))"),
    Log1p: (lambda u: sp.log(1 + u), "log1p(u) = log(1 + u)"),
    Expm1: (lambda u: sp.exp(u) - 1, "expm1(u) = exp(u) - 1"),
}


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
