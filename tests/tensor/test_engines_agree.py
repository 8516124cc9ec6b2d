"""Random compositions of the tensor primitives, with stops: the tensor engine against the component engine.

Each program is drawn from a fixed seed (the suite is deterministic; the long
explorations belong in benchmarks/). The same text is run twice: with `n` a
size (the tensor engine's formula, then `at` the point) and with `n = 3`
literal (the component engine, then `at` the same point). Gradients by a
vector and by a matrix, Jacobians and Hessians must agree to 1e-9, and the
tensor engine must give a formula, never a silent 0 where components differ.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from gradlang import Session
from tests.component_session import ComponentSession
from gradlang.errors import GradlangError
from tests.conftest import as_floats

VECTOR_UNARY = ["tanh({})", "sigmoid({})", "sin({})", "sg({})", "softmax({})", "exp({}/4)", "softplus({})"]
SCALAR_OF_VECTOR = ["sum({})", "norm({})", "logsumexp({})", "max({})", "{}[1]", "mean({})"]


def _vector(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(["x", "y", "W @ x", "x"])
    choice = rng.randrange(7)
    if choice == 0:
        return f"W @ ({_vector(rng, depth - 1)})"
    if choice == 1:
        return f"({_vector(rng, depth - 1)}) {rng.choice('+-*')} ({_vector(rng, depth - 1)})"
    if choice == 2:
        return f"{_scalar(rng, depth - 1)} * ({_vector(rng, depth - 1)})"
    if choice == 3:
        return f"sg(W) @ ({_vector(rng, depth - 1)})"
    return rng.choice(VECTOR_UNARY).format(_vector(rng, depth - 1))


def _scalar(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.15:
        return rng.choice(["a", "dot(x, y)", "sum(x)"])
    choice = rng.randrange(6)
    if choice == 0:
        return f"dot({_vector(rng, depth - 1)}, {_vector(rng, depth - 1)})"
    if choice == 1:
        return f"({_scalar(rng, depth - 1)}) * ({_scalar(rng, depth - 1)})"
    if choice == 2:
        return f"sg({_scalar(rng, depth - 1)})"
    if choice == 3:
        return f"log(1 + ({_scalar(rng, depth - 1)})^2)"
    return rng.choice(SCALAR_OF_VECTOR).format(f"({_vector(rng, depth - 1)})")


def _program(declarations: str, body: str) -> str:
    return f"{declarations}\nx: R^n\ny: R^n\nW: R^(n,n)\ng = {body}"


POINT = np.random.default_rng(7)
X, Y, WW = POINT.normal(size=3), POINT.normal(size=3), POINT.normal(size=(3, 3))
AT = f"x = {X.tolist()}, y = {Y.tolist()}, W = {WW.tolist()}, a = 0.7"


def _both(body: str):
    tensor, components = Session(), ComponentSession()
    tensor.run(_program("n: size", body))
    components.run(_program("", body).replace("R^n", "R^3").replace("R^(n,n)", "R^(3,3)"))
    return as_floats(tensor.eval(f"g at {AT}")), as_floats(components.eval(f"g at {AT}"))


def _bodies(seed: int, count: int) -> list:
    rng = random.Random(seed)
    bodies = []
    for _ in range(count):
        kind = rng.randrange(4)
        if kind == 0:
            bodies.append(f"grad({_scalar(rng, 3)}, x)")
        elif kind == 1:
            bodies.append(f"grad({_scalar(rng, 3)}, W)")
        elif kind == 2:
            bodies.append(f"jacobian({_vector(rng, 2)}, x)")
        else:
            bodies.append(f"hessian({_scalar(rng, 2)}, x)")
    return bodies


@pytest.mark.parametrize("seed", range(6))
def test_random_compositions_agree_with_the_component_engine(seed):
    compared = 0
    for body in _bodies(seed, 12):
        try:
            by_formula, by_components = _both(body)
        except GradlangError as error:  # only a refusal the reference allows: a rank-3 derivative
            assert error.kind == "DiffError" and "rank three" in error.message, (body, error.message)
            continue
        np.testing.assert_allclose(by_formula, by_components, rtol=1e-9, atol=1e-10, err_msg=body)
        compared += 1
    assert compared >= 8, "most programs must be compared, not refused"
