"""What the tensor-engine fuzzer found (tests/tensor/tensor_judge.py, benchmarks/tensor_fuzz.py), one row each.

Each row is the smallest program that showed the fault, and what a user must
see instead: no traceback or InternalError, the shape the reference gives,
the numbers the component engine gives at literal sizes.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang import GradlangError, Session
from tests.conftest import as_floats

DECLARATIONS = "m, n: size\nx, y: R^n\nu: R^m\nW: R^(m,n)\nA: R^(n,n)"


def _session() -> Session:
    session = Session()
    session.run(DECLARATIONS)
    return session


@pytest.mark.parametrize("source", [
    "jacobian(log_softmax(x), x)",  # eye(n) - outer(ones(n), softmax(x)): \mathbf{1} read as argument 1
    "grad(cos(where(a > b, max(b, a), sum(W))), W)",  # a scalar times ones(m) ones(n)ᵀ
    "zeros(m, n)",  # \mathbf{0} took the first size into the command: \mathbfm
])
def test_every_format_prints_ones_and_zeros(source):
    (result,) = _session().run(source)
    assert result.text and result.latex
    assert "mathbf" in result.latex and not re.search(r"\\mathbf[a-z]", result.latex)


@pytest.mark.parametrize("source, shape", [
    ("blocked(b, x) at x = [1.0, 2.0, 3.0]", (3,)),  # nothing blocked: the zero gradient keeps its shape
    ("blocked(trace(A), x) at x = [1.0, 2.0], A = [[1.0, 2.0], [3.0, 4.0]]", (2,)),
    ("blocked(sum(W), W) at W = [[1.0, 2.0, 3.0]]", (1, 3)),
    ("blocked(x, x) at x = [1.0, 2.0]", (2, 2)),
])
def test_blocked_has_the_shape_of_the_derivative(source, shape):
    value = _session().eval(source)
    assert np.shape(value) == shape and not np.any(value)


@pytest.mark.parametrize("source", [
    "x[5] at x = [1.0, 2.0]",  # was IndexError from NumPy (an InternalError)
    "x[5] at x = [1, 2]",
    "x[k] at x = [1.0, 2.0], k = 5",
    "x[k] at x = [1.0, 2.0], k = -1",  # NumPy would wrap round to x[1]
    "W[2] at W = [[1.0, 2.0], [3.0, 4.0]]",
    "W[0, 3] at W = [[1.0, 2.0], [3.0, 4.0]]",
    "sum(onehot(k, n)) at n = 2, k = 2",
    "grad(A[k, k], A) at A = [[1.0, 2.0], [3.0, 4.0]], k = 2",
    "x[n] at n = 2, x = [1.0, 2.0]",  # a size used as an index: its value is out of range
    "x[argmax(u)] at x = [1.0, 2.0], u = [0.0, 1.0, 5.0]",  # known only when NumPy computes argmax
])
def test_an_index_out_of_range_at_a_point_is_a_shape_error(source):
    with pytest.raises(GradlangError) as caught:
        _session().eval(source)
    assert caught.value.kind == "ShapeError" and "out of range" in caught.value.message
    assert caught.value.line == 1 and caught.value.column == 1


POINT = "x = [0.3, -1.2], W = [[0.5, -0.2], [1.1, 0.4], [-0.7, 0.9]], A = [[1.5, 0.2], [-0.3, 0.8]], b = -0.4"


@pytest.mark.parametrize("body", [
    "trace(a * A)",  # was DiffError: no tangent rule for Trace
    "det(a * A)",
    "sum(inv(A + a * A))",
    "sum(sum(a * W, 0))",
    "sum(logsumexp(a * W, 1))",
    "sum(softmax(a * W, 1) * W)",
    "sum((a * W)[1])",
])
def test_diff_by_a_scalar_goes_through_every_matrix_operation(body):
    """Forward mode (diff) against reverse mode (grad by a) and central differences of the value."""
    session, h = _session(), 1e-5
    forward = float(session.eval(f"diff({body}, a) at {POINT}, a = 0.7"))
    reverse = float(session.eval(f"grad({body}, a) at {POINT}, a = 0.7"))
    value = [float(session.eval(f"{body} at {POINT}, a = {0.7 + d}")) for d in (h, -h)]
    assert forward == pytest.approx(reverse, rel=1e-9)
    assert forward == pytest.approx((value[0] - value[1]) / (2 * h), rel=1e-6)
    second = float(session.eval(f"diff({body}, a, a) at {POINT}, a = 0.7"))
    slopes = [float(session.eval(f"diff({body}, a) at {POINT}, a = {0.7 + d}")) for d in (h, -h)]
    assert second == pytest.approx((slopes[0] - slopes[1]) / (2 * h), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("source", [
    "-a * (A @ x)",  # was printed -a*A @ x, which reads back as (-a*A) @ x
    "-x * (A @ x)",
    "-2 * exp(A) * (transpose(A) @ A)",
    "-exp(A) * (transpose(A) @ A) / n^2",
])
def test_a_negated_product_with_a_matrix_product_reads_back(source):
    session = _session()
    point = "A = [[1.5, 0.2], [-0.3, 0.8]], x = [0.3, -1.2], a = 0.7"
    text = _last_line_after_names(session, session.run(source)[0].text)
    assert float(abs(session.eval(f"sum(abs(({text}) - ({source}))) at {point}"))) < 1e-12, text


def _last_line_after_names(session, text: str) -> str:
    """The formula of a plain text, its named parts (`t1 = W[1, :]`) bound in the session first."""
    *named, last = text.splitlines()
    session.run("\n".join(named))
    return last


@pytest.mark.parametrize("source", [
    "W[0]",  # printed W[0, :], which the grammar does not read
    "grad(sum(W[0] * x), W)",
    "grad(logsumexp(a * W[1]), a)",
    "grad(max(x), x)",  # printed max_shares(x), which was refused at symbolic size
    "grad(max(x) * sum(x), x)",
])
def test_a_row_and_the_shares_of_max_read_back(source):
    session = _session()
    point = "W = [[1.5, 0.2], [-0.3, 0.8]], x = [0.3, 0.3], a = 0.7"
    text = _last_line_after_names(session, session.run(source)[0].text)
    assert float(session.eval(f"sum(abs(({text}) - ({source}))) at {point}")) == 0, text


@pytest.mark.parametrize("body", [
    "sum(W, 0)", "sum(W, 1)", "mean(W, 0)", "logsumexp(W, 1)", "logsumexp(W, 0)", "softmax(W, 1)", "softmax(W, 0)",
    "log_softmax(W, 1)", "W[1]", "grad(norm(softmax(exp(W), 1)), W)", "grad(sum(logsumexp(softmax(W, 0), 0)), W)",
    "grad(max(sum(log_softmax(W, 1), 0)), W)",
])
def test_the_axis_forms_and_rows_have_components(body):
    """At an exact point (the component path) they give the numbers of the float point (whole-array NumPy)."""
    session = _session()
    exact = session.eval(f"{body} at W = [[1, -2, 0], [2, 1, 1]]")
    floats = session.eval(f"{body} at W = [[1.0, -2.0, 0.0], [2.0, 1.0, 1.0]]")
    np.testing.assert_allclose(np.array(exact.tolist(), dtype=float), floats, rtol=1e-12)


@pytest.mark.parametrize("source", [
    "inv(A) at A = [[1.0, 2.0], [2.0, 4.0]]",  # was NumPy's LinAlgError, an InternalError
    "grad(logdet(A), A) at A = [[1.0, 2.0], [2.0, 4.0]]",  # grad(det(…)) there is the cofactors: test_det_cofactors.py
])
def test_a_singular_matrix_at_a_float_point_is_a_value_error(source):
    with pytest.raises(GradlangError) as caught:
        _session().eval(source)
    assert caught.value.kind == "ValueError" and "singular" in caught.value.message


@pytest.mark.parametrize("source, expected", [
    ("softmax(x - x) at x = [1.0, 2.0]", [0.5, 0.5]),  # was 1.0: SymPy's x - x is the scalar 0
    ("softmax(x / x) at x = [1.0, 2.0]", [0.5, 0.5]),
    ("softmax(0 * x) at x = [1.0, 2.0]", [0.5, 0.5]),
    ("softmax(x^0) at x = [1.0, 2.0]", [0.5, 0.5]),
    ("sum(x - x + 1) at x = [1.0, 2.0, 3.0]", 3.0),
    ("outer(a * (u - u), x) at u = [1.0, 2.0], x = [1.0, 2.0, 3.0], a = 2.0", [[0.0] * 3] * 2),
    ("log_softmax(W - W, 1) at W = [[1.0, 2.0]]", [[-0.6931471805599453] * 2]),
    ("len(x - x) at n = 4", 4),
])
def test_a_cancelled_tensor_keeps_its_shape(source, expected):
    np.testing.assert_allclose(np.array(_session().eval(source), dtype=float), expected, rtol=1e-12)


@pytest.mark.parametrize("body", [
    "trace(A)", "det(A)", "inv(A)", "grad(det(A), A)", "grad(trace(inv(A)), A)", "logdet(A)",
])
def test_trace_det_and_inv_at_an_exact_point(body):
    """Exact in, exact out: was "ShapeError: det has no form at literal sizes"."""
    session = _session()
    exact = session.eval(f"{body} at A = [[2, 1], [1, 3]]")
    floats = session.eval(f"{body} at A = [[2.0, 1.0], [1.0, 3.0]]")
    np.testing.assert_allclose(as_floats(exact), as_floats(floats), rtol=1e-12)


def test_a_size_bound_to_a_number_can_be_used_in_several_shapes():
    """`n = 3` then two shapes with n: the first rebound n to a Python int, and the second refused it."""
    session = Session()
    session.run("m = 2\nn = 3\nx: R^n\nW: R^(m,n)\nA: R^(n,n)")
    assert session.eval("len(W @ x) + n") == 5
    assert float(session.eval("sum(A @ x) at x = [1, 1, 1], A = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]")) == 3


def test_a_large_tensor_result_prints_with_its_shared_parts_named():
    """Above NAMED_PARTS_ABOVE nodes a result prints as t1 = …; a named vector must keep its shape,
    or the LaTeX printer's product of t1 with a matrix is "ShapeError: @ needs vectors or matrices"."""
    body = "x"
    for _ in range(10):
        body = f"log_softmax({body})"
    (result,) = _session().run(f"jacobian({body}, x)")
    assert result.latex and result.text and result.named


