"""Requests and expressions shared by the explain tests."""

from __future__ import annotations

import sympy as sp

from gradlang.derive import derivatives as derive
from gradlang.derive.derivatives import DerivativeRequest
from gradlang.expr.functions import Maximum
from gradlang.expr.stopgrad import StopGradient

X = sp.Symbol("x", real=True)
XS = [sp.Symbol(f"x[{i}]", real=True) for i in range(3)]
VECTOR = sp.ImmutableDenseNDimArray(XS, (3,))


def diff_request(expr, *specs):
    specs = tuple(specs) or ((X, 1),)
    return DerivativeRequest("diff", expr, None, specs, derive.diff(expr, list(specs)), None)


def grad_request(expr, wrt=VECTOR):
    with derive.readable():  # as inside an explain statement
        return DerivativeRequest("grad", expr, wrt, (), derive.grad(expr, wrt), None)


def log_stable_softmax_0():
    """log(softmax(x)[0]) as gradlang builds it: exp(v - sg(max(v))) / sum(...)."""
    m = StopGradient(Maximum(*XS))
    return sp.log(sp.exp(XS[0] - m) / sum(sp.exp(x - m) for x in XS))


def tape_view(program: str):
    """The folded tape (explain/backward/view.py) of the program's last `explain backward(e, x)`.

    By a declared vector or matrix, explain shows the tensor reverse pass, at `R^3` as at `R^n` (one engine);
    the tape of components it would have shown, which these tests read, is built from the same request."""
    from gradlang import Session
    from gradlang.core.explain_views import lowered_request
    from gradlang.explain.backward.view import backward_view

    [step] = Session().run(program)[-1].steps
    if getattr(step, "tape", None) is not None:
        return step
    return backward_view(lowered_request(step.request), False)
