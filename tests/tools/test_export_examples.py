"""Every example exported to every target, imported, run, and checked against gradlang's numbers.

For each example and each target (numpy, jax, torch, tf) the module written by
`--export` is imported and every function is called at two vector lengths: the
length the example uses and a longer one: an exported function is unrolled
for one length, so at another it must give gradlang's numbers or refuse the
shape, never compute something else. Every loss (a binding that depends on
the example's symbols: scalar losses and vector-valued ones alike) is checked
the same way, at its declared shapes and at longer ones. The inputs are fixed,
distinct and away from kinks and ties, so both sides are smooth there and
agree to rounding.

The frameworks come from the test extra (jax) and .ci/run (CPU torch and
TensorFlow); with GRADLANG_REQUIRE_FRAMEWORKS=1, as in CI, a missing one fails
instead of skipping (see tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from gradlang import GradlangError, Session
from gradlang.core.evaluate import FunctionDef
from gradlang.export import TARGETS, export_program
from tests.conftest import as_floats

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.grad"))
MODULES = {"numpy": "numpy", "jax": "jax", "torch": "torch", "tf": "tensorflow"}
SAMPLE = [0.7, -0.4, 1.3, 0.2, -1.1, 0.9, -0.6, 1.7, 0.35, -0.85]


@lru_cache(maxsize=None)
def session_of(path: Path) -> Session:
    session = Session()
    session.run(path.read_text(encoding="utf-8"))
    return session


@lru_cache(maxsize=None)
def module_of(path: Path, target: str, folder: Path):
    code = export_program(session_of(path), target, path.read_text(encoding="utf-8"))
    name = f"exported_{path.stem}_{target}"
    file = folder / f"{name}.py"
    file.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("exported")


def framework(target: str):
    return pytest.importorskip(MODULES[target])


def to_framework(target: str, value):
    """A NumPy float64 value as the target's float64 tensor (0-d for a scalar, as autodiff needs)."""
    if target == "numpy":
        return float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float)
    if target == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        return jax.numpy.asarray(value, dtype=jax.numpy.float64)
    if target == "torch":
        import torch

        return torch.tensor(value, dtype=torch.float64)
    if target == "tf":
        import tensorflow as tf

        return tf.constant(value, dtype=tf.float64)
    return np.asarray(value, dtype=float)


def to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, (list, tuple)):
        return np.array([to_numpy(v) for v in value], dtype=float)
    return np.asarray(value, dtype=float)


def literal(value) -> str:
    """A NumPy value as gradlang source (an int, an index, stays an integer)."""
    if isinstance(value, int):
        return str(value)
    if np.ndim(value) == 0:
        return repr(float(value))
    return "[" + ", ".join(literal(v) for v in value) + "]"