@pytest.mark.parametrize("wrap", ["softmax({})", "tanh({})", "log_softmax({})"])
def test_a_gradient_through_twenty_nested_operations_is_bounded(wrap):
    """grad through 20 nested softmaxes was exponential (the adjoint doubles per level as a tree, and
    factor_terms walks the tree): over 100 s. The rewrites now skip SymPy's tree walks on large trees."""
    body = "x"
    for _ in range(20):
        body = wrap.format(body)
    session = Session(time_limit=30)  # a safety net: the statement takes well under a second
    session.run(DECLARATIONS)
    (result,) = session.run(f"grad(sum({body}) + {body}[0], x)")
    assert result.text


def test_inv_of_transcendental_entries_at_an_exact_point_is_prompt():
    """SymPy's Matrix.det and inv test entries for zero: with exp in them, minutes (seed 1015). The
    Laplace expansion does no test; the time limit is a safety net, the statement takes a fraction of a second."""
    session = Session(time_limit=30)
    session.run(DECLARATIONS)
    value = session.eval("trace(inv((A / (1 + exp(A))) + 4 * eye(n))) at A = [[0, 1, 2], [1, 0, -1], [2, 1, 1]]")
    assert float(value) == pytest.approx(
        float(session.eval("trace(inv((A / (1 + exp(A))) + 4 * eye(n))) at A = [[0.0, 1, 2], [1, 0, -1], [2, 1, 1]]")))


