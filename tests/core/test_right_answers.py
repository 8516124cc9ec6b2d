"""Right answers everywhere (issue 12): the fifteen programs of the issue and the fuzzer's finds.

Each row is a gradlang program and what JAX computes for it in float64 (the
oracle runs here, it is not a stored number), or the error gradlang documents.
Rows marked "fuzz" were found by the differential fuzzer (tests/fuzz).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradlang import Session
from gradlang.errors import ShapeError
from gradlang.errors import ValueError as GradlangValueError

jax = pytest.importorskip("jax")  # the test extra installs it; without it these tests skip
jnp = pytest.importorskip("jax.numpy")

jax.config.update("jax_enable_x64", True)

sg = jax.lax.stop_gradient
M = jnp.array([[1.0, 2.0], [3.0, 4.0]])


def f15(u):
    return jnp.sin(u) * sg(u) + u * u * 0.5 + sg(jnp.tanh(u)) * u


def _nine(u):
    for _ in range(9):
        u = f15(u)
    return u


ROWS = [
    ("1-matrix-times-itself-is-elementwise", "W: R^(2,2)\nW*W at W = [[1,2],[3,4]]", lambda: M * M),
    ("2-grad-through-elementwise-matrix-product", "W: R^(2,2)\ngrad(sum(W*W*sg(W)), W) at W = [[1.0,2.0],[3.0,4.0]]",
     lambda: jax.grad(lambda W: jnp.sum(W * W * sg(W)))(M)),
    ("3-blocked-of-matrix", "W: R^(2,2)\nblocked(sum(W*sg(W)), W) at W = [[1.0,2.0],[3.0,4.0]]",
     lambda: jax.grad(lambda W: jnp.sum(W * W))(M) - jax.grad(lambda W: jnp.sum(W * sg(W)))(M)),
    ("4-non-square-matrix-times-itself", "W: R^(1,3)\nW*W at W = [[1.0,2.0,3.0]]",
     lambda: jnp.array([[1.0, 2.0, 3.0]]) ** 2),
    ("4b-matrix-divided-and-powered-elementwise", "W: R^(2,2)\nW/W^2 at W = [[1.0,2.0],[3.0,4.0]]", lambda: M / M**2),
    ("5-blocked-whose-simplification-is-piecewise", "y: R; z: R\nblocked(abs(y/sg(z)), z) at y = 0.7, z = -0.7",
     lambda: jax.grad(lambda z: jnp.abs(0.7 / z))(-0.7) - jax.grad(lambda z: jnp.abs(0.7 / sg(z)))(-0.7)),
    ("6-simplify-to-piecewise-stays-usable", "y: R\nsimplify(sign(y)*sign(abs(y))) at y = 1.0",
     lambda: jnp.sign(1.0) * jnp.sign(jnp.abs(1.0))),
    ("7-imaginary-constant-is-nan", "y: R\nsqrt(-1)*y at y = 1.0", lambda: jnp.sqrt(-1.0) * 1.0),
    ("8-comparison-with-non-real-is-false", "y: R\nwhere(sqrt(-1) == y^2.0, 1, y) at y = 0.5",
     lambda: jnp.where(jnp.sqrt(-1.0) == 0.5**2.0, 1.0, 0.5)),
    ("9-max-with-nan", "max(sqrt(-1.5), 1)", lambda: jnp.maximum(jnp.sqrt(-1.5), 1.0)),
    ("11-float-division-by-zero", "y: R\ny / 0.0 at y = 1.0", lambda: jnp.float64(1.0) / 0.0),
    ("11b-zero-over-float-zero", "y: R\ny / 0.0 at y = 0.0", lambda: jnp.float64(0.0) / 0.0),
    ("11c-negative-over-float-zero", "y: R\ny / 0.0 at y = -2.0", lambda: jnp.float64(-2.0) / 0.0),
    ("11d-float-zero-to-negative-power", "0.0^(-1)", lambda: jnp.float64(0.0) ** -1),
    ("11e-substituted-zero-to-negative-power", "y: R\ny^(-2) at y = 0.0", lambda: jnp.float64(0.0) ** -2),
    ("13-softmax-derivative-at-1e300", "x: R^2\ngrad(softmax(x)[1]*x[1], x) at x = [1.93, 1e300]",
     lambda: jax.grad(lambda x: jax.nn.softmax(x)[1] * x[1])(jnp.array([1.93, 1e300]))),
    ("14-untaken-where-branch", "y: R\ndiff(min(y, sqrt(where(y > 0, y*y, 0.0))), y) at y = -0.5",
     lambda: jax.grad(lambda y: jnp.minimum(y, jnp.sqrt(jnp.where(y > 0, y * y, 0.0))))(-0.5)),
    ("14b-untaken-where-branch-times-inf", "y: R\ndiff(sqrt(where(y > 0, y, 0.0)), y) at y = -1.0",
     lambda: jax.grad(lambda y: jnp.sqrt(jnp.where(y > 0, y, 0.0)))(-1.0)),
    ("15-nine-deep-composition-with-stops",
     "f(u) = sin(u)*sg(u) + u*u*0.5 + sg(tanh(u))*u\ndiff(f(f(f(f(f(f(f(f(f(y))))))))), y) at y = 0.3",
     lambda: jax.grad(_nine)(0.3)),
    ("fuzz-jacobian-row-without-nan-leak", "v: R^3\njacobian([softmax(v)[2], v[0]^0.5], v) at v = [-1e-300, -1e300, 2.0]",
     lambda: jnp.stack([jax.grad(lambda v: jax.nn.softmax(v)[2])(jnp.array([-1e-300, -1e300, 2.0])),
                        jnp.array([jnp.nan, 0.0, 0.0])])),
]



@pytest.mark.parametrize("name, program, oracle", ROWS, ids=[row[0] for row in ROWS])
def test_gives_jax_answer(name, program, oracle, values):
    expected = np.asarray(oracle(), dtype=np.float64)
    got = values(program)
    assert got.shape == expected.shape, (got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("program, message", [
    ("v: R^3\nlog((v - v)[2]) at v = [-1e-300, 0.0, -0.27]", "log(0)"),  # fuzz: v - v is an exact 0
    ("y: R\ny / (y - y) at y = 1.0", "division by zero"),
])
def test_exact_zero_made_by_cancellation_keeps_the_exact_rules(program, message):
    """docs/decisions.md: SymPy cancels u - u to an exact 0 before any number is seen."""
    with pytest.raises(GradlangValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Session().run(program)


def test_sign_of_a_positive_factor_is_exact_where_floats_underflow():
    """fuzz: SymPy rewrites sign(exp(a)/s) as sign(1/s), exact over the reals; JAX's
    exp(-1e300) underflows to 0 and its sign is 0 (docs/decisions.md)."""
    got = Session().eval("v: R^3\nsign(softmax(v)[0]) at v = [0.0, 1e300, 1.63]")
    assert float(got) == 1.0
    assert float(jnp.sign(jax.nn.softmax(jnp.array([0.0, 1e300, 1.63]))[0])) == 0.0


@pytest.mark.parametrize("program, lengths", [
    ("t: R; s: R\nt*s at t = [1,2,3], s = [1,2]", ("3", "2")),
    ("y + z at y = [1, 2], z = [1, 2, 3]", ("2", "3")),
])
def test_lists_that_do_not_broadcast_are_a_shape_error_naming_both_lengths(program, lengths):
    with pytest.raises(ShapeError) as caught:
        Session().run(program)
    assert all(length in str(caught.value) for length in lengths)


@pytest.mark.parametrize("program, written", [
    ("y: R\nexp(log(y)) at y = -1.0", "exp(log(y))"),
    ("y: R\nsqrt(y)^2 at y = -4.0", "(sqrt(y))^2"),
])
def test_domain_widening_rewrite_is_said(program, written):
    """Program 10: SymPy's form is kept (docs/decisions.md) and the warning says so."""
    result = Session().run(program)[-1]
    assert math.isfinite(float(result.value))
    assert any(written in w and "nan" in w for w in result.warnings), result.warnings


def test_simplify_result_prints_evaluates_and_exports():
    session = Session()
    value = session.eval("y: R\ne = simplify(sign(y)*sign(abs(y)))\ne")
    assert "Piecewise" not in str(value) and "ExprCondPair" not in str(value)
    assert float(session.eval("e at y = -2.0")) == float(jnp.sign(-2.0) * jnp.sign(2.0))



def test_exported_matrix_product_is_elementwise(tmp_path):
    """Programs 1-3 at the export: `*` of two matrices is elementwise in the JAX module too."""
    import importlib.util

    from gradlang.export import export_program

    script = "W: R^(2,2)\nh(M) = sum(M*M*sg(M))\nh(W)\n"
    session = Session()
    session.run(script)
    path = tmp_path / "exported_right.py"
    path.write_text(export_program(session, "jax", script))
    spec = importlib.util.spec_from_file_location("exported_right", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = jax.grad(lambda W: jnp.sum(W * W * sg(W)))(M)
    np.testing.assert_allclose(np.asarray(module.grad_h(M)), np.asarray(expected), rtol=1e-12)
