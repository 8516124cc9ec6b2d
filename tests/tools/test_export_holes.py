"""Export holes found by probing (issue 29): scalar calls, division by zero, `_`, lists, unused helpers.

Each exported function is called as a user would call it (Python floats and
lists) and must give gradlang's own numbers for the same call.
"""

from __future__ import annotations

import ast
import importlib.util
import math

import numpy as np
import pytest

from gradlang import Session
from gradlang.export import TARGETS, export_program
from tests.conftest import as_floats

FRAMEWORKS = ["numpy", "jax", "torch"]  # the targets whose modules run here (tf is checked as text)


def exported(source: str, target: str, tmp_path, session: Session | None = None):
    """The module exported for `target` from `source`, imported (skipped when the framework is missing)."""
    if target != "numpy":
        pytest.importorskip({"jax": "jax", "torch": "torch"}[target])
    if session is None:
        session = Session()
        session.run(source)
    path = tmp_path / f"holes_{target}.py"
    path.write_text(export_program(session, target, source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def floats(value) -> np.ndarray:
    """A framework's value (array, tensor, list of them) as float64."""
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.asarray(value, dtype=np.float64)


# A reduction of a list literal, or a user function named like a builtin, called with scalars.
SCALAR_CALLS = [
    ("g(a, b) = sum([a, b])", "g", (1.0, 2.0)),
    ("g(a, b) = norm([a, b])", "g", (3.0, 4.0)),
    ("g(a, b) = max([a, b])", "g", (1.0, 2.0)),
    ("g(a, b) = mean([a, b] * 2)", "g", (1.0, 2.0)),
    ("len(a, b) = a + b\ng(a, b) = len(a, b)", "g", (1.0, 2.0)),
    ("sum(a, b) = a * b\ng(a, b) = sum(a, b)", "g", (3.0, 2.0)),
    ("max(a) = a * 2\ng(a) = max(a)", "g", (1.5,)),
    ("f(t) = softmax([t, 1])[0]", "f", (0.5,)),
    ("f(t) = logsumexp([t, 2 * t])", "f", (0.25,)),
]


@pytest.mark.parametrize("target", FRAMEWORKS)
@pytest.mark.parametrize("source, name, args", SCALAR_CALLS)
def test_scalar_calls_give_gradlangs_numbers(source, name, args, target, tmp_path):
    module = exported(source, target, tmp_path)
    session = Session()
    session.run(source)
    expected = as_floats(session.eval(f"{name}({', '.join(map(repr, args))})"))
    assert np.allclose(floats(getattr(module, name)(*args)), expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("target", ["jax", "torch"])
def test_softmax_of_a_list_is_differentiated_as_gradlang_does(target, tmp_path):
    source = "f(t) = softmax([t, 1])[0]"
    module = exported(source, target, tmp_path)
    session = Session()
    session.run(source)
    expected = as_floats(session.eval("diff(f(t), t) at t = 0.5"))
    assert np.allclose(floats(module.grad_f(0.5)), expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("target", FRAMEWORKS)
def test_division_by_zero_is_ieee_as_in_gradlang(target, tmp_path):
    module = exported("f(x) = 1/x\nh(x) = log(x) - 1/x^2", target, tmp_path)
    assert float(floats(module.f(0.0))) == math.inf == float(Session().eval("f(x) = 1/x\nf(0.0)"))
    assert float(floats(module.f(-0.0))) == -math.inf
    assert float(floats(module.h(0.0))) == -math.inf


@pytest.mark.parametrize("target", FRAMEWORKS)
def test_a_function_named_underscore_is_exported_renamed(target, tmp_path):
    module = exported("_(x) = x + 1", target, tmp_path)
    assert float(floats(module.u_(1.0))) == 2.0
    assert "_ -> u_" in module.__doc__


def test_the_repls_last_result_is_not_exported(tmp_path):
    session = Session()
    session.run("t: R\nf(x) = x * t")
    session.bind("_", Session().eval("t: R\nt^2"))  # what the REPL does after a result
    module = exported("t: R\nf(x) = x * t", "numpy", tmp_path, session)
    assert not hasattr(module, "u_") and module.f(2.0, t=3.0) == 6.0


@pytest.mark.parametrize("target", FRAMEWORKS)
def test_python_lists_are_arrays_in_every_framework(target, tmp_path):
    source = "x: R^3\nW: R^(2,3)\ng(v) = sum(v * v)\nq(s) = sum(W @ s)\nloss = sum(W @ x)"
    module = exported(source, target, tmp_path)
    assert float(floats(module.g([1.0, 2.0]))) == 5.0
    rows = [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]]
    assert float(floats(module.q([1.0, 1.0, 1.0], W=rows))) == 4.0
    assert float(floats(module.loss([1.0, 2.0, 3.0], rows))) == 9.0
    if target != "numpy":
        assert np.allclose(floats(module.grad_g([1.0, 2.0])), [2.0, 4.0])


PROGRAMS = [
    "f(x) = x^2",
    "g(v) = max(v) + abs(v[0])",
    "x: R^3\nh(v) = softmax(v)[0] * relu(v[1])\nloss = h(x) + min(x[0], x[1])",
    "pick(a) = [1, 2, 3][a]\nround2(t) = round(t) + where(t > 0, t, 0)",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", PROGRAMS)
def test_a_module_defines_only_helpers_it_calls(source, target):
    session = Session()
    session.run(source)
    tree = ast.parse(export_program(session, target, source))
    helpers = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("_")}
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert helpers <= read, f"never called: {sorted(helpers - read)}"
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= read | {"jax.numpy"}


def test_a_small_module_is_small():
    session = Session()
    session.run("f(x) = x^2")
    assert export_program(session, "numpy", "f(x) = x^2").count("\n") < 25