@pytest.mark.parametrize("source, expected", [
    ("(x / a) @ y at x = [1.0, 2.0], y = [1.0, 1.0], a = 2.0", 1.5),  # 1c2e1e1 made it [1.5, 1.5]
    ("normalize(x) @ y at x = [3.0, 4.0], y = [1.0, 1.0]", 1.4),
    ("(x - x) @ y at x = [3.0, 4.0], y = [1.0, 1.0]", 0.0),
    ("a * (W @ x) / a at W = [[1.0, 2.0]], x = [1.0, 1.0], a = 2.0", [3.0]),
])
def test_a_matrix_product_is_not_broadcast_like_an_elementwise_one(source, expected):
    value = _session().eval(source)
    assert np.shape(value) == np.shape(expected)
    np.testing.assert_allclose(as_floats(value), expected)


@pytest.mark.parametrize("source", [
    "components(grad(sum(A[k] * x), x) at n = 3, k = 1)",  # was "the index 'k' needs a number"
    "A[k] at A = [[1, 2], [3, 4]], k = 1",
    "grad(sum((A^2)[k]), A) at A = [[1, 2], [3, 4]], k = 0",
])
def test_a_name_indexing_a_row_is_given_its_number(source):
    assert _session().eval(source) is not None


def test_a_name_indexing_a_row_must_be_a_whole_number():
    with pytest.raises(GradlangError) as caught:
        _session().eval("A[k] at A = [[1.0, 2.0], [3.0, 4.0]], k = 0.5")
    assert caught.value.kind == "ValueError" and "whole number" in caught.value.message


