"""The scalar factors' cancel-and-factor sees function and tensor nodes as variables (issue #41).

SymPy's cancel and factor expand inside the arguments of the nodes they are
given: a layer norm's 1/(1e-5 + Σ(x − Σx/n)²/n) came back with the sum
multiplied out inside Σ, and the product of roots with n^(13/2) in it. That was
most of the time of the layer norm's gradient at a symbolic size, and it was
always thrown away (longer than the formula it started from).
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor.identities import _cancelled
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.shapes import size_symbol

n = size_symbol("n")
x = t.Var("x", (n,))
c = sp.Symbol("c", real=True)


def test_a_sum_inside_a_node_is_not_multiplied_out():
    centred = t.Total((x - 1.0 * t.Total(x) / n) ** 2)
    result = _cancelled(c / (1.0e-5 + centred / n))
    assert centred in result.atoms(t.Total)  # the node as given, not sum(x² − 2.0 x Σx/n + …)
    assert sp.simplify(result - c * n / (1.0e-5 * n + centred)) == 0


def test_a_root_of_a_sum_stays_a_root():
    variance = 1.0e-5 + t.Total(x ** 2) / n
    result = _cancelled(c / sp.sqrt(variance) + 1 / (2 * sp.sqrt(variance)))
    assert result == (2 * c + 1) / (2 * sp.sqrt(variance))  # no n^(1/2) taken out of the root


def test_factors_still_cancel_through_nodes_and_roots():
    sigma = sp.Function("sigma")(c)
    y = sp.Symbol("y")
    assert _cancelled(sigma * (1 - sigma) * (-y / sigma + (1 - y) / (1 - sigma))) == sigma - y
    root = sp.sqrt(t.Total(x ** 2) + 1)
    assert sp.expand(_cancelled(root * (1 + 1 / root)) - (root + 1)) == 0
