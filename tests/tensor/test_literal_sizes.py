"""Literal sizes through the tensor engine (docs/language.md section 3a, docs/architecture.md).

`x: R^3` binds one tensor: the formula is the one `x: R^n` gives, its
components come on request, and its numbers are those of the formula at the
point (core/at.py), whatever the sizes are spelled; the component engine
(`ComponentSession()`, the old path and the oracle) agrees with them to
1e-12, and exactly where the point is exact.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from tests.component_session import ComponentSession
from tests.conftest import as_floats
from gradlang.expr.tensor import is_tensor


def _text(source: str, components: bool = False) -> str:
    return (ComponentSession() if components else Session()).run(source)[-1].text


def test_a_literal_size_gives_the_formula_of_a_symbolic_size():
    symbolic = _text("m, n: size\nW: R^(m,n)\nx: R^n\ny: R^m\ngrad(sum((W @ x - y)^2), W)")
    literal = _text("W: R^(2,3)\nx: R^3\ny: R^2\ngrad(sum((W @ x - y)^2), W)")
    assert literal == symbolic == "2*outer(W @ x - y, x)"
    nll = _text("W: R^(2,3)\nx: R^3\ngrad(-log(softmax(W @ x)[1]), W)")
    assert nll == "outer(softmax(W @ x) - onehot(1, 2), x)"


def test_a_declaration_at_a_literal_size_is_one_tensor():
    session = Session()
    session.run("x: R^3\nW: R^(2,3)")
    assert is_tensor(session.env["x"]) and is_tensor(session.env["W"])
    assert session.run("x")[-1].text == "x"


@pytest.mark.parametrize("source, expected", [
    ("x: R^3\ncomponents(x)", "[x[0], x[1], x[2]]"),
    ("x: R^3\ncomponents(grad(sum(x^2), x))", "[2*x[0], 2*x[1], 2*x[2]]"),
    ("x: R^3\nx[0] * x[-1]", "x[0]*x[2]"),
    ("x: R^3\ndiff(sum(x^2), x[1])", "2*x[1]"),
    ("x: R^3\ngrad(x[0] * x[1], x)", "[x[1], x[0], 0]"),  # its components print shorter than its formula
    ("W: R^(1,2)\ngrad(sum(W), W)", "[[1, 1]]"),  # an array of numbers prints as numbers
    ("x: R^3\nprod(x)", "x[0]*x[1]*x[2]"),  # no tensor form: taken by components
    ("x: R^3\nx + [1, 2, 3]", "x + [1, 2, 3]"),  # a list of numbers beside a tensor is a constant of its formula
    ("x: R^3\ncomponents(x + [1, 2, 3])", "[x[0] + 1, x[1] + 2, x[2] + 3]"),
    ("x: R^3\nx + [1, x[0], 3]", "[x[0] + 1, x[0] + x[1], x[2] + 3]"),  # a list holding a component: by components
])
def test_components_come_on_request(source, expected):
    assert _text(source) == expected


PROGRAMS = [
    "x: R^3\ngrad(logsumexp(x), x) at x = [1.0, 2.0, 3.0]",
    "x: R^3\ng = grad(-log(softmax(x)[1]), x)\ng at x = [1, 2, 3]",  # exact in, exact out
    "W: R^(2,3)\nx: R^3\ng = grad(sum(tanh(W @ x)^2), W)\ng at W = [[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6]], x = [1.0, -1.0, 2.0]",
    "x: R^3\nv = [1, 2, 3] * x\ngrad(sum(v^2) + prod(x), x) at x = [0.5, -1.5, 2.0]",  # components beside a tensor
    "x: R^3\ngrad(sum(x^2), x) at x[0] = 1",  # one component given a number
    "x: R^2\ngrad(min(sqrt(x)), x) at x = [4, 9]",
    "x: R^3\nsm = softmax(x - sg(max(x)))\ngrad(log(sm[0]), x) at x = [1.0, 3.0, 3.0]",
]


@pytest.mark.parametrize("source", PROGRAMS)
def test_numbers_at_literal_sizes_agree_with_the_component_engine(source):
    value, oracle = Session().eval(source), ComponentSession().eval(source)
    if "." not in source:  # exact in, exact out: the same exact value
        assert _text(source) == _text(source, components=True)
        return
    np.testing.assert_allclose(as_floats(value), as_floats(oracle), rtol=1e-12, atol=1e-300)


def test_an_overflow_under_where_is_jax_s_nan_at_every_size():
    """The Hessian's off-diagonal entries are 0 * exp(2000) = nan in the formula, in JAX (jax.hessian) and at
    R^n; the component engine, which never multiplies by the zero, said 0 at R^3."""
    program = "v: R^{}\nE = sum(where(v > 1, exp(1000*v), v^2))\nhessian(E - 3/0.0, v) at v = [1.0, 2.0, 3.0]"
    expected = "[[nan, nan, nan], [nan, inf, nan], [nan, nan, inf]]"
    assert _text(program.format("3")) == _text(program.format("n")) == expected


def test_a_name_rebound_since_reads_its_new_value():
    session = Session()
    session.run("x: R^2\ng = grad(sum(x^3), x)\ng = 2 * x")
    assert session.run("g at x = [1, 2]")[-1].text == "[2, 4]"
    session.run("g(t) = t + 1")
    assert session.run("g(x[0]) at x = [5, 0]")[-1].text == "6"


def test_a_mixed_value_is_differentiated_whole_never_a_silent_zero():
    by_tensors = _text("x: R^3\nv = [1, 2, 3] * x\ncomponents(grad(sum(v^2), x))")
    assert by_tensors == _text("x: R^3\nv = [1, 2, 3] * x\ngrad(sum(v^2), x)", components=True)
    assert by_tensors == "[2*x[0], 8*x[1], 18*x[2]]"
    assert _text("x: R^3\nv = [1, 2, 3] * x\ngrad(sum(v^2), x)") == "2*x*[1, 4, 9]"  # the list, a constant


@pytest.mark.parametrize("body, expected", [
    ("softmax(x)[k]", "softmax(x)[k]"), ("onehot(k, 3) + x", "x + onehot(k, 3)"), ("argmax(x)", "argmax(x)"),
    ("x[k] * x[0]", "x[0]*x[k]"),
])
def test_a_formula_whose_components_need_a_value_prints_as_at_a_symbolic_size(body, expected):
    """render/shown.py's `shorter` is a display choice: where lowering needs a value (an index k, argmax of
    symbols) the formula is shown, as `x: R^n` shows it, never an error."""
    assert _text(f"x: R^3\n{body}") == expected
    assert _text(f"x: R^n\n{body}".replace("onehot(k, 3)", "onehot(k, n)")) == expected.replace("3)", "n)")


def test_the_shorter_form_is_chosen_for_display_not_kept_in_the_value():
    from gradlang.render.shown import shorter

    result = Session().run("x: R^3\ngrad(x[0] * x[1], x)")[-1]
    assert result.text == "[x[1], x[0], 0]"
    assert shorter(result.value) == shorter(shorter(result.value))  # idempotent: a printer may ask twice


@pytest.mark.parametrize("body", ["max(dot(y, y), min(x))", "grad(max(dot(y, y), min(x)), x)", "softmax(x) * sum(y)"])
def test_a_formula_that_picks_no_component_prints_as_at_a_symbolic_size(body):
    """At R^1 the components print shorter (max(y[0]^2, x[0])), but the value is the formula, and a formula
    that picks no component is shown as one whatever its length: the same text as at R^n."""
    symbolic = _text(f"n: size\nx, y: R^n\n{body}")
    assert _text(f"x, y: R^1\n{body}") == symbolic
    assert "[0]" not in symbolic


def test_a_formula_that_picks_components_may_print_them():
    assert _text("x: R^3\ngrad(x[0] * x[1], x)") == "[x[1], x[0], 0]"
    assert _text("x: R^3\ngrad(sum(x^2), x) - 2*x") == "[0, 0, 0]"  # numbers are shown as numbers


@pytest.mark.parametrize("body", [
    "x*ones(n)", "inv(eye(n) + transpose(X) @ X)", "outer(ones(m), sg(x))", "x + zeros(n)",
    "dot(onehot(1, n), x)", "grad(logdet(transpose(X) @ X + lam*eye(n)), X)",
])
def test_ones_eye_zeros_onehot_at_a_literal_size_are_the_nodes_of_a_symbolic_size(body):
    """ones(3) is the node ones(n) is, never the list [1, 1, 1] beside the formula (nor lam*[[1, 0], …], which
    took a logdet's gradient to 1,315 characters of components); its numbers are the same."""
    symbolic = _text(f"m, n: size\nx: R^n\nX: R^(m,n)\n{body}")
    literal = _text(f"x: R^3\nX: R^(2,3)\n{body.replace('(n)', '(3)').replace('(m)', '(2)').replace(', n)', ', 3)')}")
    assert literal == symbolic.replace("(n)", "(3)").replace("(m)", "(2)").replace(", n)", ", 3)")
    assert "[" not in literal


def test_ones_and_eye_alone_print_as_their_numbers_and_give_them_to_an_at():
    assert _text("ones(3)") == "[1, 1, 1]" and _text("eye(2)") == "[[1, 0], [0, 1]]"
    assert _text("onehot(1, 3)") == "[0, 1, 0]" and _text("zeros(2, 3)") == "[[0, 0, 0], [0, 0, 0]]"
    assert _text("x: R^3\nsum(x^2) at x = 2*ones(3)") == "12"  # exact in, exact out
    assert _text("W: R^(2,2)\ndet(W) at W = 2*eye(2)") == "4"
    assert _text("det(2*eye(100))") == str(2**100)  # numbers of a node: the component engine's exact det


@pytest.mark.parametrize("body", [
    "simplify(grad(sum((W @ x)^2), W))", "expand(2*(x - sg(x)))", "factor(x*x + 2*x)", "N(pi*x)",
    "simplify(jacobian(softmax(x - sg(max(x))), x))", "expand(grad(-log(softmax(W @ x)[1]), W))",
])
def test_simplify_expand_factor_and_n_print_a_formula_at_a_literal_size(body):
    """They act on the formula at R^3 as at R^n (they printed 3×3 arrays of components at R^3); their numbers
    are the formula's."""
    symbolic = _text(f"m, n: size\nx: R^n\nW: R^(m,n)\n{body}")
    literal = _text(f"x: R^3\nW: R^(2,3)\n{body}")
    assert literal == symbolic.replace("(n)", "(3)").replace(", m)", ", 2)")
    assert "x[" not in literal and "W[" not in literal
    point = "x = [0.5, -1.0, 2.0], W = [[0.1, 0.2, -0.3], [0.4, 0.5, 0.6]]"
    for declared in ("m, n: size\nx: R^n\nW: R^(m,n)", "x: R^3\nW: R^(2,3)"):
        session = Session()
        session.run(declared)
        np.testing.assert_allclose(as_floats(session.eval(f"{body} at {point}")),
                                   as_floats(session.eval(f"{body[body.index('(') + 1:-1]} at {point}")), rtol=1e-12)


def test_simplify_shows_numbers_where_the_components_simplify_to_numbers():
    """The taste program (LANGUAGE.md section 1): a user-defined softmax's Jacobian equals the stable one's, which
    the components prove and the formula's algebra does not; a difference that is not zero stays a formula."""
    program = ("x: R^3\nsoftmax(v) = exp(v) / sum(exp(v))\n"
               "stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n")
    zero = _text(program + "simplify(jacobian(stable_softmax(x), x) - jacobian(softmax(x), x))")
    assert zero == "[[0, 0, 0], [0, 0, 0], [0, 0, 0]]"
    assert _text("x: R^3\nsimplify(x - x)") == "[0, 0, 0]"
    kept = _text(program + "simplify(jacobian(stable_softmax(x), x) - jacobian(x^2, x))")
    assert "x[" not in kept and "[[" not in kept
