"""The gradient of det is the cofactor matrix, det(A) A⁻ᵀ, finite where A is singular (issue #36).

jax.grad of jnp.linalg.det gives the cofactors at a singular matrix (its rule
is LU-based, not det(A) A⁻ᵀ by an inverse); gradlang refused them as "a
singular matrix has no inverse", at a float point (whole-array NumPy) and at
an exact one (the components). Each case runs at a literal and at a symbolic
size, and the printed formula stays the teacher's det(A) A⁻ᵀ.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gradlang import Session

jax.config.update("jax_enable_x64", True)


def _listed(array) -> str:
    return str(np.asarray(array, dtype=float).tolist())


def _value(declaration: str, source: str):
    value = Session().eval(f"{declaration}\n{source}")
    return np.asarray(value.tolist() if hasattr(value, "tolist") else value, dtype=float)


SINGULAR = [
    np.array([[1.0, 2.0], [2.0, 4.0]]),  # rank 1 of 2: the cofactors are not 0
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),  # rank 2 of 3
    np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 3.0], [0.0, 4.0, 5.0]]),  # a zero column
    np.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),  # rank 1 of 3: the cofactors are 0
    np.zeros((3, 3)),
]


@pytest.mark.parametrize("matrix", SINGULAR, ids=["rank1of2", "rank2of3", "zero column", "outer", "zeros"])
@pytest.mark.parametrize("size", ["n", "literal"])
def test_the_gradient_of_det_at_a_singular_matrix_is_jaxs(matrix, size):
    n = matrix.shape[0]
    declared = f"A: R^({n},{n})" if size == "literal" else "A: R^(n,n)"
    expected = jax.grad(jnp.linalg.det)(matrix)
    got = _value(declared, f"grad(det(A), A) at A = {_listed(matrix)}")
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    exact = matrix.astype(int).tolist()  # exact in, exact out: the signed minors, no division by det(A) = 0
    np.testing.assert_array_equal(_value(declared, f"grad(det(A), A) at A = {exact}"), expected)


@pytest.mark.parametrize("size", ["n", "3"])
def test_det_of_an_outer_product_has_gradient_zero(size):
    """det(outer(x, x)) is 0 for every x of length 3: its gradient is 0, as JAX's (was refused as singular)."""
    rng = np.random.default_rng(36)
    f = jax.grad(lambda x: jnp.pi * jnp.linalg.det(jnp.outer(x, x)))
    for _ in range(4):
        x = rng.normal(size=3)
        got = _value(f"x: R^{size}", f"grad(pi * det(outer(x, x)), x) at x = {_listed(x)}")
        np.testing.assert_allclose(got, f(x), atol=1e-12)
    assert _value(f"x: R^{size}", "grad(pi * det(outer(x, x)), x) at x = [1, 2, 3]").tolist() == [0, 0, 0]
    x, y = np.array([-0.39, 1.96, -0.25]), np.array([0.43, 1.49, 0.75])  # a fuzz finding, once refused as singular
    g = jax.grad(lambda x: jnp.linalg.det(jnp.outer(y, y) * jnp.outer(x, y)))(x)
    got = _value(f"x: R^{size}\ny: R^{size}", f"grad(det(outer(y, y) * outer(x, y)), x) at x = {_listed(x)}, y = {_listed(y)}")
    np.testing.assert_allclose(got, g, atol=1e-12)


@pytest.mark.parametrize("size", ["n", "2"])
def test_an_overflowing_point_gives_jaxs_zeros(size):
    """Scalar fuzzer, seed 88100: W² overflows, (W²)⁻¹ is 0, and det's gradient there is 0 (JAX's -0.0 and 0.0)."""
    f = jax.grad(lambda W: jnp.linalg.det((W ** 2) ** -1 @ ((W ** 2) ** -1).T))
    for point in ([[1e300, 2e300], [3e300, -1e300]], [[1.0, 2.0], [3.0, 4.0]]):
        got = _value(f"W: R^({size},{size})", f"grad(det(((W)^2)^(-1) @ transpose(((W)^2)^(-1))), W) at W = {point}")
        expected = np.asarray(f(np.array(point)))
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("size", ["n", "3"])
def test_the_printed_gradient_is_the_teachers(size):
    session = Session()
    lines = session.run(f"A: R^({size},{size})\ngrad(det(A), A)\ngrad(log(det(A)), A)\ngrad(det(A)^2, A)")
    assert [r.text for r in lines[-3:]] == ["det(A)*transpose(inv(A))", "transpose(inv(A))",
                                           "2*(det(A)*transpose(inv(A)))*det(A)"]


A3 = np.array([[2.0, 0.3, -0.1], [0.2, 1.5, 0.4], [-0.3, 0.1, 1.8]])
B3 = np.array([[0.5, -1.0, 0.25], [1.5, 0.0, -0.5], [0.75, 2.0, 1.0]])


@pytest.mark.parametrize("size", ["n", "3"])
def test_derivatives_of_the_cofactors_are_jaxs(size):
    """The cofactors' own rules: reverse (a gradient of a gradient) and forward (diff by a scalar)."""
    declared = f"A: R^({size},{size})\nB: R^({size},{size})\na: R"
    got = _value(declared, f"grad(sum(grad(det(A), A) * B), A) at A = {_listed(A3)}, B = {_listed(B3)}")
    expected = jax.grad(lambda A: jnp.sum(jax.grad(jnp.linalg.det)(A) * B3))(A3)
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    got = _value(declared, f"diff(sum(grad(det(A + a*B), A)), a) at A = {_listed(A3)}, B = {_listed(B3)}, a = 0.5")
    expected = jax.grad(lambda a: jnp.sum(jax.grad(jnp.linalg.det)(A3 + a * B3)))(0.5)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("size", ["n", "2"])
def test_the_tangent_of_det_at_a_singular_matrix_is_jaxs(size):
    """Forward mode is Jacobi's ⟨cof(A), dA⟩: det(a A) at a = 0 has derivative 0 (was refused as singular)."""
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    for a in (0.0, 0.5):
        got = _value(f"A: R^({size},{size})\na: R", f"diff(det(a*A), a) at a = {a}, A = {_listed(A)}")
        np.testing.assert_allclose(got, jax.grad(lambda a: jnp.linalg.det(a * A))(a), rtol=1e-12, atol=1e-12)


def test_the_exported_gradient_of_det_has_the_cofactors(tmp_path):
    """--export numpy at a symbolic size writes the cofactors' helper into the module: finite at a singular A."""
    from gradlang.export import export_program
    from tests.tools.test_export import load

    program = "A: R^(n,n)\ng = grad(det(A), A)\n"
    session = Session()
    session.run(program)
    module = load(export_program(session, "numpy", program), tmp_path, "det_cofactors")
    for matrix in SINGULAR[:2] + [A3]:
        np.testing.assert_allclose(module.g(matrix), jax.grad(jnp.linalg.det)(matrix), rtol=1e-12, atol=1e-12)
