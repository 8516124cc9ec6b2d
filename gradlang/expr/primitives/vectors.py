"""Primitives over all the components of a vector: logsumexp and softmax.

Both shift by the maximum, so logits of ±1000 stay finite.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.functions import Maximum
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.primitives import Primitive, register


def _stable_shift(items):
    return StopGradient(Maximum(*items))


def _logsumexp(*items):
    shift = _stable_shift(items)
    return shift + sp.log(sp.Add(*[sp.exp(e - shift) for e in items]))


def _softmax(*items):
    shift = _stable_shift(items)
    exps = [sp.exp(e - shift) for e in items]
    total = sp.Add(*exps)
    return [e / total for e in exps]


register(Primitive("logsumexp", None, "log(sum(exp(v))), computed stably", "logsumexp([1, 2, 3])",
                   build=_logsumexp, group="reduction", apply="reduction"))
register(Primitive("softmax", None, "exp(v - sg(max(v))) / sum(exp(v - sg(max(v)))), rows of a matrix",
                   "softmax([1, 2, 3])", build=_softmax, group="vector", apply="rows"))
