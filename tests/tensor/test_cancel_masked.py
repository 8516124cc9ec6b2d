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


def test_the_distribution_spreads_the_product_and_nothing_inside_its_nodes():
    # Issue #41: SymPy's deep expand_mul spread the sums inside a Σ's argument too, so the layer norm's
    # (2 x − 2 Σx/n) Σ(g ⊙ (x − Σx/n) ⊙ (β − t)) became seven dots, each tidied and cancelled, and thrown
    # away: half the gradient's time. Only the product's own sums are spread, the terms expandable counts.
    from gradlang.derive.tensor.rewrite import spread_out
    from gradlang.derive.tensor.work import expanded_terms

    g, beta = t.Var("g", (n,)), t.Var("beta", (n,))
    inner = t.Total(g * (x - t.Total(x) / n) * (beta - c))
    product = (2 * x - 2.0 * t.Total(x) / n) * inner
    spread = spread_out(product)
    assert len(sp.Add.make_args(spread)) == expanded_terms(product) == 2
    assert all(inner in term.args for term in sp.Add.make_args(spread))  # the Σ as the program gave it
    assert sp.expand(spread - product) == 0


def test_the_layer_norm_gradient_cancels_a_few_coefficients_and_prints_as_before(monkeypatch):
    # Its tidy ran SymPy's cancel on 7 coefficients (the seven dots' among them), 0.15 s of its 0.3 s; now 4.
    from gradlang import Session
    from gradlang.expr.equal import forget
    from gradlang.render import to_plain

    forget()  # no coefficient cancelled by an earlier test is found in the caches
    calls = []
    original = sp.cancel
    monkeypatch.setattr(sp, "cancel", lambda *args, **kw: calls.append(args) or original(*args, **kw))
    program = ("n: size\nx, g, beta, t: R^n\nmu = mean(x)\nv = mean((x - mu)^2)\nxhat = (x - mu) / sqrt(v + 1e-5)\n"
               "L = 0.5 * sum((g*xhat + beta - t)^2)\ngrad(L, x)\n")
    printed = to_plain(Session(time_limit=None).run(program)[-1])
    assert len(calls) <= 4, len(calls)
    assert printed.splitlines()[-1] == (
        "g*t4/sqrt(t3) - 0.5*((2.0*dot(beta, g) + 2.0*dot(g*t2, g)/sqrt(t3) - 2.0*dot(t, g))/(n*sqrt(t3))) - "
        "0.5*sum(g*t2*t4)*(2.0*x - 2.0*t1/n)/(n*t3^(3/2))")
