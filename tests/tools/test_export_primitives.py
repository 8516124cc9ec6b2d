"""Every primitive exports: the module is executed and each function CALLED, for NumPy and JAX.

One function per elementwise primitive of the registry (so a new record is
covered without a new test), plus the examples that use sqrt and norm, which
once exported a bare `sqrt(...)` that raised NameError when called.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradlang import Session
from gradlang.expr import primitives
from gradlang.export import export_program
from tests.tools.test_export import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
POINTS = [0.3, 0.6]  # inside every elementwise primitive's domain, away from kinks
ELEMENTWISE = sorted(r.name for r in primitives.records() if r.apply == "elementwise" and r.group != "core")


def _script() -> str:
    return "\n".join(f"f_{name}(t) = {name}(t)" for name in ELEMENTWISE) + "\n"


@pytest.fixture(scope="module")
def session():
    s = Session()
    s.run(_script())
    return s


@pytest.fixture(scope="module", params=["numpy", "jax"])
def module(request, session, tmp_path_factory):
    if request.param == "jax":
        pytest.importorskip("jax")
    code = export_program(session, request.param, _script())
    return request.param, load(code, tmp_path_factory.mktemp(request.param), f"prims_{request.param}")


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_each_elementwise_primitive_is_called_and_agrees(module, session, name):
    target, exported = module
    for point in POINTS:
        value = float(getattr(exported, f"f_{name}")(point))
        assert np.isclose(value, float(session.eval(f"f_{name}(t) at t = {point}")), rtol=1e-12), (target, point)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_each_elementwise_primitive_has_gradlangs_gradient_in_jax(module, session, name):
    target, exported = module
    if target != "jax":
        pytest.skip("gradients are checked in JAX")
    import jax

    for point in POINTS:
        exported_grad = float(jax.grad(getattr(exported, f"f_{name}"))(point))
        assert np.isclose(exported_grad, float(session.eval(f"diff(f_{name}(t), t) at t = {point}")), rtol=1e-12)


@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_sqrt_and_norm_exports_run(target, tmp_path):
    """pitfalls.grad (sqrt) and siamese_stop.grad (norm): the exported functions are called."""
    if target == "jax":
        pytest.importorskip("jax")
    pitfalls, siamese = (_exported(name, target, tmp_path) for name in ("pitfalls", "siamese_stop"))
    assert float(pitfalls.safe_sqrt(4.0)) == 2.0
    assert float(pitfalls.safe_sqrt(-1.0)) == 0.0
    cosine = float(siamese.D(np.array([3.0, 4.0]), np.array([4.0, 3.0])))
    assert np.isclose(cosine, -24 / 25)


def _exported(name: str, target: str, tmp_path):
    source = (EXAMPLES / f"{name}.grad").read_text()
    s = Session()
    s.run(source)
    return load(export_program(s, target, source), tmp_path, f"{name}_{target}")


VECTOR_SCRIPT = "x: R^3\nlse(v) = logsumexp(v)\nlogp(v) = log(softmax(v)[0])\n"
VECTOR_POINTS = [[1.0, 3.0, 3.0], [1000.0, 1001.0, -1000.0], [0.5, -1.0, 2.0]]


@pytest.mark.parametrize("target", ["numpy", "jax"])
@pytest.mark.parametrize("function", ["lse", "logp"])
def test_logsumexp_and_softmax_export_with_gradlangs_values_and_gradients(target, function, tmp_path):
    if target == "jax":
        jax = pytest.importorskip("jax")
    s = Session()
    s.run(VECTOR_SCRIPT)
    exported = getattr(load(export_program(s, target, VECTOR_SCRIPT), tmp_path, f"vectors_{target}"), function)
    for point in VECTOR_POINTS:
        expected = float(s.eval(f"{function}(x) at x = {point}"))
        assert np.isfinite(expected) and np.isclose(float(exported(np.array(point))), expected, rtol=1e-12)
        if target == "jax":
            gradient = np.asarray(jax.grad(exported)(jax.numpy.array(point)))
            expected_gradient = np.array([float(g) for g in s.eval(f"grad({function}(x), x) at x = {point}")])
            assert np.allclose(gradient, expected_gradient, rtol=1e-12, atol=1e-15)
