"""A scalar broadcast over a tensor of symbolic size, and a tensor formula that SymPy makes a scalar.

Two findings of an outside differential fuzzer (checked against JAX float64 and
against the same program at literal sizes):

1. The adjoint a scalar receives through a broadcast lost the size: in
   `sum(x + t)` the reverse pass sent t the scalar 1 that stands for 𝟙, not its
   sum n, so `grad(sum(x + t), t)` was 1 (JAX: 3 at n = 3). derive/tensor/reverse.py
   now sums a scalar adjoint over the elementwise node's shape (size times it).
2. SymPy's algebra knows no shapes: `unstopped(sg(v)/v)` rebuilt `v/v` as 1, and
   `where(z > z, z, t)` decided its condition and was the scalar t, so their sums
   were 1 and t, not n and n t. A decided tensor comparison is kept for where to
   decide knowing its shape, and where and unstopped keep the shape they had.

Every reduction and broadcast form is taken three ways at a point: the formula at
symbolic size, the same program at literal sizes, and JAX.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient

M, N = 2, 3
T_VALUE = 0.7
POINT = {
    "x": np.array([1.0, -2.0, 3.0]),
    "U": np.array([[0.5, -1.5, 2.0], [-0.25, 1.25, -3.0]]),
}
SYMBOLIC = "m, n: size\nx: R^n\nU: R^(m,n)\nt: R"
LITERAL = f"x: R^{N}\nU: R^({M},{N})\nt: R"

REDUCTIONS = {
    "sum": jnp.sum, "mean": jnp.mean, "logsumexp": jax.nn.logsumexp,
    "norm": lambda v: jnp.sqrt(jnp.sum(v * v)), "max": jnp.max, "min": jnp.min,
}
BROADCASTS = {  # T ⊕ s, with T a vector or matrix and s the scalar t
    "T + t": lambda T, s: T + s, "t - T": lambda T, s: s - T, "T * t": lambda T, s: T * s,
    "T / t": lambda T, s: T / s, "where(T > 0, T, t)": lambda T, s: jnp.where(T > 0, T, s),
    "where(T > 0, t, 2*t)": lambda T, s: jnp.where(T > 0, s, 2 * s),
    "max(T, t)": jnp.maximum, "min(T, t)": jnp.minimum, "T + t*t": lambda T, s: T + s * s,
    "huber(t, 1.0) + T": lambda T, s: jnp.where(jnp.abs(s) <= 1.0, s * s / 2, jnp.abs(s) - 0.5) + T,
}
CASES = [(reduce, form, tensor) for reduce in REDUCTIONS for form in BROADCASTS for tensor in ("x", "U")
         if not (reduce == "logsumexp" and tensor == "U")]  # logsumexp takes a vector (section 6)


@pytest.fixture(scope="module")
def sessions():
    symbolic, literal = Session(), Session()
    symbolic.run(SYMBOLIC)
    literal.run(LITERAL)
    return symbolic, literal


def _at(tensor: str) -> str:
    return f"{tensor} = {POINT[tensor].tolist()}, t = {T_VALUE}"


@pytest.mark.parametrize("reduce, form, tensor", CASES)
def test_the_adjoint_of_a_broadcast_scalar_is_summed_over_the_broadcast(sessions, reduce, form, tensor):
    """grad(reduce(T ⊕ t), t) at symbolic size, at literal sizes and in JAX: one number."""
    loss = f"{reduce}({form.replace('T', tensor)})"
    by_jax = float(jax.grad(lambda s: REDUCTIONS[reduce](BROADCASTS[form](jnp.asarray(POINT[tensor]), s)))(T_VALUE))
    symbolic, literal = sessions
    by_formula = as_floats(symbolic.eval(f"grad({loss}, t) at {_at(tensor)}"))
    by_literal = as_floats(literal.eval(f"grad({loss}, t) at {_at(tensor)}"))
    np.testing.assert_allclose(by_formula, by_jax, rtol=1e-12, atol=1e-12, err_msg=f"{loss} at symbolic size")
    np.testing.assert_allclose(by_literal, by_jax, rtol=1e-12, atol=1e-12, err_msg=f"{loss} at literal size")


@pytest.mark.parametrize("source, printed", [
    ("x: R^n\nt: R\ngrad(sum(x + t), t)", "n"),
    ("x: R^n\nt: R\ndiff(sum(x + t), t)", "n"),
    ("x: R^n\nt: R\ngrad(sum(x + t*t), t)", "2*n*t"),
    ("w: R^n\ngrad(sum(log_softmax(w)), w)", "1 - n*softmax(w)"),
    ("w: R^n\ngrad(mean(log_softmax(w)), w)", "1/n - softmax(w)"),
    ("U: R^(m,m)\nt: R\ngrad(sum(U + t), t)", "m^2"),
    ("U: R^(m,m)\nt: R\ngrad(sum(where(t <= 0, U, t)), t)", "m^2*where(t <= 0, 0, 1)"),
    ("x: R^n\nW: R^(m,m)\ngrad(sum(x + W[0, 0]), W)", "n*outer(onehot(0, m), onehot(0, m))"),
])
def test_the_printed_gradient_holds_the_size(source, printed):
    assert Session().run(source)[-1].text == printed


@pytest.mark.parametrize("literal_sizes", [False, True])
def test_the_findings_numbers_agree_with_jax(literal_sizes):
    """The fuzzer's programs, each at its point, at symbolic and at literal sizes."""
    w, x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0]), 1.5
    U = POINT["U"][:, :2]
    W = np.array([[2.0, -1.0], [0.5, 3.0]])
    rows = [
        ("grad(sum(x + t), t)", lambda: jax.grad(lambda s: jnp.sum(x + s))(t)),
        ("grad(sum(log_softmax(w)), w)", lambda: jax.grad(lambda v: jnp.sum(jax.nn.log_softmax(v)))(w)),
        ("grad(mean(log_softmax(w)), w)", lambda: jax.grad(lambda v: jnp.mean(jax.nn.log_softmax(v)))(w)),
        ("grad(sum(x + W[0, 0]), W)", lambda: jax.grad(lambda V: jnp.sum(x + V[0, 0]))(W)),
        ("grad(sum(where(t <= 0, U, t)), t)", lambda: jax.grad(lambda s: jnp.sum(jnp.where(s <= 0, U, s)))(t)),
        ("grad(sum(huber(t, 1.0) + U), t)", lambda: jax.grad(
            lambda s: jnp.sum(jnp.where(jnp.abs(s) <= 1.0, s * s / 2, jnp.abs(s) - 0.5) + U))(t)),
    ]
    sizes = {"n": 3, "m": 2} if literal_sizes else {"n": "n", "m": "m"}
    session = Session()
    session.run(f"x, w: R^{sizes['n']}\nt: R\nW, U: R^({sizes['m']},{sizes['m']})")
    at = f"x = {x.tolist()}, w = {w.tolist()}, t = {t}, W = {W.tolist()}, U = {U.tolist()}"
    for statement, oracle in rows:
        got = as_floats(session.eval(f"{statement} at {at}"))
        np.testing.assert_allclose(got, np.asarray(oracle()), rtol=1e-12, atol=1e-12, err_msg=statement)


