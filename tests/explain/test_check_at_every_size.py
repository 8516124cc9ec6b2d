"""A closing check at every size (issue 40): at a symbolic size a derivation ends with a check against
grad, symbolic where the formulas are proved equal, else numeric at a random point with random sizes
drawn from a fixed seed; the line says which kind it was."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from gradlang.core.explain_sizes import size_check
from gradlang.core.session import Session
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import Var
from gradlang.render import to_json, to_latex, to_plain
from tests.explain.every_program import table_programs

N = sp.Symbol("n", integer=True, positive=True)
X = Var("x", (N,))


def _symbolic_programs() -> list:
    return [(name, source) for name, source in table_programs() if name.endswith("@n")]


@pytest.mark.parametrize("name, source", _symbolic_programs(), ids=[p[0] for p in _symbolic_programs()])
def test_every_derivation_at_a_symbolic_size_ends_with_a_check_that_says_its_kind(name, source):
    result = Session().run(source)[-1]
    (explanation,) = result.steps
    check = explanation.check
    assert check is not None and check.agrees and check.kind in ("symbolic", "numeric"), to_plain(result)
    last = to_plain(result).splitlines()[-2 if explanation.derived is not None else -1]
    assert any(line.startswith("# ✓ equals ") and f"({check.kind}ally" in line
               for line in to_plain(result).splitlines()), last
    assert to_json(result)["steps"][0]["check"]["kind"] == check.kind


def test_a_check_the_rewrites_cannot_prove_is_numeric_names_its_sizes_and_is_the_same_bytes():
    source = "n: size\nx: R^n\nexplain jacobian(2 * softmax(x - sg(max(x))) + x, x)"
    texts = [to_plain(Session().run(source)[-1]) for _ in range(2)]
    assert texts[0] == texts[1]
    assert "# ✓ equals jacobian (numerically: at a random point with n = " in texts[0]
    latex = to_latex(Session().run(source)[-1])
    assert r"(numerically: at a random point with $n = " in latex


def test_a_proved_check_is_symbolic():
    source = "n: size\nx: R^n\nW: R^(n,n)\nexplain grad(sum((W @ x)^2), W)"
    result = Session().run(source)[-1]
    assert "# ✓ equals grad (symbolically: the same formula at every size)" in to_plain(result)
    assert json.dumps(to_json(result)).count('"kind": "symbolic"') == 1


def test_the_check_catches_a_wrong_derivation_numerically():
    """The check compares numbers, not its own assumptions: a formula off by a term fails."""
    right = t.SoftmaxOf(X) - t.OneHot(0, N)
    wrong = t.SoftmaxOf(X) - t.OneHot(1, N)
    check = size_check("grad", wrong, right)
    assert check.kind == "numeric" and not check.agrees
    assert size_check("grad", X + X, 2 * X).agrees  # equal once tidied: x + x is 2x
    assert size_check("grad", 2 * X, 2 * X).kind == "symbolic"


def test_a_grad_by_a_list_of_tensors_at_a_symbolic_size_ends_with_its_check():
    source = "m, n: size\nW: R^(m,n)\nb: R^m\nx: R^n\nexplain grad(sum(tanh(W @ x + sg(b))^2), [W, b])"
    result = Session().run(source)[-1]
    assert result.steps[0].check.agrees and result.steps[0].check.kind


@pytest.mark.parametrize("statement", ["grad(sum(b*c*a), [c, a])", "grad(sum(b*c), [c])",
                                       "grad(sum(b*sg(c)*a), [c, a])"])
def test_a_grad_by_a_list_of_scalars_at_a_symbolic_size_is_proved(statement):
    """The derivation's vector of scalars against the engine's list beside a tensor: entry by entry
    (a list of one once failed its numeric check, a vector of one against a scalar)."""
    result = Session().run(f"m: size\nb: R^m\nc: R\na: R\nexplain {statement}")[-1]
    check = result.steps[0].check
    assert check.agrees and check.kind == "symbolic", to_plain(result)
