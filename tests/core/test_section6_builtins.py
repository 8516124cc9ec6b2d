"""The builtins of section 6 written as compositions: values and gradients against JAX float64.

Each row is a gradlang program whose last line is an expression, a JAX
function computing the same thing (with `jax.lax.stop_gradient` where the
program stops), and the point both are evaluated at. huber is written out as
optax.huber_loss computes it (no optax here), logdet as `jnp.linalg.slogdet`'s
log|det| at matrices with det > 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.expr.tensor.lower import lowered
from gradlang.render.plain import to_plain

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient


def optax_huber(u, delta):
    """optax.huber_loss(u, 0, delta), as optax writes it."""
    abs_errors = jnp.abs(u)
    quadratic = jnp.minimum(abs_errors, delta)
    return 0.5 * quadratic**2 + delta * (abs_errors - quadratic)


def logdet(a):
    sign, value = jnp.linalg.slogdet(a)
    assert float(sign) > 0
    return value


@dataclass(frozen=True)
class Row:
    id: str
    source: str
    oracle: Callable
    point: dict

    def program(self) -> str:
        given = ", ".join(f"{name} = {_literal(value)}" for name, value in self.point.items())
        return f"{self.source.strip()} at {given}"


def _literal(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    return repr(float(value))


W23 = [[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]]
W33 = [[2.0, -1.0, 0.5], [0.3, 1.5, -0.2], [0.1, 0.4, 3.0]]  # det > 0
TIES = [[1.0, 3.0, 3.0], [0.0, 0.0, -1.0]]
C23 = jnp.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
C23_TEXT = "[[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]]"

ROWS = [
    # outer, diag, eye, onehot
    Row("outer-value", "a: R^2; b: R^3\nouter(a, b)", lambda a, b: jnp.outer(a, b),
        {"a": [1.5, -2.0], "b": [0.5, 1.0, -3.0]}),
    Row("outer-grad-stopped", "a: R^2; b: R^3\ngrad(sum(outer(a, sg(b))^2) + sum(outer(b, a)), b)",
        lambda a, b: jax.grad(lambda b: jnp.sum(jnp.outer(a, sg(b)) ** 2) + jnp.sum(jnp.outer(b, a)))(b),
        {"a": [1.5, -2.0], "b": [0.5, 1.0, -3.0]}),
    Row("diag-of-vector", "v: R^3\ndiag(v) @ [1.0, 2.0, -1.0]", lambda v: jnp.diag(v) @ jnp.array([1.0, 2.0, -1.0]),
        {"v": [0.5, -1.0, 2.0]}),
    Row("diag-of-matrix-grad", "W: R^(2,3)\ngrad(sum(diag(W)^3), W)", lambda W: jax.grad(lambda W: jnp.sum(jnp.diag(W) ** 3))(W),
        {"W": W23}),
    Row("eye-grad", "W: R^(2,2)\ngrad(sum((W @ sg(W) - eye(2))^2), W)",
        lambda W: jax.grad(lambda W: jnp.sum((W @ sg(W) - jnp.eye(2)) ** 2))(W), {"W": [[1.0, 2.0], [-0.5, 0.3]]}),
    Row("onehot-cross-entropy-grad", "x: R^3\ngrad(logsumexp(x) - dot(onehot(1, 3), x), x)",
        lambda x: jax.grad(lambda x: jax.nn.logsumexp(x) - jnp.dot(jax.nn.one_hot(1, 3), x))(x), {"x": [0.5, -1.0, 2.0]}),
    # argmax, argmin: integers, derivative 0
    Row("argmax-picks-first-of-tie", "x: R^3\ngrad(x[argmax([1, 5, 5])] * sg(x[0]) + argmin([2, 0, 0]) * x[2], x)",
        lambda x: jax.grad(lambda x: x[jnp.argmax(jnp.array([1, 5, 5]))] * sg(x[0])
                           + jnp.argmin(jnp.array([2, 0, 0])) * x[2])(x), {"x": [0.5, -1.0, 2.0]}),
    # normalize, cosine
    Row("normalize-jacobian", "x: R^3\njacobian(normalize(x), x)",
        lambda x: jax.jacobian(lambda x: x / jnp.linalg.norm(x))(x), {"x": [3.0, -4.0, 1.0]}),
    Row("cosine-grad-stopped", "x: R^3\ngrad(cosine(x, sg(x^2) + [1.0, 0, 0]), x)",
        lambda x: jax.grad(lambda x: jnp.dot(x, sg(x**2) + jnp.array([1.0, 0, 0]))
                           / (jnp.linalg.norm(x) * jnp.linalg.norm(sg(x**2) + jnp.array([1.0, 0, 0]))))(x),
        {"x": [0.5, -1.0, 2.0]}),
    # huber, at both sides and on the boundary |u| = delta
    Row("huber-value", "u: R^5\nhuber(u, 1.0)", lambda u: optax_huber(u, 1.0), {"u": [0.3, -2.0, 1.0, 0.0, 4.5]}),
    Row("huber-grad", "u: R^5\ngrad(sum(huber(u, 1.5)), u)", lambda u: jax.grad(lambda u: jnp.sum(optax_huber(u, 1.5)))(u),
        {"u": [0.3, -2.0, 1.5, 0.0, 4.5]}),
    Row("huber-grad-delta", "diff(huber(u, d) * sg(d), d)", lambda u, d: jax.grad(lambda d: optax_huber(u, d) * sg(d))(d),
        {"u": -2.5, "d": 1.5}),
    # log_softmax
    Row("log-softmax-jacobian", "x: R^3\njacobian(log_softmax(x), x)", lambda x: jax.jacobian(jax.nn.log_softmax)(x),
        {"x": [0.5, -1.0, 2.0]}),
    Row("log-softmax-large-logits", "x: R^3\nlog_softmax(x)", lambda x: jax.nn.log_softmax(x), {"x": [1000.0, 0.0, -1000.0]}),
    Row("log-softmax-grad-large", "x: R^3\ngrad(log_softmax(x)[1], x)", lambda x: jax.grad(lambda x: jax.nn.log_softmax(x)[1])(x),
        {"x": [1000.0, 999.0, -1000.0]}),
    Row("log-softmax-rows", "W: R^(2,3)\nlog_softmax(W)", lambda W: jax.nn.log_softmax(W, axis=1), {"W": W23}),
    # matrices
    Row("trace-grad-stopped", "W: R^(3,3)\ngrad(trace(W @ sg(W)) + trace(W)^2, W)",
        lambda W: jax.grad(lambda W: jnp.trace(W @ sg(W)) + jnp.trace(W) ** 2)(W), {"W": W33}),
    Row("det-value", "W: R^(3,3)\ndet(W)", lambda W: jnp.linalg.det(W), {"W": W33}),
    Row("det-grad", "W: R^(3,3)\ngrad(det(W), W)", lambda W: jax.grad(jnp.linalg.det)(W), {"W": W33}),
    Row("logdet-grad", "W: R^(3,3)\ngrad(logdet(W), W)", lambda W: jax.grad(logdet)(W), {"W": W33}),
    Row("logdet-of-stopped-product", "W: R^(2,2)\ngrad(logdet(W @ sg(transpose(W))), W)",
        lambda W: jax.grad(lambda W: logdet(W @ sg(W.T)))(W), {"W": [[1.0, 2.0], [-0.5, 0.3]]}),
    Row("inv-value", "W: R^(3,3)\ninv(W)", lambda W: jnp.linalg.inv(W), {"W": W33}),
    Row("inv-grad", "W: R^(2,2)\ngrad(sum(inv(W) @ [1.0, -2.0]) + sum(sg(inv(W))), W)",
        lambda W: jax.grad(lambda W: jnp.sum(jnp.linalg.inv(W) @ jnp.array([1.0, -2.0])) + jnp.sum(sg(jnp.linalg.inv(W))))(W),
        {"W": [[1.0, 2.0], [-0.5, 0.3]]}),
    Row("exact-integers-inv-det", "inv([[4, -2, 1], [3, 6, -4], [2, 1, 8]]) * det([[4, -2, 1], [3, 6, -4], [2, 1, 8]])",
        lambda: jnp.linalg.inv(jnp.array([[4.0, -2, 1], [3, 6, -4], [2, 1, 8]]))
        * jnp.linalg.det(jnp.array([[4.0, -2, 1], [3, 6, -4], [2, 1, 8]])), {}),
    Row("numbers-inv-det", "inv([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]]) * det([[2.0, 1.0], [1.0, 3.0]])",
        lambda: jnp.linalg.inv(jnp.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]]))
        * jnp.linalg.det(jnp.array([[2.0, 1.0], [1.0, 3.0]])), {}),
    # axis forms: axis 0 down each column, axis 1 along each row
    Row("sum-axis-0", "W: R^(2,3)\nsum(W, 0)", lambda W: jnp.sum(W, axis=0), {"W": W23}),
    Row("sum-axis-1-grad", f"W: R^(2,3)\ngrad(sum(sum(W, 1)^2) + reduce_sum(W * sg(W), 0)[1], W)",
        lambda W: jax.grad(lambda W: jnp.sum(jnp.sum(W, axis=1) ** 2) + jnp.sum(W * sg(W), axis=0)[1])(W), {"W": W23}),
    Row("mean-axes", "W: R^(2,3)\n[mean(W, 0)[2], mean(W, 1)[0], reduce_mean(W, 1)[1]]",
        lambda W: jnp.array([jnp.mean(W, axis=0)[2], jnp.mean(W, axis=1)[0], jnp.mean(W, axis=1)[1]]), {"W": W23}),
    Row("max-axis-1-ties-grad", "W: R^(2,3)\ngrad(sum(max(W, axis=1) * [1.0, 2.0]), W)",
        lambda W: jax.grad(lambda W: jnp.sum(jnp.max(W, axis=1) * jnp.array([1.0, 2.0])))(W), {"W": TIES}),
    Row("min-axis-0-ties-grad", "W: R^(2,3)\ngrad(sum(min(W, axis=0) * [1.0, 2.0, 3.0]) + sum(reduce_max(W, 0)), W)",
        lambda W: jax.grad(lambda W: jnp.sum(jnp.min(W, axis=0) * jnp.array([1.0, 2.0, 3.0]))
                           + jnp.sum(jnp.max(W, axis=0)))(W), {"W": TIES}),
    Row("logsumexp-axis-1-grad", "W: R^(2,3)\ngrad(sum(logsumexp(W, 1) * [1.0, -2.0]), W)",
        lambda W: jax.grad(lambda W: jnp.sum(jax.nn.logsumexp(W, axis=1) * jnp.array([1.0, -2.0])))(W), {"W": W23}),
    Row("logsumexp-axis-0", "W: R^(2,3)\nlogsumexp(W, 0)", lambda W: jax.nn.logsumexp(W, axis=0), {"W": W23}),
    Row("softmax-axis-0-grad", f"W: R^(2,3)\ngrad(sum(softmax(W, 0) * {C23_TEXT}), W)",
        lambda W: jax.grad(lambda W: jnp.sum(jax.nn.softmax(W, axis=0) * C23))(W), {"W": W23}),
    Row("softmax-axis-1", "W: R^(2,3)\nsoftmax(W, 1)", lambda W: jax.nn.softmax(W, axis=1), {"W": W23}),
    Row("log-softmax-axis-0-grad-stopped", f"W: R^(2,3)\ngrad(sum(log_softmax(W * sg(W), 0) * {C23_TEXT}), W)",
        lambda W: jax.grad(lambda W: jnp.sum(jax.nn.log_softmax(W * sg(W), axis=0) * C23))(W), {"W": W23}),
    Row("log-softmax-axis-1", "W: R^(2,3)\nlog_softmax(W, 1)", lambda W: jax.nn.log_softmax(W, axis=1), {"W": W23}),
    # slices
    Row("column-slice-value", "W: R^(2,3)\nW[:, 1] * W[:, -1]", lambda W: W[:, 1] * W[:, -1], {"W": W23}),
    Row("row-slice-grad-stopped", "W: R^(2,3)\ngrad(dot(W[1, :], sg(W[0, :])) + sum(W[:, 2]^2), W)",
        lambda W: jax.grad(lambda W: jnp.dot(W[1, :], sg(W[0, :])) + jnp.sum(W[:, 2] ** 2))(W), {"W": W23}),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_agrees_with_jax(row, values):
    expected = np.asarray(row.oracle(**{k: jnp.asarray(v, dtype=jnp.float64) for k, v in row.point.items()}))
    got = values(row.program()) if row.point else values(row.source)
    assert got.shape == expected.shape, (got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("outer([1, 2], [3, 4, 5])", "[[3, 4, 5], [6, 8, 10]]"),
        ("diag([1, 2])", "[[1, 0], [0, 2]]"),
        ("diag([[1, 2, 3], [4, 5, 6]])", "[1, 5]"),
        ("eye(2)", "[[1, 0], [0, 1]]"),
        ("onehot(2, 4)", "[0, 0, 1, 0]"),
        ("argmax([1, 3, 3])", "1"),
        ("argmin([2, 1, 1])", "1"),
        ("argmax([1.0, nan, 3])", "1"),
        ("normalize([3, 4])", "[3/5, 4/5]"),
        ("cosine([1, 0], [1, 1])", "sqrt(2)/2"),
        ("huber([1/2, 3, -3], 1)", "[1/8, 5/2, 5/2]"),
        ("huber(0, 1.0)", "0.0"),
        ("huber(x, inf)", "x^2/2"),
        ("inv([[nan, 1], [1, 1.0]])", "[[nan, nan], [nan, nan]]"),
        ("x: R^2\nnormalize(x) at x = [0.0, 0.0]", "[nan, nan]"),
        ("trace([[1, 2], [3, 4]])", "5"),
        ("det([[1, 2], [3, 4]])", "-2"),
        ("inv([[2, 1], [1, 1]])", "[[1, -1], [-1, 2]]"),
        ("logdet([[2, 1], [1, 2]])", "log(3)"),
        ("inv([[1/2, 1], [3, 1/3]])", "[[-2/17, 6/17], [18/17, -3/17]]"),
        ("det([[sqrt(2), 1], [1, sqrt(2)]])", "1"),  # an exact irrational: the cofactor formula
        ("inv([[sqrt(2), 1], [1, sqrt(2)]])", "[[sqrt(2), -1], [-1, sqrt(2)]]"),
        ("det(2*eye(100))", str(2**100)),
        # eye(n) is a node of the formula, as at a symbolic size: past the exact limit it prints as written
        ("det(eye(101))", "det(eye(101))"),
        ("inv(eye(2)*sqrt(2))", "[[sqrt(2)/2, 0], [0, sqrt(2)/2]]"),
        ("onehot(1, 1000000)", "onehot(1, 1000000)"),
        ("W: R^(2,2)\ndet(W)", "det(W)"),
        ("W: R^(2,2)\ncomponents(det(W))", "W[0, 0]*W[1, 1] - W[0, 1]*W[1, 0]"),
        ("W: R^(2,2)\nsimplify(grad(logdet(W), W) - transpose(inv(W)))", "[[0, 0], [0, 0]]"),
        ("sum([[1, 2], [3, 4]], 0)", "[4, 6]"),
        ("sum([[1, 2], [3, 4]], 1)", "[3, 7]"),
        ("sum([1, 2, 3], 0)", "6"),
        ("max([[1, 5], [3, 4]], axis=0)", "[3, 5]"),
        ("max([[1, 5], [3, 4]], axis=1)", "[5, 4]"),
        ("min([[1, 5], [3, 4]], axis=1)", "[1, 3]"),
        ("max([[1, 5], [-3, 4]], 0)", "[[1, 5], [0, 4]]"),  # a number in the second place: elementwise
        ("reduce_max([[1, 5], [3, 4]], 1)", "[5, 4]"),  # TensorFlow's positional axis
        ("max([1, 5, 3], 1)", "[1, 5, 3]"),  # a vector: elementwise with 1, as before
        ("max([[1, 5], [3, 4]], 2)", "[[2, 5], [3, 4]]"),  # 2 is no axis: elementwise
        ("max([[1, 5], [-3, 4]], 0.0)", "[[1.0, 5.0], [0.0, 4.0]]"),  # a float: elementwise
        ("a = 0\nmax([[1, 5], [-3, 4]], a)", "[[1, 5], [0, 4]]"),  # a name: elementwise
        ("mean([[1, 2], [3, 5]], 1)", "[3/2, 4]"),
        ("M = [[1, 2, 3], [4, 5, 6]]\nM[:, 1]", "[2, 5]"),
        ("M = [[1, 2, 3], [4, 5, 6]]\nM[1, :]", "[4, 5, 6]"),
        ("M = [[1, 2, 3], [4, 5, 6]]\nM[-1, :] - M[:, 0][1]", "[0, 1, 2]"),
        ("W: R^(2,2)\nW[:, 0]", "W[:, 0]"),
        ("W: R^(2,2)\ncomponents(W[:, 0])", "[W[0, 0], W[1, 0]]"),
        ("[[1, 2], [3, 4]][:, 1]", "[2, 4]"),
    ],
)
def test_exact_values(source, expected):
    assert Session().run(source)[-1].text == expected


@pytest.mark.parametrize(
    "source",
    [
        "a: R^2; b: R^3\nouter(a, sg(b))",
        "W: R^(3,3)\ndet(W)",
        "W: R^(2,2)\ninv(W)",
        "W: R^(2,2)\nlogdet(W)",
        "x: R^3\nnormalize(x)",
        "x: R^3\ncosine(x, [1, 2, 3])",
        "huber(t, 1)",
        "diff(huber(t, d), t)",
        "x: R^3\nlog_softmax(x)",
        "W: R^(2,3)\nsoftmax(W, 0)",
        "W: R^(2,3)\nlog_softmax(W, 0)",
        "W: R^(2,3)\nmax(W, axis=1)",
        "W: R^(2,3)\nlogsumexp(W, 0)",
    ],
)
def test_plain_output_reads_back(source):
    session = Session()
    value = session.eval(source)
    assert lowered(session.eval(to_plain(value))) == lowered(value)  # the same value, compared entry by entry


@pytest.mark.parametrize(
    "source, kind, message, column",
    [
        ("normalize([0, 0])", "ValueError", "zero vector", 11),
        ("x: R^2; normalize(x) at x = [0, 0]", "ValueError", "division by zero", 9),
        ("cosine([1, 2], [0, 0])", "ValueError", "zero vector", 1),
        ("cosine([1, 2], [1, 2, 3])", "ShapeError", "a vector of length 2 and a vector of length 3", 1),
        ("inv([[1, 2], [2, 4]])", "ValueError", "singular", 5),
        ("inv([[1.0, 2], [2, 4]])", "ValueError", "singular", 5),
        ("log_softmax(3)", "ShapeError", "a vector or a matrix, not a scalar", 13),
        ("W: R^(2,2); inv(W) at W = [[1, 2], [2, 4]]", "ValueError", "division by zero", 13),
        ("x: R\ninv([[x, x], [x, x]])", "ValueError", "singular for every value", 5),
        ("logdet([[1, 0], [0, -1]])", "ValueError", "det(A) > 0", 8),
        ("logdet([[1, 2], [2, 4]])", "ValueError", "det(A) > 0", 8),
        ("logdet([[-1.0]])", "ValueError", "det(A) > 0", 8),  # floats too: slogdet's sign (section 6)
        ("logdet([[0.0, 0], [0, 0]])", "ValueError", "det(A) > 0", 8),
        ("W: R^(2,2); logdet(W) at W = [[1, 0], [0, -1]]", "ValueError", "not a real number", 13),
        ("det([1, 2])", "ShapeError", "square matrix, not a vector of length 2", 5),
        ("trace([[1, 2, 3], [4, 5, 6]])", "ShapeError", "square matrix, not a 2×3 matrix", 7),
        ("W: R^(9,9); components(det(W))", "LimitError", "8×8", 13),  # det(W) is a formula at any size
        ("W: R^(9,9); components(inv(W))", "LimitError", "8×8", 13),
        ("outer([1, 2], 3)", "ShapeError", "a vector, not a scalar", 1),
        ("onehot(3, 3)", "ValueError", "out of range", 8),
        ("onehot(-1, 3)", "ValueError", "out of range", 8),
        ("onehot(k + 1/2, 3)", "ValueError", "whole number", 8),  # onehot(k, 3) is the formula e_k
        ("onehot(1, 2.0)", "ValueError", "length", 11),
        ("onehot(1, 10^9)", "LimitError", "above the limit", 11),
        ("eye(0)", "ValueError", "at least 1", 5),
        ("eye(10^9)", "LimitError", "above the limit", 5),
        ("argmax(x)", "ShapeError", "a vector, not a scalar", 8),
        ("x: R^2; components(argmax(x))", "ValueError", "needs numbers", 9),
        ("argmin([[1, 2], [3, 4]])", "ShapeError", "2×2 matrix", 8),
        ("huber(x, -1)", "ValueError", "delta > 0", 10),
        ("huber([1, 2], [1, 2, 3])", "ShapeError", "a vector of length 2 and a vector of length 3", 1),
        ("sum([[1, 2], [3, 4]], 2)", "ValueError", "an axis is 0", 23),
        ("softmax([[1, 2], [3, 4]], x)", "ValueError", "an axis is 0", 27),
        ("sum([1, 2], 1)", "ShapeError", "axis 1 takes a matrix, not a vector of length 2", 5),
        ("logsumexp(3, 0)", "ShapeError", "takes a matrix, not a scalar", 11),
        ("sum([[1, 2], [3, 4]], 0, 1)", "NameError", "1 or 2 arguments", 1),
        ("log_softmax([[1 < 2, 1], [1, 2]], 0)", "ValueError", "not a condition", 13),
        ("M = [[1, 2], [3, 4]]\nM[:, 2]", "ShapeError", "index 2 is out of range for length 2", 6),
        ("M = [[1, 2], [3, 4]]\nM[-3, :]", "ShapeError", "out of range", 3),
        ("M = [[1, 2], [3, 4]]\nM[:, 0.5]", "ShapeError", "an integer", 6),
        ("v = [1, 2]\nv[:, 0]", "ShapeError", "M[:, j] takes a matrix, not a vector of length 2", 1),
        ("x: R\nx[0, :]", "ShapeError", "M[i, :] takes a matrix, not a scalar", 1),
        ("M = [[1, 2], [3, 4]]\nM[:, :]", "SyntaxError", "unexpected ']'", 7),
        ("M = [[1, 2], [3, 4]]\nM[:]", "SyntaxError", "unexpected ']'", 4),
    ],
)
def test_errors_are_placed(source, kind, message, column):
    with pytest.raises(GradlangError) as caught:
        Session().run(source)
    error = caught.value
    assert (error.kind, error.column) == (kind, column), error.format()
    assert message in error.message
