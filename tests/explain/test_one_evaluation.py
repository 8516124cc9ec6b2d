"""explain evaluates its statement once, by the ordinary evaluator, and shows each request by one view.

Issue #36 ("One engine"): at literal sizes explain used to evaluate the statement by components too, and
pair the two engines' requests by position. A grad of a 2-layer MLP at 16/32/48 walked every component
(12 s, against 0.6 s at symbolic sizes); now it is the reverse pass, as at symbolic sizes, and nothing is
lowered to components. These tests assert the structure (no timing): no component is built, no
evaluator by components is made, and the lines are those of the symbolic program.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang.core import evaluate
from gradlang.expr.tensor import lower
from gradlang.core.explain_sizes import size_check
from gradlang.core.session import Session
from gradlang.expr.tensor.nodes import Var
from gradlang.render.plain import to_plain

MLP = """W1: R^({h},{d})
W2: R^({o},{h})
x: R^{d}
y: R^{o}
hid = tanh(W1 @ x)
L = sum((W2 @ hid - y)^2)
explain grad(L, W1)"""


def _never(*args, **kwargs):
    raise AssertionError("explain of a tensor formula built its components")


def test_an_mlp_at_literal_sizes_is_the_reverse_pass_without_components(monkeypatch):
    symbolic = to_plain(Session().run(MLP.format(h="h", d="d", o="o"))[-1])
    made = []
    original = evaluate.Evaluator.__init__

    def counted(self, *args, **kwargs):
        made.append(args[5] if len(args) > 5 else kwargs.get("by_components", False))
        original(self, *args, **kwargs)

    monkeypatch.setattr(lower, "components", _never)
    monkeypatch.setattr(evaluate.Evaluator, "__init__", counted)
    result = Session().run(MLP.format(h=32, d=16, o=48))[-1]
    (explanation,) = result.steps
    assert explanation.summary == "tensor reverse pass" and explanation.check.agrees
    assert to_plain(result) == symbolic  # the whole derivation, its closing check included
    assert made and not any(made)  # no evaluator by components


def test_the_value_of_a_softmax_jacobian_at_a_literal_size_is_its_formula():
    result = Session().run("x: R^3\nexplain jacobian(softmax(x), x)")[-1]
    assert to_plain(result).splitlines()[-1] == "diag(s) - outer(s, s)"


def test_the_numbers_at_a_point_are_the_ordinary_ats():
    program = "W: R^(2,3)\nx: R^3\n{}grad(sum(tanh(W @ x)^2), W) at W = [[0.1, -0.2, 0.3], [0.5, 0.4, -0.6]], " \
              "x = [1.0, -2.0, 0.5]"
    explained = Session().run(program.format("explain "))[-1]
    plain = Session().run(program.format(""))[-1]
    assert np.array_equal(np.asarray(explained.value, float), np.asarray(plain.value, float))
    assert explained.steps[0].check.agrees and explained.steps[0].check.derived is not None


def test_the_closing_check_compares_tensor_formulas_by_their_floats():
    x, y = Var("x", (3,)), Var("y", (3,))
    assert size_check("grad", (x - y) ** 2, x ** 2 - 2 * x * y + y ** 2).agrees
    check = size_check("grad", (x - y) ** 2, x ** 2 + y ** 2)
    assert not check.agrees and check.kind == "numeric" and check.sizes == ()  # at its own size, none drawn


@pytest.mark.parametrize("statement, summary", [
    ("grad(x[0] * sg(x[1]), x)", "constant multiple rule"),  # picks its own components: the rule table
    ("grad(x[0] * sg(x[1]), x)[1]", "constant multiple rule"),  # a selection of such a formula (a selected
    # component of any other is the tensor pass and a line that picks it: test_walls.py)
    ("diff(sum(x^2), x[0])", "sum rule"),                       # a diff by one component
])
def test_component_requests_take_the_rule_table_over_the_lowered_request(statement, summary):
    (explanation,) = Session().run(f"x: R^3\nexplain {statement}")[-1].steps
    assert summary in explanation.summary and explanation.check.agrees
