"""Numbers of a float point by whole-array NumPy (core/at.py), and the arrays it takes.

Wherever the tensors of an `at` are given float arrays and no symbol is left,
the tensor formula is evaluated by NumPy on the arrays, at every size; exact
numbers, or a symbol left, take the formula's components (expr/tensor/lower.py).
The NumPy numbers must agree to 1e-12 with the component engine's (the oracle,
`ComponentSession()`) and with a hand-written NumPy backward pass.
Speed is measured in benchmarks/bench_wide.py, never here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from gradlang import GradlangError, Session, limits
from tests.component_session import ComponentSession
from gradlang.render.json import _encode_list, encode_value
from tests.conftest import as_floats

THRESHOLD = 4096  # a size the component engine once took, for the tests of exact numbers and of errors
MLP = "W1: R^({n},{n}); b1: R^{n}; w2: R^{n}; x0: R^{n}\nloss = (tanh(dot(w2, tanh(W1 @ x0 + b1)) + 0.1) - 0.3)^2\n"


def _mlp_arrays(n: int):
    rng = np.random.default_rng(n)
    return {"W1": rng.uniform(-1, 1, (n, n)) / np.sqrt(n), "b1": rng.uniform(-0.5, 0.5, n),
            "w2": rng.uniform(-1, 1, n) / np.sqrt(n), "x0": rng.uniform(-1, 1, n)}


def _by_hand(W1, b1, w2, x0):
    h = np.tanh(W1 @ x0 + b1)
    out = np.tanh(w2 @ h + 0.1)
    return np.outer(2 * (out - 0.3) * (1 - out**2) * w2 * (1 - h**2), x0)


def _close(got, expected, rtol=1e-12):
    got, expected = as_floats(got), as_floats(expected)
    assert got.shape == expected.shape
    assert np.max(np.abs(got - expected)) <= rtol * np.max(np.abs(expected))


def test_a_width_300_gradient_is_the_hand_written_numpy_one():
    session = Session()
    session.run(MLP.format(n=300) + "g = grad(loss, W1)")
    arrays = _mlp_arrays(300)
    for name, array in arrays.items():
        session.bind(f"{name}_data", array)
    value = session.eval("g at W1 = W1_data, b1 = b1_data, w2 = w2_data, x0 = x0_data")
    assert isinstance(value, np.ndarray) and value.dtype == np.float64
    _close(value, _by_hand(**arrays))


def _both_engines(n: int, source: str, point: str, arrays: dict):
    """The value by the default session and by the component engine alone (the oracle)."""
    values = []
    for components in (False, True):
        session = (ComponentSession() if components else Session())
        for name, array in arrays.items():
            session.bind(name, array)
        values.append(session.eval(source.format(n=n) + point))
    return values


def _agree(n: int, source: str, point: str) -> None:
    x = np.random.default_rng(n).uniform(-2, 2, n)
    fast, oracle = _both_engines(n, source, point, {"data": x})
    assert isinstance(fast, np.ndarray)  # NumPy's, at every size: no threshold
    _close(fast, oracle)


@pytest.mark.parametrize("n", [2, 300])
def test_numpy_and_the_components_agree_at_every_size(n):
    _agree(n, "x: R^{n}; y: R\n", "tanh(x) * y at x = data, y = 0.5")


@pytest.mark.parametrize("n", [3, 64])
def test_a_gradient_by_numpy_is_the_component_engines(n):
    _agree(n, "x: R^{n}; y: R\ng = grad(sum(tanh(x) * x^2) * y + logsumexp(x), x)\n", "g at x = data, y = 0.5")


def test_every_tensor_the_at_gives_is_given_to_numpy():
    n = 5
    arrays = {"a": np.linspace(-1, 1, n), "b": np.linspace(2, 3, n)}
    fast, oracle = _both_engines(n, "u: R^{n}; v: R^{n}\n", "u * v + exp(u) at u = a, v = b", arrays)
    assert isinstance(fast, np.ndarray)
    _close(fast, oracle)


def test_exact_numbers_keep_the_exact_component_path():
    value = Session().eval(f"x: R^{THRESHOLD}\nsum(x^2) at x = ones({THRESHOLD})")
    assert value == THRESHOLD and isinstance(value, sp.Integer)


def test_a_symbol_left_free_keeps_a_formula():
    value = Session().eval(f"x: R^{THRESHOLD}\nsum(x) * y at x = linspace(0, 1, {THRESHOLD})")
    assert value.free_symbols == {sp.Symbol("y", real=True)}


@pytest.mark.parametrize("k", [THRESHOLD, -1, 1.5])
def test_a_bad_index_is_the_error_of_a_symbolic_size(k):
    """x[k] with k given by the at has no components before k: at any literal size or a symbolic one, the
    one at says what is wrong with k (issue #37)."""
    errors = []
    for size, count in ((THRESHOLD, THRESHOLD), (8, 8), ("n", THRESHOLD)):
        with pytest.raises(GradlangError) as caught:
            Session().run(f"x: R^{size}\nx[k] at x = linspace(0, 1, {count}), k = {k}")
        errors.append((caught.value.kind, caught.value.message.replace("length 8", f"length {THRESHOLD}")))
    assert errors[0] == errors[1] == errors[2]


def test_a_large_matrix_from_npy_takes_no_components(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    arrays = _mlp_arrays(128)
    for name, array in arrays.items():
        np.save(f"{name}.npy", array)
    monkeypatch.setattr("gradlang.core.at.components", None)  # taking components would fail here
    value = Session().eval(MLP.format(n=128) + 'grad(loss, W1) at W1 = load("W1.npy"), b1 = load("b1.npy"), '
                           'w2 = load("w2.npy"), x0 = load("x0.npy")')
    _close(value, _by_hand(**arrays))


def test_bind_takes_a_numpy_array_as_load_gives_one():
    session = Session()
    data = np.arange(6).reshape(2, 3)
    session.bind("m", data)
    data[0, 0] = 100  # the session holds its own copy
    bound = session.user_names()["m"]
    assert bound.dtype == np.float64 and bound.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert float(session.eval("W: R^(2,3)\nsum(W) at W = m")) == 15
    session.bind("one", np.float64(2.5))
    assert session.eval("one") == 2.5


@pytest.mark.parametrize("array, kind", [(np.zeros((1,) * 33), "ShapeError"), (np.array([1 + 2j]), "ValueError"),
                                         (np.array([], dtype=float), "ValueError"), (np.array(["a"]), "ValueError")])
def test_bind_refuses_what_load_refuses(array, kind):
    with pytest.raises(GradlangError) as caught:
        Session().bind("data", array)
    assert caught.value.kind == kind


def test_a_declared_tensor_is_bounded_by_its_memory_not_by_a_count():
    """8192×8192 (512 MiB of floats) is under the default 4 GiB; a Session's max_memory bounds it, as --max-memory."""
    Session().run("W: R^(8192,8192)")
    Session(max_memory=8 * 4097 * 4097).run("W: R^(4097,4097)")
    with pytest.raises(GradlangError) as caught:
        Session(max_memory=8 * 4097 * 4097 - 1).run("W: R^(4097,4097)")
    assert caught.value.kind == "LimitError" and caught.value.message == (
        "a tensor of 4097×4097 floats needs about 0.1 GiB of memory, above the limit of 0.1 GiB; "
        "raise it with --max-memory (Session(max_memory=...) in Python)")
    with pytest.raises(GradlangError, match="30000×30000 floats needs about 6.7 GiB of memory, above the limit of 4.0"):
        Session().run("W: R^(30000,30000)")


def test_json_writes_a_float_array_as_the_per_number_encoder_does():
    array = np.array([[0.1, -2.5e-300, 1e300], [3.0, -0.0, 1 / 3]])
    assert json.dumps(encode_value(array)) == json.dumps(_encode_list(array.tolist()))
    with_specials = np.array([np.nan, np.inf, 1.0])
    assert encode_value(with_specials) == ["nan", "inf", 1.0]


def test_a_singular_matrix_is_numpys_error_not_the_component_engines_size_limit():
    session = Session()
    session.bind("A", np.ones((64, 64)))
    with pytest.raises(GradlangError) as caught:
        session.run("W: R^(64,64)\ninv(W) at W = A")
    assert caught.value.kind == "ValueError" and "singular" in caught.value.message