def sample(shape: tuple, offset: int = 0) -> np.ndarray | float:
    size = int(np.prod(shape)) if shape else 1
    values = np.array([SAMPLE[(offset + k) % len(SAMPLE)] * (1 + 0.1 * ((offset + k) // len(SAMPLE)))
                       for k in range(size)])
    return values.reshape(shape) if shape else float(values[0])


def declared(session: Session) -> dict[str, tuple]:
    """The example's declared symbols and their shapes (a name bound to a symbol or an array of them)."""
    found = {}
    for name, value in session.user_names().items():
        if isinstance(value, sp.Symbol) and value.name == name:
            found[name] = ()
        elif isinstance(value, (sp.NDimArray, sp.MatrixBase)) and all(
                isinstance(e, sp.Symbol) and e.name.startswith(name + "[") for e in sp.flatten(value.tolist())):
            found[name] = tuple(value.shape)
    return found


def point_for(session: Session, value) -> dict[str, object]:
    """Values for the symbols `value` depends on: declared ones in their shape, others as scalars."""
    free = sorted({s.name.split("[")[0] for s in getattr(value, "free_symbols", set())})
    shapes = declared(session)
    return {name: sample(shapes.get(name, ()), offset=3 * k) for k, name in enumerate(free)}


def gradlang_number(session: Session, source: str, point: dict) -> np.ndarray | None:
    """The value of `source` at `point` in gradlang, or None if it is not a number there."""
    at = ", ".join(f"{name} = {literal(value)}" for name, value in point.items())
    try:
        return as_floats(session.eval(source + (f" at {at}" if at else "")))
    except Exception:  # noqa: BLE001 - a shape that does not fit this function: try the next
        return None


def exported_shapes(module, name: str) -> list | None:
    """The parameter shapes the module's docstring gives for `name`.

    "t: scalar" -> (), "v: vector of length 3" -> (3,), "W: 2x2 matrix" -> (2, 2),
    "a: index, an integer from 0 to 2" -> ("index", 3).
    """
    function = getattr(module, name, None)
    doc = getattr(function, "__doc__", None) or ""
    found = re.findall(r"(\w+): (scalar|vector of length (\d+)|(\d+)x(\d+) matrix|index, an integer from 0 to (\d+))",
                       doc)
    if not found and "(no parameters)" not in doc:
        return None
    return [() if kind == "scalar" else (int(n),) if n else (int(r), int(c)) if r else ("index", int(last) + 1)
            for _, kind, n, r, c, last in found]


def argument(shape, offset: int):
    """A sample argument: numbers in the shape, or for an index the last valid one (every branch is a test)."""
    return shape[1] - 1 if shape and shape[0] == "index" else sample(shape, offset)


def calls(session: Session, name: str, shapes: list):
    """Arguments of `shapes` for `name`, the point of its free symbols, and gradlang's value there."""
    args = [argument(shape, offset=5 * k + 1) for k, shape in enumerate(shapes)]
    source = f"{name}({', '.join(literal(a) for a in args)})"
    symbolic = session.eval(source)
    point = point_for(session, symbolic)
    return args, point, gradlang_number(session, source, point)


def longer(shapes: list) -> list:
    """Each array two longer in every dimension; scalars and indices as they were."""
    return [shape if not shape or shape[0] == "index" else tuple(n + 2 for n in shape) for shape in shapes]


def functions() -> list:
    return [(path, name) for path in EXAMPLES for name, value in session_of(path).user_names().items()
            if isinstance(value, FunctionDef)]


def losses() -> list:
    """Bindings that depend on symbols (not declarations): scalar losses and vector-valued ones."""
    found = []
    for path in EXAMPLES:
        session = session_of(path)
        names = declared(session)
        for name, value in session.user_names().items():
            if name not in names and isinstance(value, (sp.Expr, sp.NDimArray, sp.MatrixBase)) and value.free_symbols:
                found.append((path, name))
    return found


def call_exported(module, name: str, target: str, args, point):
    function = getattr(module, name)
    accepted = inspect.signature(function).parameters
    keywords = {k: to_framework(target, v) for k, v in point.items() if k in accepted}
    positional = [a if isinstance(a, int) else to_framework(target, a) for a in args]
    return to_numpy(function(*positional, **keywords))


def test_the_examples_have_losses_and_functions_to_check():
    """The parametrisations below are not empty by accident: the lessons' losses are among them."""
    stems = {(path.stem, name) for path, name in losses()}
    assert {("target_network", "td"), ("target_network", "residual"), ("vq_vae", "L"),
            ("contrastive_divergence", "cd_loss"), ("reinforce", "J")} <= stems
    assert {("contrastive_divergence", "outer"), ("reinforce", "surrogate")} <= {
        (path.stem, name) for path, name in functions()}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path, name", functions(), ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_every_function_agrees_at_the_examples_length(path, name, target, folder):
    framework(target)
    module = module_of(path, target, folder)
    shapes = exported_shapes(module, name)
    assert shapes is not None, f"{name} is not in the exported module (or says nothing of its parameters)"
    args, point, expected = calls(session_of(path), name, shapes)
    got = call_exported(module, name, target, args, point)
    assert np.allclose(got, expected, rtol=1e-9, atol=1e-12), (name, args, point, got, expected)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path, name", functions(),
                         ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_every_function_agrees_at_another_length(path, name, target, folder):
    """A longer vector: the right numbers, or a clear error; never numbers for another length."""
    framework(target)
    module = module_of(path, target, folder)
    shapes = exported_shapes(module, name)
    assert shapes is not None, f"{name} is not in the exported module (or says nothing of its parameters)"
    if not any(shapes):
        pytest.skip(f"{name} takes scalars only: its length is not a question")
    try:
        args, point, expected = calls(session_of(path), name, longer(shapes))
    except GradlangError as error:
        pytest.skip(f"in gradlang too {name} takes only the example's length: {error.message}")
    try:
        got = call_exported(module, name, target, args, point)
    except (ValueError, TypeError) as error:  # a clear refusal of the shape is honest
        assert "length" in str(error) or "shape" in str(error), error
        return
    assert np.shape(got) == np.shape(expected) and np.allclose(got, expected, rtol=1e-9, atol=1e-12), (
        f"exported {name} at {longer(shapes)} computes something else: {got} where gradlang gives {expected}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path, name", losses(), ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_every_loss_agrees(path, name, target, folder):
    framework(target)
    module = module_of(path, target, folder)
    session = session_of(path)
    assert callable(getattr(module, name, None)), f"the loss {name} is not exported"
    point = point_for(session, session.user_names()[name])
    expected = gradlang_number(session, name, point)
    assert expected is not None, f"gradlang cannot evaluate {name} at {point}"
    got = call_exported(module, name, target, [], point)
    assert np.shape(got) == np.shape(expected) and np.allclose(got, expected, rtol=1e-9, atol=1e-12), (
        name, point, got, expected)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path, name", losses(), ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_every_loss_refuses_arrays_of_another_length(path, name, target, folder):
    """A loss is a function of the declared symbols, unrolled for their declared shapes: longer arrays
    are refused by name, never read as the first few components."""
    framework(target)
    module = module_of(path, target, folder)
    shapes = exported_shapes(module, name)
    assert shapes is not None, f"the loss {name} says nothing of its parameters"
    if not any(shapes):
        pytest.skip(f"{name} depends on scalars only: its length is not a question")
    function = getattr(module, name)
    arguments = [to_framework(target, sample(shape, 3 * k)) for k, shape in enumerate(longer(shapes))]
    with pytest.raises((ValueError, TypeError), match="shape"):
        function(*arguments)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_exports_a_module_that_compiles(path, target):
    """Without the framework installed too: the module is written, compiles, and defines every function and loss."""
    import ast

    code = export_program(session_of(path), target, path.read_text(encoding="utf-8"))
    tree = ast.parse(code)
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    wanted = {name for p, name in functions() + losses() if p == path}
    assert wanted <= defined, wanted - defined
