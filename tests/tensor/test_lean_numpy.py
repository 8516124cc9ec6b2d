"""The generated whole-array NumPy holds no array it does not need (issue #41), with the same numbers.

A scalar times an outer product scales a factor (n numbers, not n²), a
temporary is deleted after its last use, and a sum or product is computed
into a temporary only it reads. The numbers are compared with JAX's float64
Hessian to 1e-12, the memory by tracemalloc, which counts NumPy's buffers
(deterministic: no timing).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from gradlang import Session
from gradlang.expr import numeric

CROSS_ENTROPY = "H = hessian(logsumexp(z) - dot(t, z), z)\nH at z = zd, t = td"


def _session(n: int, symbolic: bool) -> Session:
    session = Session(time_limit=None)
    rng = np.random.default_rng(n)
    session.bind("zd", rng.normal(size=n))
    session.bind("td", rng.normal(size=n))
    session.run("n: size\nz, t: R^n" if symbolic else f"z, t: R^{n}")
    return session


def _jax_hessian(z: np.ndarray) -> np.ndarray:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return np.asarray(jax.hessian(lambda v: jax.scipy.special.logsumexp(v))(jnp.asarray(z)))


@pytest.mark.parametrize("symbolic", [True, False])
def test_the_cross_entropy_hessian_is_jax_s_to_1e_12(symbolic):
    session = _session(40, symbolic)
    value = session.run(CROSS_ENTROPY)[-1].value
    np.testing.assert_allclose(np.asarray(value, dtype=float), _jax_hessian(session.env["zd"]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("symbolic", [True, False])
def test_the_cross_entropy_hessian_holds_one_n_by_n_array(symbolic):
    """diag(s) - outer(s, s) held four n×n arrays at once (-1·outer made before it was added to diag(s));
    now outer(-s, s) with s added to its diagonal in place."""
    n = 300
    session = _session(n, symbolic)
    session.run(CROSS_ENTROPY)  # compiled once, so only the evaluation is measured below
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        session.run("H at z = zd, t = td")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * 8 * n * n


def test_a_scalar_times_an_outer_product_scales_a_factor():
    session = _session(5, True)
    session.run("A = 3.5 * outer(z, t)")
    source = []
    original = numeric.function_source
    numeric.function_source = lambda *a, **k: source.append(original(*a, **k)) or source[-1]
    try:
        value = session.run("A at z = zd, t = td")[-1].value
    finally:
        numeric.function_source = original
    zd, td = session.env["zd"], session.env["td"]
    np.testing.assert_allclose(value, 3.5 * np.outer(zd, td), rtol=1e-15)
    assert "numpy.multiply.outer(" in source[-1] and "_gl_imul" not in source[-1] and "3.5)*" not in source[-1].split("outer")[1]


def test_a_temporary_read_twice_is_never_written_into():
    """outer(z, t) is read by two sums: neither may be computed into it."""
    session = _session(6, True)
    value = session.run("M = outer(z, t)\nB = (M + 1) * (M + 2) + M\nB at z = zd, t = td")[-1].value
    m = np.outer(session.env["zd"], session.env["td"])
    np.testing.assert_allclose(value, (m + 1) * (m + 2) + m, rtol=1e-14)


def test_an_argument_is_never_written_into():
    session = _session(6, True)
    before = session.env["zd"].copy()
    value = session.run("(z + 1) * 2 + z at z = zd")[-1].value
    np.testing.assert_array_equal(session.env["zd"], before)
    np.testing.assert_allclose(value, (before + 1) * 2 + before, rtol=1e-15)


def test_exported_numpy_is_left_as_written():
    """--export numpy is read by people: no del lines, no in-place helpers."""
    arguments, assignments, outputs = numeric.dag_cse([numeric.sp.Symbol("a") * 2 + 1], [numeric.sp.Symbol("a")])
    source = numeric.function_source(arguments, assignments, outputs)
    assert "del " not in source and "_gl_i" not in source


def test_a_diagonal_is_added_to_a_matrix_that_is_not_a_temporary_by_a_copy():
    """diag(z) + A with A given: A is an argument, never written into; a diag read twice is made once."""
    session = _session(5, True)
    session.bind("Ad", np.arange(25.0).reshape(5, 5))
    session.run("A: R^(n,n)")
    before = session.env["Ad"].copy()
    value = session.run("diag(z) + A at z = zd, A = Ad")[-1].value
    np.testing.assert_array_equal(session.env["Ad"], before)
    np.testing.assert_allclose(value, np.diag(session.env["zd"]) + before, rtol=1e-15)
    twice = session.run("D = diag(z)\n(D + outer(z, t)) @ (D - 2 * outer(t, z)) at z = zd, t = td")[-1].value
    z, t = session.env["zd"], session.env["td"]
    np.testing.assert_allclose(twice, (np.diag(z) + np.outer(z, t)) @ (np.diag(z) - 2 * np.outer(t, z)), rtol=1e-13)


@pytest.mark.parametrize("statement, by_hand", [
    ("y = 1 - z^2\nsum(y * t) at z = zd, t = td", lambda z, t: np.sum((1 - z**2) * t)),
    ("y = 1 - sum(z^2)\ny * t at z = zd, t = td", lambda z, t: (1 - np.sum(z**2)) * t),
])
def test_a_number_minus_a_temporary_is_one_subtraction(statement, by_hand):
    """SymPy writes 1 - x as 1 + (-1)*x: the code subtracts once (into x's buffer where x is a fresh temporary,
    a scalar's `c - x` otherwise), where it negated and then added: the same bits (IEEE's c - x is c + (-x))."""
    session = _session(6, True)
    source = []
    original = numeric.function_source
    numeric.function_source = lambda *a, **k: source.append(original(*a, **k)) or source[-1]
    try:
        value = session.run(statement)[-1].value
    finally:
        numeric.function_source = original
    zd, td = session.env["zd"], session.env["td"]
    np.testing.assert_array_equal(np.asarray(value, dtype=float), by_hand(zd, td))
    lean = source[-1]
    assert "_gl_rsub(" in lean or "numpy.float64(1.0) - " in lean
    assert "numpy.float64(-1.0)" not in lean
