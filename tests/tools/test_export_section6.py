"""The section-6 compositions, axis forms and slices export as they are: values and gradients agree.

They are made of primitives that already have export spellings, so a
function written with them exports to every target unchanged; the axis form
`max(M, axis=1)` must not be read by the vectorised export as an elementwise max
(builtins_axes.is_axis_call), so it stays unrolled and right.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.export import TARGETS, export_program
from tests.conftest import as_floats
from tests.tools.test_export import load
from tests.tools.test_export_examples import framework, literal, to_framework, to_numpy

PROGRAM = """M: R^(2,3)
S: R^(2,2)
axes(M) = sum(max(M, axis=1) * [1.0, 2.0]) + sum(logsumexp(M, 0)) + sum(softmax(M, 0) * M) + mean(M, 1)[0] + sum(min(M, axis=0))
slices(M) = dot(M[:, 1], M[:, 2]) + sum(M[0, :] * log_softmax(M[1, :])) + trace(outer(M[0, :], M[1, :]))
matrices(S) = logdet(S @ transpose(S) + eye(2)) + sum(inv(S + 3*eye(2))) + det(S) * cosine(S[0, :], S[1, :])
losses(M) = sum(huber(M, 1.0)) + sum(normalize(M[0, :]) * sg(M[1, :])) + sum(diag(M) * onehot(1, 2))
"""

# function, argument name, point (a tie in max(M, axis=1) and in min(M, axis=0); |M| crossing huber's delta)
POINTS = [
    ("axes", "M", [[0.5, 2.0, 2.0], [1.5, -0.5, 1.5]]),
    ("slices", "M", [[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]]),
    ("matrices", "S", [[1.0, 2.0], [-0.5, 0.3]]),
    ("losses", "M", [[0.5, -1.0, 2.5], [1.5, 0.3, -0.7]]),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("section6")


def _module(target: str, folder):
    session = Session()
    session.run(PROGRAM)
    return load(export_program(session, target, PROGRAM), folder, f"section6_{target}")


def _gradlang(name: str, variable: str, point) -> tuple:
    session = Session()
    session.run(PROGRAM)
    at = f"at {variable} = {literal(np.array(point))}"
    return (as_floats(session.eval(f"{name}({variable}) {at}")),
            as_floats(session.eval(f"grad({name}({variable}), {variable}) {at}")))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name, variable, point", POINTS, ids=[p[0] for p in POINTS])
def test_exports_agree_with_gradlang(name, variable, point, target, folder):
    framework(target)
    module = _module(target, folder)
    argument = to_framework(target, np.array(point))
    value, gradient = _gradlang(name, variable, point)
    np.testing.assert_allclose(to_numpy(getattr(module, name)(argument)), value, rtol=1e-10, atol=1e-12)
    if target != "numpy":
        got = to_numpy(getattr(module, f"grad_{name}")(argument))
        np.testing.assert_allclose(got, gradient, rtol=1e-9, atol=1e-12, err_msg=f"grad_{name}")


def test_the_axis_form_is_not_vectorised_as_an_elementwise_max(folder):
    """f(M) = sum(max(M, axis=1)) read as elementwise would be sum(maximum(M, 1)): 7.5 here, not 3.5."""
    source = "M: R^(2,3)\nf(M) = sum(max(M, axis=1))\n"
    session = Session()
    session.run(source)
    module = load(export_program(session, "numpy", source), folder, "axis_form")
    point = np.array([[0.5, 2.0, 2.0], [1.5, -0.5, 1.5]])
    assert "any length" not in (module.f.__doc__ or "")
    assert float(module.f(point)) == float(session.eval(f"f(M) at M = {literal(point)}")) == 3.5
