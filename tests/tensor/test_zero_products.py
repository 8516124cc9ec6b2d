"""A product with a zero keeps its shape (issue #36/#39): `M * 0.0` of a matrix is zeros(m, n), never the scalar 0.

SymPy makes `0.0*M` the number 0 (kept the float 0.0, expr/exact.py), and since
SymPy 1.13 `Float(0.0) == 0` is false, so the evaluator's shape keeping
(core/tensor_values.fit) left it a scalar and a later `sum(…, 1)` was a
ShapeError. Each program here runs at literal sizes and at symbolic ones, and
gives the shape and the numbers JAX gives in float64; a zeros(…) under a
linear operation is zeros of that operation's shape at a symbolic size too.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gradlang import Session

jax.config.update("jax_enable_x64", True)

LITERAL = "M: R^(2,3)\nu: R^2\nv, x: R^3"
SYMBOLIC = "m, n: size\nM: R^(m,n)\nu: R^m\nv, x: R^n"
POINT = {"M": np.array([[1.5, -2.0, 0.25], [3.0, 4.5, -1.0]]), "u": np.array([0.5, -1.5]),
         "v": np.array([2.0, -0.5, 1.25]), "x": np.array([-1.0, 0.75, 3.0])}
_AT = "M = [[1.5, -2.0, 0.25], [3.0, 4.5, -1.0]], u = [0.5, -1.5], v = [2.0, -0.5, 1.25], x = [-1.0, 0.75, 3.0]"
_sg = jax.lax.stop_gradient

CASES = [
    ("sum(M * 0.0, 1)", lambda p: jnp.sum(p["M"] * 0.0, 1)),
    ("sum(M * 0.0, 0)", lambda p: jnp.sum(p["M"] * 0.0, 0)),
    ("M * 0.0", lambda p: p["M"] * 0.0),
    ("x * 0", lambda p: p["x"] * 0),
    ("x * 0.0 * 2", lambda p: p["x"] * 0.0 * 2),
    ("0 * outer(u, v)", lambda p: 0 * jnp.outer(p["u"], p["v"])),
    ("sum(0.0 * outer(u, v), 0)", lambda p: jnp.sum(0.0 * jnp.outer(p["u"], p["v"]), 0)),
    ("M - M", lambda p: p["M"] - p["M"]),
    ("sum(M - M, 1)", lambda p: jnp.sum(p["M"] - p["M"], 1)),
    ("grad(sum(M * 0.0), M)", lambda p: jax.grad(lambda M: jnp.sum(M * 0.0))(p["M"])),
    ("sum(sg(M) * 0, 0)", lambda p: jnp.sum(_sg(p["M"]) * 0, 0)),
    ("sum(sg(M) * 0.0, 0)", lambda p: jnp.sum(_sg(p["M"]) * 0.0, 0)),
    ("(M * 0.0) @ x", lambda p: (p["M"] * 0.0) @ p["x"]),
    ("exp(sg(x) * 0.0 + x)", lambda p: jnp.exp(_sg(p["x"]) * 0.0 + p["x"])),
    ("sum(M * 0.0, 1) + u", lambda p: jnp.sum(p["M"] * 0.0, 1) + p["u"]),
    ("grad(sum((M * 0.0) @ x) + dot(x, x), x)", lambda p: jax.grad(lambda x: jnp.sum((p["M"] * 0.0) @ x)
                                                                    + jnp.dot(x, x))(p["x"])),
]


def _value(declarations: str, source: str):
    session = Session()
    session.run(declarations)
    return session.eval(f"({source}) at {_AT}")


@pytest.mark.parametrize("declarations", [LITERAL, SYMBOLIC], ids=["literal", "symbolic"])
@pytest.mark.parametrize("source, reference", CASES, ids=[c[0] for c in CASES])
def test_a_zero_product_keeps_its_shape_and_numbers(declarations, source, reference):
    expected = np.asarray(reference({k: jnp.asarray(a) for k, a in POINT.items()}), dtype=float)
    value = np.asarray(_value(declarations, source), dtype=float)
    assert value.shape == expected.shape
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("source, shown", [
    ("M * 0.0", "zeros(m, n)"),
    ("x * 0.0", "zeros(n)"),
    ("sum(M * 0.0, 1)", "zeros(m)"),  # was a ShapeError: sum with axis 1 of a scalar
    ("sum(M - M, 1)", "zeros(m)"),  # was sum(zeros(m, n), 1)
    ("sum(sg(M) * 0, 0)", "zeros(n)"),
    ("(M * 0.0) @ x", "zeros(m)"),
    ("outer(u, x * 0)", "zeros(m, n)"),
    ("sum(x * 0.0)", "0"),
    ("grad(sum(M * 0.0), M)", "zeros(m, n)"),
    ("sg(x) * 0.0 + x", "x"),  # a zeros(…) term leaves a sum whose other terms keep its shape
    ("exp(sg(x) * 0.0 + x)", "exp(x)"),  # the importers' pattern: a stop that is only a float zero
    ("grad(sum(exp(sg(x) * 0.0 + x)), x)", "exp(x)"),
])
def test_the_formula_at_a_symbolic_size_is_zeros_of_its_shape(source, shown):
    session = Session()
    session.run(SYMBOLIC)
    (result,) = session.run(source)
    assert result.text == shown
