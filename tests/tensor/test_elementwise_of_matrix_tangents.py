"""The Jacobian of an elementwise function of a matrix by a vector (tensor fuzzer, seed 13055): the hessian of
`sum(exp(einsum("i,j->ij", u, x)))` at symbolic sizes was a ShapeError ("a m×n matrix and a m×n×n tensor"): the
tangent f′(U) ⊙ J_U multiplied the matrix f′(U) by the rank-3 J_U without repeating it along the variable's axis.
Each is compared with JAX float64 at symbolic and at literal sizes."""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

X0 = np.array([0.3, -0.2, 0.5])
U0 = np.array([0.7, -1.1])
W0 = np.array([[1.04, 1.43, 1.6], [-0.4, 0.2, 0.9]])

CASES = [  # (statement, JAX's function of x given u and W)
    ('hessian(sum(exp(einsum("i,j->ij", u, x))), x)',
     lambda x, u, W: jax.hessian(lambda x: jnp.sum(jnp.exp(jnp.einsum("i,j->ij", u, x))))(x)),
    ('hessian(dot(reshape(exp(einsum("i,j", u, x)/4), (m*n,)), reshape(abs(W), (m*n,))), x)',  # the seed's program
     lambda x, u, W: jax.hessian(lambda x: jnp.dot(jnp.exp(jnp.outer(u, x) / 4).ravel(), jnp.abs(W).ravel()))(x)),
    ('hessian(sum(tanh(einsum("i,j->ij", u, x)) * W), x)',
     lambda x, u, W: jax.hessian(lambda x: jnp.sum(jnp.tanh(jnp.outer(u, x)) * W))(x)),
]


@pytest.mark.parametrize("declared", ["m, n: size\nx: R^n\nu: R^m\nW: R^(m,n)", "m = 2\nn = 3\nx: R^3\nu: R^2\nW: R^(2,3)"])
@pytest.mark.parametrize("statement, oracle", CASES)
def test_the_hessian_through_an_elementwise_function_of_a_matrix(declared, statement, oracle):
    session = Session()
    session.bind("x0", X0)
    session.bind("u0", U0)
    session.bind("W0", W0)
    session.run(declared)
    got = np.asarray(session.eval(f"{statement} at x = x0, u = u0, W = W0"), dtype=float)
    np.testing.assert_allclose(got, oracle(X0, U0, W0), rtol=1e-12, atol=1e-12)
