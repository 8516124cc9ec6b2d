"""Builtins are primitives at the level the user wrote them (language reference, section 6)."""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.render.plain import to_plain
from tests.conftest import as_floats, run_values


@pytest.mark.parametrize(
    "source, expected",
    [
        ("diff(sigmoid(z), z)", "(1 - sigmoid(z))*sigmoid(z)"),
        ("diff(softplus(z), z)", "sigmoid(z)"),
        ("sigmoid(z) + softplus(z)", "sigmoid(z) + softplus(z)"),
        ("sigmoid(0)", "1/2"),
        ("softplus(0)", "log(2)"),
    ],
)
def test_sigmoid_and_softplus_stay_whole(source, expected):
    assert to_plain(Session().eval(source)) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("sigmoid(t) at t = [-1000.0, 0, 1000]", [0.0, 0.5, 1.0]),
        ("diff(sigmoid(t), t) at t = [-1000.0, 0, 1000]", [0.0, 0.25, 0.0]),
        ("softplus(t) at t = [-1000.0, 0, 1000]", [0.0, np.log(2), 1000.0]),
        ("diff(softplus(t), t) at t = [-1000.0, 0, 1000]", [0.0, 0.5, 1.0]),
        ("N(sigmoid(1))", 1 / (1 + np.exp(-1))),
        ("N(softplus(1))", np.log1p(np.e)),
    ],
)
def test_sigmoid_and_softplus_are_stable(source, expected):
    assert np.allclose(run_values(source), expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("source", ["sigmoid(z) * softplus(z^2)", "diff(sigmoid(z)*softplus(3*z), z, 2)"])
def test_plain_output_reads_back(source):
    value = Session().eval(source)
    assert Session().eval(to_plain(value)) == value


def test_second_derivative_matches_finite_differences():
    h = 1e-4
    z = 0.7
    s = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    expected = (s(z + h) - 2 * s(z) + s(z - h)) / h**2
    assert np.isclose(float(as_floats(Session().eval(f"diff(sigmoid(z), z, 2) at z = {z}"))), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("x: R^3\ngrad(logsumexp(x), x)", "softmax(x)"),  # the tensor formula, at a literal size too
        ("x: R^3\ncomponents(grad(logsumexp(x), x))", "[softmax([x[0], x[1], x[2]])[0], softmax([x[0], x[1], x[2]])[1], "
                                                      "softmax([x[0], x[1], x[2]])[2]]"),
        ("x: R^3\ndiff(softmax(x)[0], x[0])", "(1 - softmax([x[0], x[1], x[2]])[0])*softmax([x[0], x[1], x[2]])[0]"),
        ("x: R^3\ndiff(softmax(x)[0], x[2])", "-softmax([x[0], x[1], x[2]])[0]*softmax([x[0], x[1], x[2]])[2]"),
        ("logsumexp([a, b])", "logsumexp([a, b])"),
        ("logsumexp([0, 0])", "log(2)"),
        ("softmax([a])", "[1]"),
    ],
)
def test_softmax_and_logsumexp_stay_whole(source, expected):
    assert to_plain(Session().eval(source)) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("x: R^3\nlogsumexp(x) at x = [1000.0, 1000, -1000]", [1000 + np.log(2)]),
        ("x: R^3\nsoftmax(x) at x = [1000.0, 1000, -1000]", [0.5, 0.5, 0.0]),
        ("x: R^3\ngrad(logsumexp(x), x) at x = [-1000.0, 1000, 1000]", [0.0, 0.5, 0.5]),
        ("x: R^3\ngrad(log(softmax(x)[0]), x) at x = [1000.0, 1000, -1000]", [0.5, -0.5, 0.0]),
        ("N(logsumexp([1000, 1001]))", [1001 + np.log1p(np.exp(-1))]),
        ("N(softmax([1000, 1001])[0])", [1 / (1 + np.e)]),
    ],
)
def test_softmax_and_logsumexp_are_stable(source, expected):
    assert np.allclose(run_values(source), expected, rtol=1e-14, atol=0)


@pytest.mark.parametrize("source", ["softmax([a, b, c])[1]*logsumexp([a, b])", "softmax([[a, b], [c, 2]])"])
def test_softmax_plain_output_reads_back(source):
    value = Session().eval(source)
    assert Session().eval(to_plain(value)) == value


@pytest.mark.parametrize(
    "source, expected",
    [
        ("x: R^2\ngrad(norm(x), x)", "x/norm(x)"),
        ("x: R^2\ncomponents(grad(norm(x), x))", "[x[0]/norm([x[0], x[1]]), x[1]/norm([x[0], x[1]])]"),
        ("norm([3, 4])", "5"),
        ("norm([[1, 2], [3, 4]])", "sqrt(30)"),
        ("x: R^2\nhessian(norm(x), x)[0, 1]", "-x[0]*x[1]/norm([x[0], x[1]])^3"),
    ],
)
def test_norm_stays_whole(source, expected):
    assert Session().run(source)[-1].text == expected  # printed: at literal sizes, the shorter form (render/shown.py)


def test_norm_gradient_and_reading_back():
    assert np.allclose(run_values("x: R^3\ngrad(norm(x), x) at x = [3, 4, 0.0]"), [0.6, 0.8, 0.0], rtol=1e-15)
    value = Session().eval("norm([a, b - sg(b)])*norm([a])")
    assert Session().eval(to_plain(value)) == value
