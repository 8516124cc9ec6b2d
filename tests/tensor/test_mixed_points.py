"""Points at symbolic sizes, found by an outside differential fuzzer: one test per finding.

Each statement runs through `Session().run` with some sizes symbolic and is
compared with the same statement in the same program at literal sizes (the
component engine's numbers), and, for a derivative, with JAX float64:
a literal-size tensor beside a symbolic one (finding 1), `explain … at` at
a symbolic size (2), a list value at a point with symbolic tensors (3), and
negative indices at a symbolic size (4).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.render.plain import to_plain
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

W23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
W_TEXT = "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"


def value(declarations: str, statement: str):
    """The statement's value as floats, in a fresh session with the declarations."""
    session = Session()
    session.run(declarations)
    (result,) = session.run(statement)
    return result


def numbers(declarations: str, statement: str) -> np.ndarray:
    return as_floats(value(declarations, statement).value)


def same_as_literal(symbolic: str, literal: str, statement: str) -> np.ndarray:
    """The statement's numbers at the symbolic declarations, checked equal to those at the literal ones."""
    got, expected = numbers(symbolic, statement), numbers(literal, statement)
    assert got.shape == expected.shape and np.allclose(got, expected, rtol=1e-12, atol=1e-12), (got, expected)
    return got


# --- 1. a literal-size tensor beside a symbolic one is that tensor -----------------------------------------


@pytest.mark.parametrize("symbolic, literal, statement, expected", [
    ("x: R^n; v: R^2", "x: R^3; v: R^2", "sum(x) + sum(v) at x = [1.0, 2.0, 5.0], v = [3.0, 4.0]", 15.0),
    ("x: R^n; v: R^2", "x: R^3; v: R^2", "sum(x) + sum(v) at x = [1, 2, 5], v = [3, 4]", 15.0),  # exact
    ("x: R^n; v: R^2; a: R", "x: R^3; v: R^2; a: R",  # a list to a scalar beside both
     "sum(x)*a + sum(v) at x = [1.0, 2.0, 5.0], v = [3.0, 4.0], a = [1.0, 2.0]", [15.0, 23.0]),
    ("x: R^n; v: R^2", "x: R^3; v: R^2", "sum(x) + v[0] at x = [1.0, 2.0, 5.0], v[0] = 3.0", 11.0),
    ("W: R^(n,3); x: R^3", "W: R^(2,3); x: R^3", f"sum(W @ x) at W = {W_TEXT}, x = [1.0, 0.5, 2.0]", 26.5),
    ("W: R^(2,n); x: R^n", "W: R^(2,3); x: R^3", f"W @ x at W = {W_TEXT}, x = [1.0, 0.5, 2.0]", [8.0, 18.5]),
])
def test_a_literal_tensor_beside_a_symbolic_one_is_one_tensor(symbolic, literal, statement, expected):
    got = same_as_literal(symbolic, literal, statement)
    assert np.allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("symbolic", ["W: R^(n,3); x: R^3", "W: R^(2,n); x: R^n", "W: R^(m,n); x: R^n"])
def test_a_gradient_at_mixed_sizes_is_jax_s(symbolic):
    x = [1.0, 0.5, 2.0]
    statement = f"grad(sum(tanh(W @ x)) + sum(x^2), W) at W = {W_TEXT}, x = {x}"
    got = same_as_literal(symbolic, "W: R^(2,3); x: R^3", statement)
    reference = jax.grad(lambda w: jnp.sum(jnp.tanh(w @ jnp.array(x))))(jnp.array(W23))
    assert np.allclose(got, np.asarray(reference), rtol=1e-12)


def test_a_gradient_by_the_literal_tensor_beside_a_symbolic_one():
    statement = "grad(sum(x)*sum(v^2), v) at x = [1.0, 2.0, 5.0], v = [3.0, 4.0]"
    got = same_as_literal("x: R^n; v: R^2", "x: R^3; v: R^2", statement)
    reference = jax.grad(lambda v: 8.0 * jnp.sum(v ** 2))(jnp.array([3.0, 4.0]))
    assert np.allclose(got, np.asarray(reference), rtol=1e-12)


# --- 2. explain … at a symbolic size: the plain at's value, and no InternalError ---------------------------