@pytest.mark.parametrize("body", ["norm(a * W)", "norm(a * A + outer(W[0], x))", "norm(sin(a * x))",
                                  "max(a * W)", "min(a * W)"])  # max's tangent had the same dot
def test_diff_of_the_norm_and_max_of_a_matrix(body):
    """The tangent of ‖U‖ was dot(U, dU)/‖U‖, NumPy's matrix product for a matrix: "shapes (2,3) and
    (2,3) not aligned" (an InternalError). The Frobenius norm's tangent is Σ(U ⊙ dU)/‖U‖."""
    session, h = _session(), 1e-6
    point = "W = [[-0.83, -0.96, -0.5], [1.9, -0.43, -1.7]], A = [[1.3, 0.08, -1.38], [0.43, 1.86, -0.76], " \
            "[0.12, 0.77, 0.39]], x = [-0.76, -0.16, 1.61]"
    forward = float(session.eval(f"diff({body}, a) at {point}, a = 0.5"))
    value = [float(session.eval(f"{body} at {point}, a = {0.5 + d}")) for d in (h, -h)]
    assert forward == pytest.approx((value[0] - value[1]) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("body", ["norm(log_softmax(a * x))", "norm(x - logsumexp(a * x))", "dot(x - a * sum(x), y - a)",
                                  "sum(softmax(x - a * sum(x)) * x)"])
def test_a_tangent_that_broadcasts_keeps_its_shape(body):
    """d(x − c)/da = −dc/da is a scalar standing for a vector; diff(norm(log_softmax(a x)), a, a) took it as one
    and built dot(vector, scalar): "cannot broadcast a non-scalar to a scalar array" (an InternalError)."""
    session, h = _session(), 1e-5
    point = "x = [-0.26, -1.58, 1.51], y = [0.5, 0.2, -1.0]"
    second = float(session.eval(f"diff({body}, a, a) at {point}, a = 0.3"))
    slopes = [float(session.eval(f"diff({body}, a) at {point}, a = {0.3 + d}")) for d in (h, -h)]
    assert second == pytest.approx((slopes[0] - slopes[1]) / (2 * h), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("program", [
    "where(1e3, x, y)",  # a number is not a condition, at a symbolic size
    "v: R^3\nwhere(3 >= where(1e3, v[0], 1), 3, 1)",  # nor at a literal one (the pretty printer raised)
])
def test_where_with_a_number_for_its_condition_is_a_placed_value_error(program):
    with pytest.raises(GradlangError) as caught:
        _session().run(program)
    assert caught.value.kind == "ValueError" and "must be a condition" in caught.value.message
    assert caught.value.span is not None and caught.value.span.column > 1


def test_the_judge_reads_a_nan_inside_a_condition_as_ieee_not_as_a_bug():
    """Seed 9393: sg(y)/y is 0/0 at y[2] = 0.0, and the judge's SymPy substitution of the components could not
    compare nan > y (gradlang itself gives JAX's numbers); the judge now calls it ieee, not a bug."""
    from tests.tensor import tensor_judge as judge

    findings = judge.run_program(judge.make(9393, depth=3))
    assert [f for f in findings if f.verdict == "bug"] == []
    assert any(f.verdict == "ieee" and "nan reaches a condition" in f.detail for f in findings)
