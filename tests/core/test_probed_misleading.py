"""Results and messages a hostile-input probe found wrong or misleading (issue 38), as a user meets them.

Numbers are checked against NumPy and JAX in float64; each test fails without its fix.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.render.plain import to_plain
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)


def _error(program: str) -> GradlangError:
    with pytest.raises(GradlangError) as caught:
        Session().run(program)
    return caught.value


# --- 1. logdet is slogdet: a large matrix does not overflow ---------------------------------


def _well_conditioned(n: int) -> np.ndarray:
    return np.random.default_rng(38).standard_normal((n, n))


@pytest.mark.parametrize("declared", ["R^(1000,1000)", "R^(n,n)"])
def test_logdet_of_a_large_matrix_is_slogdet_not_inf(declared):
    # det(W Wᵀ) is about e^5905 here: log(det(·)) of a float det was inf
    W = _well_conditioned(1000)
    session = Session()
    session.run(f"W: {declared}")
    session.bind("V", W)
    got = float(session.eval("logdet(W @ transpose(W)) at W = V"))
    sign, expected = np.linalg.slogdet(W @ W.T)
    assert sign > 0 and expected > 5000
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("program", [
    "logdet(1e200*[[1.0, 0.0], [0.0, 2.0]])",  # the component engine's float matrix
    "W: R^(2,2)\nlogdet(W) at W = 1e200*[[1.0, 0.0], [0.0, 2.0]]",  # a float point at a literal size
    "W: R^(n,n)\nlogdet(W) at W = 1e200*[[1.0, 0.0], [0.0, 2.0]]",  # the whole-array formula
    "W: R^(n,n)\nlog(det(W)) at W = 1e200*[[1.0, 0.0], [0.0, 2.0]]",
])
def test_logdet_never_forms_the_float_determinant(program):
    expected = float(np.linalg.slogdet(1e200 * np.array([[1.0, 0.0], [0.0, 2.0]]))[1])  # JAX's overflows here
    np.testing.assert_allclose(float(Session().eval(program)), expected, rtol=1e-12)


@pytest.mark.parametrize("program", [
    "logdet([[-1.0]])",
    "logdet([[0.0, 0], [0, 0]])",
    "W: R^(2,2)\nlogdet(W) at W = [[1.0, 0.0], [0.0, -1.0]]",
    "W: R^(n,n)\nlogdet(W) at W = [[1.0, 0.0], [0.0, -1.0]]",
])
def test_logdet_of_a_float_det_at_most_zero_is_a_value_error(program):
    error = _error(program)
    assert error.kind == "ValueError" and "det(A) > 0" in error.message and error.span is not None


def test_logdet_in_the_browser_page_is_slogdet_too():
    # no NumPy (Pyodide's page): the same LU in Python floats; det of floats was refused there
    from tests.core.test_threadless import _run

    A = 1e200 * np.array([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.5, -1.0, 4.0]])
    out = _run(f"""
from gradlang import GradlangError
for program in ["logdet({A.tolist()})", "det({(A / 1e200).tolist()})", "logdet([[-1.0]])"]:
    try:
        print(float(Session().eval(program)))
    except GradlangError as error:
        print(error.kind)