@pytest.mark.parametrize("declarations, statement", [
    ("x: R^n; a: R", "diff(sum(x)*a, a) at x = [1.0, 2.0], a = 2.0"),
    ("x: R^n", "jacobian(softmax(x), x) at x = [1.0, 2.0]"),
    ("x: R^n", "hessian(sum(x^3), x) at x = [1.0, 2.0]"),
    ("z: R^n; b: R", "grad(b, z) at z = [1.0, 2.0], b = 1.0"),
    ("q: R^n; a: R", "grad(a*sum(q), q) at a = 1.0, q = [1.0, 2.0]"),
    ("x: R^n; v: R^2", "grad(sum(x)*sum(v^2), v) at x = [1.0, 2.0, 5.0], v = [3.0, 4.0]"),
])
def test_explain_at_a_symbolic_size_gives_the_plain_value(declarations, statement):
    explained = value(declarations, f"explain {statement}")
    plain = numbers(declarations, statement)
    literal = numbers(declarations.replace("R^n", "R^2" if "5.0" not in statement else "R^3"), statement)
    assert explained.kind == "explain" and explained.text
    got = as_floats(explained.value)
    assert got.shape == plain.shape == literal.shape and np.allclose(got, plain) and np.allclose(got, literal)


def test_explain_at_a_point_giving_a_symbolic_tensor_the_formula_lacks_gives_the_plain_value():
    """x is literal and only the point gives u (R^m) an array: the plain at is the tensor engine's, so explain's is."""
    declarations = "m: size; u: R^m; x: R^3"
    statement = "grad(exp(x[argmax(x)]/4), x) at x = [-0.38, -0.38, 0.91], u = [1.0, 2.0]"
    got, plain = as_floats(value(declarations, f"explain {statement}").value), numbers(declarations, statement)
    reference = jax.grad(lambda v: jnp.exp(v[jnp.argmax(v)] / 4))(jnp.array([-0.38, -0.38, 0.91]))
    assert np.allclose(got, plain) and np.allclose(got, np.asarray(reference), rtol=1e-12)


def test_explain_of_a_jacobian_by_a_vector_the_formula_lacks():
    for statement, expected in (("explain jacobian(sigmoid(a) * ones(n), x)", None),
                                ("explain jacobian(sigmoid(a) * ones(n), x) at x = [1.0, 2.0], a = 1.0", np.zeros((2, 2)))):
        result = value("x: R^n; a: R", statement)
        assert "forward pass" in to_plain(result)
        if expected is not None:
            assert np.array_equal(as_floats(result.value), expected)


@pytest.mark.parametrize("statement, reference", [
    ("jacobian(softmax(x), x) at x = [1.0, 2.0]", lambda x: jax.jacobian(jax.nn.softmax)(x)),
    ("hessian(sum(x^3), x) at x = [1.0, 2.0]", lambda x: jax.hessian(lambda v: jnp.sum(v ** 3))(x)),
])
def test_explained_derivatives_at_a_symbolic_size_are_jax_s(statement, reference):
    got = as_floats(value("x: R^n", f"explain {statement}").value)
    assert np.allclose(got, np.asarray(reference(jnp.array([1.0, 2.0]))), rtol=1e-12)


def test_a_gradient_by_a_vector_the_formula_lacks_is_derived_at_the_tensor_level():
    for statement in ("explain grad(b, z)", "explain grad(b, z) at z = [1.0, 2.0], b = 1.0"):
        result = value("z: R^n; b: R", statement)
        text = to_plain(result)
        assert "does not appear" in text and "zeros(n)" in text and "passes through a stop" not in text


# --- 3. a list value at a point with symbolic tensors --------------------------------------------------------


@pytest.mark.parametrize("symbolic, literal, statement, expected", [
    ("x: R^n", "x: R^2", "[1, 2] at x = [1.0, 2.0]", [1.0, 2.0]),
    ("x: R^n; a: R; b: R", "x: R^2; a: R; b: R", "grad(a*b, [a, b]) at a = 1.0, b = 2.0, x = [1.0, 2.0]", [2.0, 1.0]),
    ("W: R^(n,n); b: R", "W: R^(2,2); b: R",
     "components(grad(b, W) at n = 2) at W = [[1.0, 2.0], [3.0, 4.0]], b = 1.0", [[0.0, 0.0], [0.0, 0.0]]),
])
def test_a_list_at_a_point_with_symbolic_tensors(symbolic, literal, statement, expected):
    got = numbers(symbolic, statement)
    assert got.shape == np.shape(expected) and np.allclose(got, expected)
    if "n = 2" not in statement:  # the literal program has no size n to give
        same_as_literal(symbolic, literal, statement)