@pytest.mark.parametrize("size", ["n", "2"])
def test_unstopped_keeps_the_shape_sympy_cancels(size):
    session = Session()
    session.run(f"v: R^{size}\nt: R")
    assert session.run("unstopped(sg(v) / v)")[-1].text in ("ones(n)", "[1, 1]")
    assert as_floats(session.eval("sum(unstopped(sg(v) / v)) at v = [1.0, 2.0]")) == 2.0
    assert as_floats(session.eval("grad(sum(unstopped(sg(v) / v) * t), t) at v = [1.0, 2.0], t = 3.0")) == 2.0
    assert as_floats(session.eval("sum(unstopped(grad(sum(sg(v) / v * t), t))) at v = [1.0, 2.0], t = 3.0")) == 2.0


@pytest.mark.parametrize("size", ["n", "3"])
def test_a_decided_where_keeps_the_shape_of_its_condition(size):
    session = Session()
    session.run(f"z: R^{size}\nt, s: R")
    assert session.run("where(z > z, z, t)")[-1].text == f"t*ones({size})"
    assert session.run("where(z > z, 1, t)")[-1].text == f"t*ones({size})"
    assert session.run("where(z >= z, z, t)")[-1].text == "z"
    at = "z = [1.0, -2.0, 3.0], t = 0.5"
    assert as_floats(session.eval(f"sum(where(z > z, z, t)) at {at}")) == 1.5
    assert as_floats(session.eval(f"sum(where(z > z, 1, t)) at {at}")) == 1.5
    assert as_floats(session.eval(f"sum(where(z > 0, t, t)) at {at}")) == 1.5
    assert as_floats(session.eval(f"grad(sum(where(z > z, z, t)), t) at {at}")) == 3.0
    # a condition decided only when a value is given (s = 1) keeps its shape through the substitution
    assert as_floats(session.eval(f"sum(where(z > s*z, 1, t)) at {at}, s = 1")) == 1.5
    assert as_floats(session.eval(f"grad(sum(where(z > s*z, z, t)), t) at {at}, s = 1")) == 3.0


def test_the_gradient_of_the_max_of_a_matrix_reads_back():
    """Found by the fuzzer's broadcast reductions (max(where(W > 0, a, W))): grad(max(M), M) printed
    max_shares(M), which the builtin refused for a matrix, so the printed gradient did not read back."""
    session = Session()
    session.run("m, n: size\nW: R^(m,n)\na: R")
    text = session.run("grad(max(where(W > 0, a, W)), a)")[-1].text
    at = "W = [[1.0, -2.0], [0.5, -3.0]], a = 0.75"
    W = jnp.asarray([[1.0, -2.0], [0.5, -3.0]])
    expected = float(jax.grad(lambda s: jnp.max(jnp.where(W > 0, s, W)))(0.75))  # a tie of two a's: 1/2 + 1/2
    assert as_floats(session.eval(f"({text}) at {at}")) == expected == 1.0
    assert as_floats(session.eval(f"max_shares(W) at {at}")).tolist() == [[1.0, 0.0], [0.0, 0.0]]
