"""Losses at symbolic size: one formula, whatever the sizes, equal to JAX and to the component engine.

Each row is a loss a teacher or a paper writes, over tensors declared with
sizes `m, n`. At symbolic size its gradient must be a formula of the tensor
engine (no components, a short text that cannot grow with sizes it does not
know); at three literal sizes and random points, that formula's numbers must
agree with JAX's gradient in float64 (`jax.lax.stop_gradient` for the stops)
and with the gradient the component engine takes of the same program declared
at those literal sizes, to 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from gradlang import Session
from tests.component_session import ComponentSession
from gradlang.expr.tensor import is_tensor
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient

SIZES = [(2, 3), (3, 2), (4, 5)]


@dataclass(frozen=True)
class Loss:
    name: str
    declarations: dict  # name -> shape, sizes named m and n
    loss: str  # gradlang, over the declared names and any definitions
    wrt: str
    oracle: Callable  # JAX: a function of the declared arrays, in declaration order
    definitions: str = ""
    scalars: dict = None  # scalar name -> value, given in the at


def _bce(p, t):
    return -t * jnp.log(p) - (1 - t) * jnp.log(1 - p)


def _stable_softmax(v):
    e = jnp.exp(v - sg(jnp.max(v)))
    return e / jnp.sum(e)


def _cosine(a, b):
    return jnp.dot(a, b) / (jnp.linalg.norm(a) * jnp.linalg.norm(b))


def _normalize(v):
    return v / jnp.linalg.norm(v)


def _huber(u, d):
    return jnp.where(jnp.abs(u) <= d, u**2 / 2, d * (jnp.abs(u) - d / 2))


BCE = "bce(p, t) = -t*log(p) - (1 - t)*log(1 - p)"
STABLE = "stable(v) = exp(v - sg(max(v))) / sum(exp(v - sg(max(v))))"
COSINE = "cos_sim(a, b) = dot(a, b) / (norm(a)*norm(b))"
HUBER = "hub(u, d) = where(abs(u) <= d, u^2/2, d*(abs(u) - d/2))"
MN, N, M, NN = ("m", "n"), ("n",), ("m",), ("n", "n")

LOSSES = [
    Loss("least squares by W", {"W": MN, "x": N, "y": M}, "sum((W @ x - y)^2)", "W",
         lambda W, x, y: jnp.sum((W @ x - y) ** 2)),
    Loss("least squares by x", {"W": MN, "x": N, "y": M}, "sum((W @ x - y)^2)", "x",
         lambda W, x, y: jnp.sum((W @ x - y) ** 2)),
    Loss("mean squared error", {"W": MN, "x": N, "y": M}, "mean((W @ x - y)^2)", "W",
         lambda W, x, y: jnp.mean((W @ x - y) ** 2)),
    Loss("ridge", {"X": MN, "w": N, "y": M}, "sum((X @ w - y)^2) + lam*sum(w^2)", "w",
         lambda X, w, y: jnp.sum((X @ w - y) ** 2) + 0.3 * jnp.sum(w**2), scalars={"lam": 0.3}),
    Loss("logistic regression", {"w": N, "x": N}, "bce(sigmoid(dot(w, x)), t)", "w",
         lambda w, x: _bce(jax.nn.sigmoid(jnp.dot(w, x)), 0.7), definitions=BCE, scalars={"t": 0.7}),
    Loss("softmax cross-entropy", {"W": MN, "x": N}, "-log(softmax(W @ x)[1])", "W",
         lambda W, x: -jnp.log(jax.nn.softmax(W @ x)[1])),
    Loss("softmax cross-entropy, logsumexp form", {"W": MN, "x": N}, "logsumexp(W @ x) - (W @ x)[0]", "W",
         lambda W, x: jax.nn.logsumexp(W @ x) - (W @ x)[0]),
    Loss("softmax cross-entropy with a stopped max", {"W": MN, "x": N},
         "-log(stable(W @ x)[1])", "W", lambda W, x: -jnp.log(_stable_softmax(W @ x)[1]), definitions=STABLE),
    Loss("stopped max, written out", {"W": MN, "x": N},
         "log(sum(exp(W @ x - sg(max(W @ x))))) + sg(max(W @ x)) - (W @ x)[1]", "W",
         lambda W, x: jnp.log(jnp.sum(jnp.exp(W @ x - sg(jnp.max(W @ x))))) + sg(jnp.max(W @ x)) - (W @ x)[1]),
    Loss("log-softmax of a linear layer", {"W": MN, "x": N, "b": M}, "(W @ x + b)[0] - logsumexp(W @ x + b)", "b",
         lambda W, x, b: (W @ x + b)[0] - jax.nn.logsumexp(W @ x + b)),
    Loss("soft-label cross-entropy", {"W": MN, "x": N, "q": M}, "-sum(q * log(softmax(W @ x)))", "W",
         lambda W, x, q: -jnp.sum(q * jnp.log(jax.nn.softmax(W @ x)))),
    Loss("linear layer under squared error and tanh", {"W": MN, "x": N, "y": M}, "sum((tanh(W @ x) - y)^2)", "W",
         lambda W, x, y: jnp.sum((jnp.tanh(W @ x) - y) ** 2)),
    Loss("2-layer MLP by the first layer", {"A": NN, "B": MN, "x": N, "y": M},
         "sum((B @ tanh(A @ x) - y)^2)", "A", lambda A, B, x, y: jnp.sum((B @ jnp.tanh(A @ x) - y) ** 2)),
    Loss("2-layer MLP with a stop in the middle, second layer", {"A": NN, "B": MN, "x": N, "y": M},
         "sum((B @ sg(tanh(A @ x)) - y)^2)", "B", lambda A, B, x, y: jnp.sum((B @ sg(jnp.tanh(A @ x)) - y) ** 2)),
    Loss("2-layer MLP with a stop in the middle, first layer", {"A": NN, "B": MN, "x": N, "y": M},
         "sum((B @ sg(tanh(A @ x)) - y)^2) + sum(tanh(A @ x))", "A",
         lambda A, B, x, y: jnp.sum((B @ sg(jnp.tanh(A @ x)) - y) ** 2) + jnp.sum(jnp.tanh(A @ x))),
    Loss("SimSiam cosine with a stopped target", {"P": NN, "Z": NN, "x": N},
         "-cos_sim(P @ x, sg(Z @ x))", "P", lambda P, Z, x: -_cosine(P @ x, sg(Z @ x)), definitions=COSINE),
    Loss("BYOL normalised regression", {"P": NN, "Z": NN, "x": N},
         "sum(((P @ x)/norm(P @ x) - sg((Z @ x)/norm(Z @ x)))^2)", "P",
         lambda P, Z, x: jnp.sum((_normalize(P @ x) - sg(_normalize(Z @ x))) ** 2)),
    Loss("TD target", {"Q": MN, "s": N, "s2": N},
         "(r + gamma*sg(max(Q @ s2)) - (Q @ s)[1])^2", "Q",
         lambda Q, s, s2: (0.5 + 0.9 * sg(jnp.max(Q @ s2)) - (Q @ s)[1]) ** 2, scalars={"r": 0.5, "gamma": 0.9}),
    Loss("straight-through rounding", {"W": MN, "x": N, "y": M},
         "sum((W @ x + sg(round(W @ x) - W @ x) - y)^2)", "W",
         lambda W, x, y: jnp.sum((W @ x + sg(jnp.round(W @ x) - W @ x) - y) ** 2)),
    Loss("huber", {"W": MN, "x": N, "y": M}, "sum(hub(W @ x - y, 1))", "W",
         lambda W, x, y: jnp.sum(_huber(W @ x - y, 1.0)), definitions=HUBER),
    Loss("huber, the builtin", {"W": MN, "x": N, "y": M}, "sum(huber(W @ x - y, 1))", "W",
         lambda W, x, y: jnp.sum(_huber(W @ x - y, 1.0))),
    Loss("smooth L1 of a scalar", {"w": N, "x": N}, "huber(dot(w, x) - 1, 0.5)", "w",
         lambda w, x: _huber(jnp.dot(w, x) - 1.0, 0.5)),
    Loss("row-wise max, squared", {"W": MN, "X": MN}, "sum(max(W * X, axis=1)^2) - sum(min(W, axis=0))", "W",
         lambda W, X: jnp.sum(jnp.max(W * X, axis=1) ** 2) - jnp.sum(jnp.min(W, axis=0))),
    Loss("logdet", {"A": NN}, "log(det(A @ transpose(A) + eye(n)))", "A",
         lambda A: jnp.linalg.slogdet(A @ A.T + jnp.eye(A.shape[0]))[1]),
    Loss("trace of a quadratic form", {"W": NN, "A": NN}, "trace(transpose(W) @ A @ W)", "W",
         lambda W, A: jnp.trace(W.T @ A @ W)),
    Loss("norm of a residual", {"W": MN, "x": N, "y": M}, "norm(W @ x - y)", "W",
         lambda W, x, y: jnp.linalg.norm(W @ x - y)),
    Loss("bilinear form", {"u": M, "W": MN, "v": N}, "dot(u, W @ v)", "W", lambda u, W, v: jnp.dot(u, W @ v)),
    Loss("softplus of a linear layer", {"W": MN, "x": N}, "sum(softplus(W @ x))", "W",
         lambda W, x: jnp.sum(jax.nn.softplus(W @ x))),
    Loss("sigmoid gate", {"W": MN, "x": N, "y": M}, "sum(sigmoid(W @ x) * y)", "W",
         lambda W, x, y: jnp.sum(jax.nn.sigmoid(W @ x) * y)),
    Loss("x times its stopped self", {"x": N}, "sum(x * sg(x))", "x", lambda x: jnp.sum(x * sg(x))),
    Loss("logsumexp", {"x": N}, "logsumexp(x)", "x", lambda x: jax.nn.logsumexp(x)),
    Loss("max of a linear layer", {"W": MN, "x": N}, "max(W @ x)", "W", lambda W, x: jnp.max(W @ x)),
    Loss("inverse", {"A": NN, "B": NN}, "sum(inv(A @ transpose(A) + eye(n)) @ B)", "A",
         lambda A, B: jnp.sum(jnp.linalg.inv(A @ A.T + jnp.eye(A.shape[0])) @ B)),
]


def _declare(declarations: dict, sizes: dict | None) -> str:
    def shape(names):
        dims = [str(sizes[d]) if sizes else d for d in names]
        return f"R^{dims[0]}" if len(dims) == 1 else f"R^({dims[0]},{dims[1]})"

    head = f"m = {sizes['m']}\nn = {sizes['n']}\n" if sizes else "m, n: size\n"
    return head + "\n".join(f"{name}: {shape(names)}" for name, names in declarations.items())


def _literal(array: np.ndarray) -> str:
    return repr(array.tolist())


def _point(row: Loss, sizes: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=tuple(sizes[d] for d in names)) for name, names in row.declarations.items()}


def _at(point: dict, row: Loss) -> str:
    given = [f"{name} = {_literal(value)}" for name, value in point.items()]
    given += [f"{name} = {value!r}" for name, value in (row.scalars or {}).items()]
    return ", ".join(given)


@pytest.mark.parametrize("row", LOSSES, ids=[row.name for row in LOSSES])
def test_a_loss_at_symbolic_size_is_one_formula(row):
    session = Session()
    session.run(_declare(row.declarations, None) + "\n" + row.definitions)
    value = session.eval(f"grad({row.loss}, {row.wrt})")
    assert is_tensor(value), f"{row.name}: {value}"
    text = session.run(f"grad({row.loss}, {row.wrt})")[-1].text
    assert len(text) < 400, text


@pytest.mark.parametrize("row", LOSSES, ids=[row.name for row in LOSSES])
def test_a_loss_agrees_with_jax_and_the_component_engine(row):
    for seed, (m, n) in enumerate(SIZES):
        sizes = {"m": m, "n": n}
        point = _point(row, sizes, seed)
        tensor = Session()
        tensor.run(_declare(row.declarations, None) + "\n" + row.definitions + f"\ng = grad({row.loss}, {row.wrt})")
        by_formula = as_floats(tensor.eval(f"g at {_at(point, row)}"))
        components = ComponentSession()  # the component engine, the oracle beside JAX
        components.run(_declare(row.declarations, sizes) + "\n" + row.definitions)
        by_components = as_floats(components.eval(f"grad({row.loss}, {row.wrt}) at {_at(point, row)}"))
        names = list(row.declarations)
        by_jax = np.asarray(jax.grad(row.oracle, argnums=names.index(row.wrt))(*point.values()))
        np.testing.assert_allclose(by_formula, by_jax, rtol=1e-9, atol=1e-12, err_msg=f"{row.name} at {sizes}")
        np.testing.assert_allclose(by_components, by_jax, rtol=1e-9, atol=1e-12, err_msg=f"{row.name} at {sizes}")