def test_a_list_of_numbers_given_to_a_builtin_beside_a_symbolic_size_is_a_constant():
    statement = "grad(sum(outer(u, [1, 2, 3])^2), u) at u = [1.0, 2.0]"
    got = same_as_literal("m: size; u: R^m", "u: R^2", statement)
    reference = jax.grad(lambda u: jnp.sum(jnp.outer(u, jnp.array([1.0, 2.0, 3.0])) ** 2))(jnp.array([1.0, 2.0]))
    assert np.allclose(got, np.asarray(reference), rtol=1e-12)


def test_a_list_of_symbols_beside_a_symbolic_size_is_refused_as_a_list():
    with pytest.raises(GradlangError) as caught:  # it read [b, b, b] as a scalar: "a vector of length m and a scalar"
        value("m: size; u: R^m; b: R", "outer(u, [b, b, b])")
    assert caught.value.kind == "ShapeError" and "a list cannot be combined" in caught.value.message


def test_ones_at_a_literal_size_beside_a_symbolic_size_is_the_node_ones():
    """ones(3) is the formula's ones(3), as ones(n) is (no list of b's): outer(u, b*ones(3)) is a formula."""
    result = value("m: size; u: R^m; b: R", "outer(u, b*ones(3))")
    assert result.text == "outer(u, b*ones(3))"
    got = numbers("m: size; u: R^m; b: R", "outer(u, b*ones(3)) at u = [1.0, -2.0], b = 0.5")
    np.testing.assert_allclose(got, np.outer([1.0, -2.0], 0.5 * np.ones(3)), rtol=1e-12)


# --- 4. negative indices at a symbolic size --------------------------------------------------------------------


@pytest.mark.parametrize("symbolic, literal, statement, expected", [
    ("x: R^n", "x: R^3", "x[-1] at x = [1.0, 2.0, 3.0]", 3.0),
    ("x: R^n", "x: R^3", "x[-3] at x = [1.0, 2.0, 3.0]", 1.0),
    ("x: R^n", "x: R^3", "x[-1] at x = [1, 2, 3]", 3.0),
    ("W: R^(m,n)", "W: R^(2,2)", "W[-1, -2] at W = [[1.0, 2.0], [3.0, 4.0]]", 3.0),
    ("W: R^(m,n)", "W: R^(2,2)", "W[:, -1] at W = [[1.0, 2.0], [3.0, 4.0]]", [2.0, 4.0]),
    ("W: R^(m,n)", "W: R^(2,2)", "W[-1] at W = [[1.0, 2.0], [3.0, 4.0]]", [3.0, 4.0]),
])
def test_a_negative_index_counts_from_the_end_at_a_symbolic_size(symbolic, literal, statement, expected):
    got = same_as_literal(symbolic, literal, statement)
    assert np.allclose(got, expected)


def test_a_negative_index_is_n_minus_k_in_a_formula_and_reads_back():
    assert value("x: R^n", "x[-1]").text == "x[n - 1]"
    gradient = value("x: R^n", "grad(x[-1]^2, x)").text
    assert "n - 1" in gradient
    got = numbers("x: R^n", f"({gradient}) at x = [1.0, 2.0, 3.0]")
    reference = jax.grad(lambda v: v[-1] ** 2)(jnp.array([1.0, 2.0, 3.0]))
    assert np.allclose(got, np.asarray(reference))
    assert np.allclose(same_as_literal("x: R^n", "x: R^3", "grad(x[-1]^2, x) at x = [1.0, 2.0, 3.0]"), reference)


def test_a_negative_index_beyond_the_length_at_the_point_is_out_of_range():
    with pytest.raises(GradlangError) as caught:
        value("x: R^n", "x[-3] at x = [1.0, 2.0]")
    assert caught.value.kind == "ShapeError" and "-3" in caught.value.message and "length 2" in caught.value.message


# --- property: random programs at points mixing literal and symbolic sizes ------------------------------------

ALLOWED = {"ok", "refused", "documented-error", "both-error", "ieee", "no-oracle", "convention?", "slow-exact"}


@pytest.mark.parametrize("seed", range(8))
def test_a_random_program_at_mixed_sizes_gives_its_literal_program_s_numbers(seed):
    """Each statement of tensor_points (values, gradients, lists and constants beside symbolic tensors, negative
    indices, a list to a scalar, components at given sizes) against the same statement at literal sizes, and
    `explain … at` against the plain value: seeds fixed, as tests/tensor/test_tensor_fuzz.py's are."""
    from tests.tensor import tensor_points

    mixed = tensor_points.make(seed)
    bugs = [f for f in tensor_points.run_mixed(mixed) if f.verdict not in ALLOWED]
    assert not bugs, tensor_points.describe(mixed) + "\n" + "\n".join(map(str, bugs))