""").split()
    np.testing.assert_allclose(float(out[0]), np.linalg.slogdet(A)[1], rtol=1e-14)
    np.testing.assert_allclose(float(out[1]), np.linalg.det(A / 1e200), rtol=1e-14)
    assert out[2] == "ValueError"


def test_logdet_of_an_exact_matrix_stays_exact():
    assert to_plain(Session().eval("W: R^(3,3)\nlogdet(W @ transpose(W)) at W = [[1, 2, 0], [0, 1, 3], [1, 0, 1]]")) \
        == "2*log(7)"


# --- 2. max(W, 0) is elementwise; an axis only as axis= -----------------------------------

W23 = np.array([[1.0, 0.0, -2.0], [3.0, -1.0, 0.5]])
W23_TEXT = "[[1.0, 0.0, -2.0], [3.0, -1.0, 0.5]]"


@pytest.mark.parametrize("declared", ["R^(2,3)", "R^(m,n)"])
def test_max_of_a_matrix_and_zero_is_a_relu(declared):
    session = Session()
    session.run(f"W: {declared}")
    value = as_floats(session.eval(f"max(W, 0) at W = {W23_TEXT}"))
    np.testing.assert_array_equal(value, np.maximum(W23, 0.0))


@pytest.mark.parametrize("declared", ["R^(2,3)", "R^(m,n)"])
def test_the_gradient_of_max_with_zero_shares_a_tie(declared):
    # section 5: max(x, 0) at x = 0 has derivative 1/2 (W[0, 1] = 0 here)
    session = Session()
    session.run(f"W, C: {declared}")
    weights = "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"
    got = as_floats(session.eval(f"grad(sum(max(W, 0) * C), W) at W = {W23_TEXT}, C = {weights}"))
    expected = np.where(W23 > 0, 1.0, np.where(W23 == 0, 0.5, 0.0)) * np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("declared", ["R^(2,3)", "R^(m,n)"])
@pytest.mark.parametrize("axis", [0, 1])
def test_max_and_min_take_an_axis_by_keyword(declared, axis):
    session = Session()
    session.run(f"W: {declared}")
    got = as_floats(session.eval(f"max(W, axis={axis}) - min(W, axis={axis}) at W = {W23_TEXT}"))
    np.testing.assert_array_equal(got, np.max(W23, axis) - np.min(W23, axis))
    gradient = as_floats(session.eval(f"grad(sum(max(W, axis={axis})), W) at W = {W23_TEXT}"))
    np.testing.assert_array_equal(gradient, np.asarray(jax.grad(lambda w: jnp.sum(jnp.max(w, axis)))(W23)))


@pytest.mark.parametrize("program, expected", [
    ("sum([[1, 2], [3, 4]], axis=1)", "[3, 7]"),
    ("mean([[1, 2], [3, 5]], axis=0)", "[2, 7/2]"),
    ("max([[1, 5], [-3, 4]], 0)", "[[1, 5], [0, 4]]"),
    ("max([[1, 5], [3, 4]], axis=0)", "[3, 5]"),
    ("W: R^(m,n)\nmax(W, axis=0)", "max(W, axis=0)"),  # the plain form reads back as the axis form
    ("W: R^(m,n)\nmax(W, 0)", "max(W, 0)"),
])
def test_keyword_axes_read_and_print(program, expected):
    assert to_plain(Session().eval(program)) == expected


@pytest.mark.parametrize("program, message, column", [
    ("max([1, 2], axis=0, keepdim=true)", "keepdim=", 21),  # PyTorch's spelling; NumPy's keepdims= is read
    ("dot([1, 2], [3, 4], axis=0)", "dot takes no keyword axis=", 21),
    ("max([1, 2], [3, 4], axis=0)", "after one value", 21),
    ("f(a) = a\nf(1, axis=0)", "'f' takes no keyword arguments", 1),
    ("sum([1, 2], axis=0, axis=0)", "given twice", 21),
])
def test_a_keyword_gradlang_does_not_read_is_a_placed_syntax_error(program, message, column):
    error = _error(program)
    assert error.kind == "SyntaxError" and message in error.message
    assert error.span is not None and error.span.column == column


# --- 3. jacobian(diag(x) @ x, x) at a symbolic size is 2 diag(x) --------------------------

X3 = np.array([1.5, -2.0, 0.25])


@pytest.mark.parametrize("formula, function", [
    ("diag(x) @ x", lambda x: jnp.diag(x) @ x),
    ("x @ diag(x)", lambda x: x @ jnp.diag(x)),
    ("diag(sin(x)) @ (2*x)", lambda x: jnp.diag(jnp.sin(x)) @ (2 * x)),
])
def test_a_jacobian_through_diag_of_the_variable_is_derived(formula, function):
    # its result is n×n; only diag(x)'s own derivative would have rank three, and diag(u) @ b = u ⊙ b
    session = Session()
    session.run("x: R^n")
    got = as_floats(session.eval(f"jacobian({formula}, x) at x = [1.5, -2.0, 0.25]"))
    np.testing.assert_allclose(got, np.asarray(jax.jacfwd(function)(X3)), rtol=1e-14)


def test_the_jacobian_of_diag_x_times_x_is_two_diag_x():
    assert to_plain(Session().eval("x: R^n\njacobian(diag(x) @ x, x)")) == "2*diag(x)"


def test_a_rank_three_step_is_named_not_the_result():
    # the result is a matrix: the message names the intermediate matrix whose derivative has rank three
    error = _error("x: R^n\njacobian(outer(x, x) @ x, x)")
    assert error.kind == "DiffError"
    assert error.message.startswith("the derivative of outer(x, x) by x would be a tensor of rank three")


# --- 4. explain hessian at a symbolic size derives ---------------------------------------


def test_explain_hessian_of_logsumexp_shows_the_forward_pass_over_softmax():
    (result,) = Session().run("x: R^n\nexplain hessian(logsumexp(x), x)")[-1:]
    text = to_plain(result)
    assert "hessian(logsumexp(x), x): tensor forward pass over the gradient softmax(x)" in text
    assert "∂s/∂x = diag(s) - outer(s, s)" in text and "[softmax:" in text


def test_explain_hessian_at_a_symbolic_size_agrees_with_jax():
    session = Session()
    session.run("x: R^n")
    (explained,) = session.run("explain hessian(sum(x^3) + logsumexp(x), x)")
    assert "tensor forward pass over the gradient" in to_plain(explained)
    got = as_floats(session.eval("hessian(sum(x^3) + logsumexp(x), x) at x = [1.5, -2.0, 0.25]"))
    expected = jax.hessian(lambda x: jnp.sum(x**3) + jax.nn.logsumexp(x))(X3)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-13)


# --- 5. messages speak gradlang, never SymPy's spelling or a class name -------------------

MLP = """x: R^n
y: R^k
W1: R^(h,n)
W2: R^(k,h)
"""


def _export_error(program: str) -> GradlangError:
    from gradlang.export import export_program

    session = Session()
    session.run(program)
    with pytest.raises(GradlangError) as caught:
        export_program(session, "numpy", program)
    return caught.value


def test_exporting_a_gradient_of_symbolic_size_writes_it_or_names_the_size_not_a_sympy_class(tmp_path):
    # it said "W1 @ x has no numpy equivalent (MatMul is not a primitive gradlang can export)", then
    # "W1 @ x has the symbolic sizes h, n": the export now reads the session's formula (issue #36)
    from gradlang.export import export_program
    from tests.tools.test_export import load

    program = MLP + "g = grad(sum((W2 @ tanh(W1 @ x) - y)^2), W1)\n"
    session = Session()
    session.run(program)
    module = load(export_program(session, "numpy", program), tmp_path, "mlp_symbolic")
    rng = np.random.default_rng(5)
    x, y, W1, W2 = rng.normal(size=3), rng.normal(size=2), rng.normal(size=(4, 3)), rng.normal(size=(2, 4))
    want = as_floats(session.eval(f"g at x = {x.tolist()}, y = {y.tolist()}, W1 = {W1.tolist()}, W2 = {W2.tolist()}"))
    np.testing.assert_allclose(module.g(x, y, W1, W2), want, rtol=1e-12, atol=1e-12)
    pytest.importorskip("jax")
    hessian = MLP + "g = hessian(sum(tanh(x)^3), x)\n"  # refused for jax once; now the formula in jnp's operations
    session.run(hessian)
    text = export_program(session, "jax", hessian)
    assert "Diag" not in text and "jnp.diag(" in text
    module = load(text, tmp_path, "hessian_jax")
    want = as_floats(session.eval(f"g at x = {x.tolist()}"))
    np.testing.assert_allclose(np.asarray(module.g(x)), want, rtol=1e-12, atol=1e-12)


def test_exporting_a_function_that_reads_a_tensor_of_symbolic_size_names_it():
    # it said "a list cannot be combined with a vector or matrix of symbolic size": no list was written
    error = _export_error(MLP + "loss(W1, W2) = sum((W2 @ tanh(W1 @ x) - y)^2)\n")
    assert error.message.startswith("cannot export loss: x has the symbolic size n")
    assert "list" not in error.message and (error.span.line, error.span.column) == (5, 36)


def test_a_non_real_result_is_written_in_gradlang():
    error = _error("x^(1/2) at x = -2")
    assert error.message == "the result sqrt(2)*sqrt(-1) is not a real number"  # not SymPy's sqrt(2)*I


def test_operation_names_are_gradlang_spellings():
    import sympy as sp

    from gradlang.expr.source import operation_name
    from gradlang.expr.tensor import nodes as t

    x, W = t.Var("x", (sp.Symbol("n"),)), t.Var("W", (sp.Symbol("m"), sp.Symbol("n")))
    assert [operation_name(e) for e in (t.MatMul(W, x), t.Total(x), t.SoftmaxOf(x), sp.sin(sp.Symbol("y")))] \
        == ["@", "sum", "softmax", "sin"]


def test_explain_hessian_with_a_stop_gives_the_hessians_ledger_not_the_gradients():
    # the forward pass alone would say the stop removes diag(2x); the hessian's stop removes diag(6x − 2x):
    # the ledger of a derivative of order two telescopes the derivative written (explain/ledger/higher.py)
    from gradlang.render.json import to_json

    (result,) = Session().run("x: R^n\nexplain hessian(sum(x^2*sg(x)), x)")[-1:]
    assert "blocking: removes r₁ = 2*diag(2*x)" in to_plain(result)  # diag(6x) − diag(2x)
    # blocked is a value, as `blocked` gives it: its stops have their arguments' values, so it is the term removed
    assert to_json(result)["steps"][0]["blocked"] == "2*diag(2*x)"
