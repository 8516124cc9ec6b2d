"""Values of symbolic size as a user meets them: declarations, shapes, formulas, at, components, errors."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from gradlang import GradlangError, Session
from gradlang.expr.tensor import Var
from tests.conftest import as_floats

MODEL = "m, n: size\nW: R^(m,n)\nx, z: R^n\ny: R^m\n"


def _run(source: str):
    session = Session()
    return session, session.run(MODEL + source)


def _error(source: str) -> GradlangError:
    with pytest.raises(GradlangError) as caught:
        Session().run(MODEL + source)
    return caught.value


def test_a_name_used_in_a_shape_is_a_size():
    session = Session()
    session.run("x: R^n\nW: R^(k,n)")
    assert isinstance(session.eval("x"), Var)
    assert session.eval("len(x)") == sp.Symbol("n", integer=True, positive=True)


def test_a_size_bound_to_a_number_is_that_literal_size():
    session = Session()
    session.run("n = 3\nx: R^n")
    assert session.eval("x").shape == (3,)  # one tensor of literal size, as x: R^3 declares
    assert session.eval("len(x)") == 3


def test_several_names_share_one_declaration():
    session = Session()
    session.run("n: size\nu, v: R^n")
    assert session.eval("u").shape == session.eval("v").shape


@pytest.mark.parametrize("source, words", [
    ("W @ y", ["m×n matrix", "vector of length m"]),
    ("x + y", ["vector of length m", "vector of length n"]),
    ("dot(x, y)", ["vector of length n", "vector of length m"]),
    ("[x, y] + 1", ["list"]),  # [x, y] is a list of tensors (grad(L, [x, y])), no operand of arithmetic
    ("x + [1, 2]", ["vector of length 2", "vector of length n"]),  # a list of scalars is a tensor of its shape
    ("trace(W)", ["square matrix", "m×n"]),
])
def test_a_shape_mismatch_is_a_placed_shape_error_naming_both_shapes(source, words):
    error = _error(source)
    assert error.kind == "ShapeError" and error.span is not None
    for word in words:
        assert word in error.message, error.message


@pytest.mark.parametrize("source, plain", [
    ("grad(sum((W @ x - y)^2), W)", "2*outer(W @ x - y, x)"),
    ("grad(sum((W @ x - y)^2), x)", "2*(transpose(W) @ (W @ x - y))"),
    ("grad(-log(softmax(W @ x)[k]), W)", "outer(softmax(W @ x) - onehot(k, m), x)"),
    ("grad(logsumexp(x), x)", "softmax(x)"),
    ("grad(sum(x), x)", "ones(n)"),
    ("grad(a, x)", "zeros(n)"),
    ("grad(dot(y, W @ x), W)", "outer(y, x)"),
    ("grad(norm(x), x)", "x/norm(x)"),
    ("jacobian(softmax(x), x)", "s = softmax(x)\ndiag(s) - outer(s, s)"),
    ("jacobian(W @ x, x)", "W"),
    ("hessian(sum(x^2), x)", "2*eye(n)"),
    ("blocked(sum(x * sg(x)), x)", "x"),
    ("blocked(-log(exp(x[1] - sg(max(x))) / sum(exp(x - sg(max(x))))), x)", "zeros(n)"),  # shaped like grad
    ("grad(sum(x * sg(x)), x)", "stop_gradient(x)"),
    # the two branches of a where's derivative are one where
    ("grad(sum(where(x > 0, x, 0.1*x)), x)", "where(x > 0, 1, 0.1)"),
    ("grad(huber(dot(y, W @ x) - 1, 1), x)", "t1 = dot(y, W @ x) - 1\n(transpose(W) @ y)*where(abs(t1) <= 1, t1, sign(t1))"),
    # an entry of an elementwise formula is the formula of the entry: a one-hot weighted NLL is s − e_k
    ("grad(-sum(onehot(k, m) * log(softmax(W @ x))), W)", "outer(softmax(W @ x) - onehot(k, m), x)"),
    # max along an axis: each row's shares of its maximum
    ("grad(sum(max(W, axis=1)), W)", "max_shares(W, 1)"),
    ("diff(sum(max(a*W, axis=1)), a)", "sum(sum(W*max_shares(a*W, 1), 1))"),  # forward mode, by a scalar
    # a sum of a product of two vectors is their dot product
    ("grad(sum(normalize(x) * z), x)", "t1 = norm(x)\nz/t1 - x*dot(x, z)/t1^3"),
])
def test_a_derivative_at_symbolic_size_is_the_formula_a_teacher_writes(source, plain):
    _, results = _run(source)
    assert results[-1].text == plain


def test_the_plain_form_reads_back_to_the_same_numbers():
    point = "W = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], x = [0.3, -0.2, 0.9], y = [1.0, -2.0]"
    for source in ("grad(sum(tanh(W @ x) * y), W)", "grad(-log(softmax(W @ x)[1]), x)", "jacobian(sigmoid(W @ x), x)"):
        session, results = _run(source)
        again = Session()
        *named, last = results[-1].text.splitlines()  # the named parts (p = sigmoid(W @ x)) come first
        again.run(MODEL + "\n".join(named))
        first = as_floats(session.eval(f"({source}) at {point}"))
        second = as_floats(again.eval(f"({last}) at {point}"))
        np.testing.assert_allclose(first, second, rtol=1e-12)


def test_at_learns_sizes_from_arrays_and_keeps_exact_numbers_exact():
    session, _ = _run("g = grad(sum((W @ x - y)^2), W)")
    exact = session.eval("g at W = [[1, 2, 3], [4, 5, 6]], x = [1, 0, 2], y = [1, 1]")
    assert exact.tolist() == [[12, 0, 24], [30, 0, 60]]
    mixed = session.eval("g at W = [[1.0, 2, 3], [4, 5, 6]], x = [1.0, 0, 2], y = [1.0, 1]")
    assert as_floats(mixed).tolist() == [[12.0, 0.0, 24.0], [30.0, 0.0, 60.0]]
    floats = session.eval("g at W = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], x = [1.0, 0.0, 2.0], y = [1.0, 1.0]")
    assert isinstance(floats, np.ndarray) and floats.tolist() == [[12.0, 0.0, 24.0], [30.0, 0.0, 60.0]]


def test_at_takes_numpy_arrays_bound_through_the_python_api():
    session, _ = _run("g = grad(sum((W @ x - y)^2), W)")
    rng = np.random.default_rng(3)
    W, x, y = rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=4)
    for name, value in (("W0", W), ("x0", x), ("y0", y)):
        session.bind(name, value)
    np.testing.assert_allclose(session.eval("g at W = W0, x = x0, y = y0"), 2 * np.outer(W @ x - y, x), rtol=1e-12)


@pytest.mark.parametrize("source, kind, words", [
    ("sum(x) at x = [1, 2], n = 3", "ShapeError", "is 2 from an array"),
    ("softmax(x)[k] at x = [1.0, 2.0], k = 1.5", "ValueError", "whole number"),
    ("sum(x) at y = [1, 2]", "ValueError", "needs a value"),
    ("components(grad(sum(x^2), x))", "ShapeError", "components(e at n = 3)"),
    ("huber(x, x)", "ShapeError", "literal sizes"),  # prod(x) is a formula now (issue #37)
    ("dif(x^2, x)", "NameError", "did you mean 'diff'"),
    ("diff(x[0]^2, x[0])", "DiffError", "literal size"),
    ("jacobian(outer(x, x), x)", "ShapeError", "(a tensor of rank 3) is taken by components"),
    ("grad(x, x)", "ShapeError", "scalar"),  # the component engine's kind too
])
def test_what_the_tensor_engine_cannot_do_is_a_placed_error_never_a_silent_answer(source, kind, words):
    error = _error(source)
    assert error.kind == kind and words in error.message, error.message
    assert error.span is not None


def test_components_at_a_literal_size_are_the_component_engines_expressions():
    session, _ = _run("")
    value = session.eval("components(grad(sum(x^2), x) at n = 3)")
    assert [str(e) for e in value] == ["2*x[0]", "2*x[1]", "2*x[2]"]


@pytest.mark.parametrize("source, expected", [
    ("sum(x/x) at n = 3", 3),
    ("sum(x - x + 1) at n = 4", 4),
    ("sum(exp(x - x)) at x = [1.0, 2.0]", 2.0),
    ("sum(x^0) at x = [1, 2, 3]", 3),
    ("mean(W - W + 2) at m = 2, n = 3", 2),
])
def test_a_value_keeps_its_shape_where_algebra_cancels_it(source, expected):
    """x/x is 1 in each component: summed over n components it is n, never 1."""
    _, results = _run(source)
    assert float(results[-1].value) == expected


def test_explain_of_a_gradient_at_symbolic_size_shows_the_reverse_pass_one_rule_a_line():
    from gradlang.render.json import to_json
    from gradlang.render.plain import to_plain

    _, results = _run("explain grad(-log(softmax(W @ x)[1]), W)")
    text = to_plain(results[-1])
    lines = [line for line in text.splitlines() if line.startswith("# (")]
    assert len(lines) <= 25
    # the softmax rule does not fit beside its line, so the line gives its name; the formula is JSON's
    assert "[softmax; then " in text and "[matmul: Ā = Ȳ Bᵀ, B̄ = Aᵀ Ȳ]" in text
    rules = [line["rule"] for line in to_json(results[-1])["steps"][0]["vector"]["lines"]]
    assert any(rule.startswith("softmax: z̄ = s ⊙ (s̄ − ⟨s̄, s⟩); then ") for rule in rules)
    assert "∂L/∂(W @ x) = softmax(W @ x) - onehot(1, m)" in text
    assert lines[-1].split(" = ", 1)[1].split("  [")[0].strip() == "outer(softmax(W @ x) - onehot(1, m), x)"
    assert text.splitlines()[-1] == "outer(softmax(W @ x) - onehot(1, m), x)"


def test_a_power_of_a_tensor_reduction_prints_its_exponent_in_latex():
    """norm(x)^2 was \\left(\\|x\\|\\right)^{exp}: the template wrote the name, not the exponent."""
    _, results = _run("norm(x)^2\nsum(x)^3")
    assert results[0].latex.endswith("^{2}") and results[1].latex.endswith("^{3}")


def test_max_along_an_axis_shares_a_tie_within_its_row_at_a_symbolic_size():
    _, results = _run("grad(sum(max(W, axis=1)), W) at W = [[1.0, 3.0, 3.0], [2.0, 0.5, -1.0]]")
    assert np.allclose(np.asarray(results[-1].value, dtype=float), [[0, 0.5, 0.5], [1, 0, 0]])
