"""Losses written twice, with literal and with symbolic sizes: the same formula, the same numbers (#36).

`W: R^(2,3)` is a size as `W: R^(m,n)` is. Each row is a loss of the kind a
teacher or a paper writes (every row of test_losses.py, and the kinds it
lacks: VQ-VAE's nearest code by onehot(argmin), hard Gumbel-softmax, a free
index k, log_softmax, row-wise softmax over a batch, InfoNCE, layer norm,
diag, hessian, jacobian, a gradient by a list, `blocked`). Declared at two
literal sizes, with every size name in the program written as its number:

- its printed plain form is the symbolic-size form with the size names
  written as their numbers, or else a formula free of components: no list
  longer than the program wrote, no entry `W[0, 1]` the program did not pick
  (an all-numbers value, such as the zero matrix `blocked` proves, prints as
  its numbers: render/shown.py's display choice);
- its numbers at a random point equal the symbolic-size program's and JAX
  float64's (`jax.lax.stop_gradient` for the stops) to 1e-12 relative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from gradlang import Session
from gradlang.expr.tensor.listed import ListAt
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient

from tests.tensor import test_losses as symbolic_table  # noqa: E402 - after JAX is known to be there

SIZES = [(2, 3), (4, 5)]
MN, NM, N, M, NN = ("m", "n"), ("n", "m"), ("n",), ("m",), ("n", "n")


@dataclass(frozen=True)
class Row:
    name: str
    declarations: dict  # name -> shape, sizes named m and n
    statement: str  # what is printed and taken at the point
    oracle: Callable  # JAX: the statement's value, a function of the declared arrays in declaration order
    definitions: str = ""
    scalars: dict = None  # scalar name -> value, given in the at


def _from_symbolic_table(loss) -> Row:
    """A row of test_losses.py: its loss's gradient, JAX's jax.grad of its oracle."""
    position = list(loss.declarations).index(loss.wrt)
    return Row(loss.name, loss.declarations, f"grad({loss.loss}, {loss.wrt})",
               jax.grad(loss.oracle, argnums=position), loss.definitions, loss.scalars)


def _grad(function, *positions):
    return jax.grad(function, argnums=positions if len(positions) > 1 else positions[0])


def _code(C, z):
    """VQ-VAE's nearest code: the row of the codebook C closest to z, picked by onehot(argmin)."""
    distances = jnp.sum((C - jnp.outer(jnp.ones(C.shape[0]), z)) ** 2, axis=1)
    return C.T @ jax.nn.one_hot(jnp.argmin(distances), C.shape[0])


def _gumbel(y):
    """Hard Gumbel-softmax's straight-through sample: the one-hot argmax forward, the softmax's gradient."""
    soft = jax.nn.softmax(y)
    return jax.nn.one_hot(jnp.argmax(y), y.shape[0]) - sg(soft) + soft


def _layer_norm(h, stopped):
    stop = sg if stopped else (lambda v: v)
    mean = jnp.mean(h)
    return (h - stop(mean)) / stop(jnp.sqrt(jnp.mean((h - mean) ** 2) + 0.001))


def _blocked(stopped, position):
    """blocked(e, x): the gradient of e without its stops minus the gradient of e; `stopped(stop)` is e with
    its stops written `stop`."""
    def gradient(stop):
        return jax.grad(stopped(stop), position)
    return lambda *args: gradient(lambda v: v)(*args) - gradient(sg)(*args)


def _free_index_nll(stop):
    return lambda W, x: jax.nn.logsumexp(W @ x) - (stop(W) @ x)[1]


def _gumbel_loss(stop):
    def loss(W, x, g, q):
        soft = jax.nn.softmax((W @ x + g) / 0.5)
        hard = jax.nn.one_hot(jnp.argmax((W @ x + g) / 0.5), q.shape[0]) - stop(soft) + soft
        return jnp.sum((hard - q) ** 2)
    return loss


def _mlp(W1, W2, W3, x, y):
    return jnp.sum((W3 @ jnp.tanh(W2 @ jnp.tanh(W1 @ x)) - y) ** 2)


def _mlp_stopped(W1, W2, W3, x, y):
    return jnp.sum((W3 @ jax.nn.relu(W2 @ sg(jnp.tanh(W1 @ x))) - y) ** 2) + jnp.sum(jnp.tanh(W1 @ x) ** 2)


def _two_layer_stop(stop):
    return lambda A, B, x, y: jnp.sum((B @ stop(jnp.tanh(A @ x)) - y) ** 2) + jnp.sum(jnp.tanh(A @ x))


def _stable_nll(stop):
    def nll(W, x):
        z = W @ x
        e = jnp.exp(z - stop(jnp.max(z)))
        return -jnp.log(e[1] / jnp.sum(e))
    return nll


CODE = "code(z) = transpose(C) @ onehot(argmin(sum((C - outer(ones(n), z))^2, 1)), n)"
GUMBEL = "hard(y) = onehot(argmax(y), m) - sg(softmax(y)) + softmax(y)"
LAYER_NORM = ("ln(h) = (h - mean(h)) / sqrt(mean((h - mean(h))^2) + 0.001)\n"
              "ln_sg(h) = (h - sg(mean(h))) / sg(sqrt(mean((h - mean(h))^2) + 0.001))")
STABLE = symbolic_table.STABLE
TD = {"r": 0.5, "gamma": 0.9}

MORE = [
    Row("VQ-VAE commitment by the encoder, onehot(argmin)", {"W": MN, "C": NM, "x": N},
        "grad(sum((sg(code(W @ x)) - W @ x)^2) + sum((code(sg(W @ x)) - sg(W @ x))^2)/4, W)",
        _grad(lambda W, C, x: jnp.sum((sg(_code(C, W @ x)) - W @ x) ** 2)
              + jnp.sum((_code(C, sg(W @ x)) - sg(W @ x)) ** 2) / 4, 0), CODE),
    Row("VQ-VAE codebook loss by the codes", {"W": MN, "C": NM, "x": N},
        "grad(sum((code(sg(W @ x)) - sg(W @ x))^2), C)",
        _grad(lambda W, C, x: jnp.sum((_code(C, sg(W @ x)) - sg(W @ x)) ** 2), 1), CODE),
    Row("VQ-VAE straight-through decoder", {"W": MN, "C": NM, "x": N, "y": N},
        "grad(sum((C @ (W @ x + sg(code(W @ x) - W @ x)) - y)^2), W)",
        _grad(lambda W, C, x, y: jnp.sum((C @ (W @ x + sg(_code(C, W @ x) - W @ x)) - y) ** 2), 0), CODE),
    Row("hard Gumbel-softmax, straight through", {"W": MN, "x": N, "g": M, "q": M},
        "grad(sum((hard((W @ x + g)/tau) - q)^2), W)",
        _grad(lambda W, x, g, q: jnp.sum((_gumbel((W @ x + g) / 0.5) - q) ** 2), 0), GUMBEL, {"tau": 0.5}),
    Row("log_softmax, soft labels", {"W": MN, "x": N, "q": M}, "grad(-dot(q, log_softmax(W @ x)), W)",
        _grad(lambda W, x, q: -jnp.dot(q, jax.nn.log_softmax(W @ x)), 0)),
    Row("log_softmax, one entry", {"W": MN, "x": N, "b": M}, "grad(-log_softmax(W @ x + b)[1], W)",
        _grad(lambda W, x, b: -jax.nn.log_softmax(W @ x + b)[1], 0)),
    Row("row-wise softmax over a batch", {"X": MN, "V": NN, "Y": MN},
        "grad(-sum(Y * log(softmax(X @ V, 1))), V)",
        _grad(lambda X, V, Y: -jnp.sum(Y * jnp.log(jax.nn.softmax(X @ V, axis=1))), 1)),
    Row("row-wise softmax of the batch itself", {"X": MN, "Y": MN}, "grad(sum(softmax(X, 1) * Y), X)",
        _grad(lambda X, Y: jnp.sum(jax.nn.softmax(X, axis=1) * Y), 0)),
    Row("InfoNCE with stopped keys", {"W": MN, "X": MN, "x": N},
        "grad(-log(softmax(sg(X @ transpose(W)) @ (W @ x) / tau)[0]), W)",
        _grad(lambda W, X, x: -jnp.log(jax.nn.softmax(sg(X @ W.T) @ (W @ x) / 0.5)[0]), 0), scalars={"tau": 0.5}),
    Row("layer norm", {"W": MN, "x": N, "y": M}, "grad(sum((ln(W @ x) - y)^2), W)",
        _grad(lambda W, x, y: jnp.sum((_layer_norm(W @ x, False) - y) ** 2), 0), LAYER_NORM),
    Row("layer norm with stopped statistics and a gain", {"W": MN, "x": N, "y": M, "a": M},
        "grad(sum((a * ln_sg(W @ x) - y)^2), W)",
        _grad(lambda W, x, y, a: jnp.sum((a * _layer_norm(W @ x, True) - y) ** 2), 0), LAYER_NORM),
    Row("free index k, logsumexp form", {"W": MN, "x": N}, "grad(logsumexp(W @ x) - dot(onehot(k, m), W @ x), W)",
        _grad(lambda W, x: jax.nn.logsumexp(W @ x) - (W @ x)[1], 0), scalars={"k": 1}),
    Row("free index k, softmax entry", {"W": MN, "x": N}, "grad(-log(softmax(W @ x)[k]), W)",
        _grad(lambda W, x: -jnp.log(jax.nn.softmax(W @ x)[1]), 0), scalars={"k": 1}),
    Row("free index k, one-hot NLL", {"W": MN, "x": N}, "grad(-sum(onehot(k, m) * log(softmax(W @ x))), x)",
        _grad(lambda W, x: -jnp.log(jax.nn.softmax(W @ x)[1]), 1), scalars={"k": 1}),
    Row("TD target from a stopped network, free action k", {"Q": MN, "V": MN, "s": N, "s2": N},
        "grad((r + gamma*max(sg(V) @ s2) - (Q @ s)[k])^2, Q)",
        _grad(lambda Q, V, s, s2: (0.5 + 0.9 * jnp.max(sg(V) @ s2) - (Q @ s)[1]) ** 2, 0),
        scalars={**TD, "k": 1}),
    Row("smooth L1 TD error", {"Q": MN, "s": N, "s2": N}, "grad(huber(r + gamma*sg(max(Q @ s2)) - (Q @ s)[1], 1), Q)",
        _grad(lambda Q, s, s2: symbolic_table._huber(0.5 + 0.9 * sg(jnp.max(Q @ s2)) - (Q @ s)[1], 1.0), 0),
        scalars=TD),
    Row("diag of a matrix product", {"A": NN, "B": NN}, "grad(sum(diag(A @ B)^2), A)",
        _grad(lambda A, B: jnp.sum(jnp.diag(A @ B) ** 2), 0)),
    Row("diag of a vector", {"A": NN, "v": N}, "grad(sum(diag(v) @ A @ v), v)",
        _grad(lambda A, v: jnp.sum(jnp.diag(v) @ A @ v), 1)),
    Row("hessian of softmax cross-entropy", {"W": MN, "x": N}, "hessian(-log(softmax(W @ x)[1]), x)",
        jax.hessian(lambda W, x: -jnp.log(jax.nn.softmax(W @ x)[1]), 1)),
    Row("hessian of logsumexp with a free index", {"W": MN, "x": N},
        "hessian(logsumexp(W @ x) - dot(onehot(k, m), W @ x), x)",
        jax.hessian(lambda W, x: jax.nn.logsumexp(W @ x) - (W @ x)[1], 1), scalars={"k": 1}),
    Row("jacobian of softmax", {"x": N}, "jacobian(softmax(x), x)", jax.jacrev(jax.nn.softmax)),
    Row("jacobian of a softmax layer", {"W": MN, "x": N}, "jacobian(softmax(W @ x), x)",
        jax.jacrev(lambda W, x: jax.nn.softmax(W @ x), 1)),
    Row("3-layer MLP by a list", {"W1": NN, "W2": NN, "W3": MN, "x": N, "y": M},
        "grad(sum((W3 @ tanh(W2 @ tanh(W1 @ x)) - y)^2), [W1, W2])", _grad(_mlp, 0, 1)),
    Row("3-layer MLP with a stop, by a list", {"W1": NN, "W2": NN, "W3": MN, "x": N, "y": M},
        "grad(sum((W3 @ relu(W2 @ sg(tanh(W1 @ x))) - y)^2) + sum(tanh(W1 @ x)^2), [W1, W2, W3])",
        _grad(_mlp_stopped, 0, 1, 2)),
    Row("blocked by a stop in the middle of an MLP", {"A": NN, "B": MN, "x": N, "y": M},
        "blocked(sum((B @ sg(tanh(A @ x)) - y)^2) + sum(tanh(A @ x)), A)", _blocked(_two_layer_stop, 0)),
    Row("blocked by the stable softmax's stop: nothing", {"W": MN, "x": N}, "blocked(-log(stable(W @ x)[1]), W)",
        _blocked(_stable_nll, 0), STABLE),
    Row("blocked under a free index", {"W": MN, "x": N},
        "blocked(logsumexp(W @ x) - dot(onehot(k, m), sg(W) @ x), W)", _blocked(_free_index_nll, 0),
        scalars={"k": 1}),
    Row("blocked through a hard Gumbel sample", {"W": MN, "x": N, "g": M, "q": M},
        "blocked(sum((hard((W @ x + g)/tau) - q)^2), W)", _blocked(_gumbel_loss, 0), GUMBEL, {"tau": 0.5}),
    Row("logdet of a regularised Gram matrix", {"X": MN}, "grad(logdet(transpose(X) @ X + lam*eye(n)), X)",
        _grad(lambda X: jnp.linalg.slogdet(X.T @ X + 0.3 * jnp.eye(X.shape[1]))[1], 0), scalars={"lam": 0.3}),
    Row("ridge's inverse", {"X": MN, "v": N}, "grad(sum(inv(eye(n) + transpose(X) @ X) @ v), X)",
        _grad(lambda X, v: jnp.sum(jnp.linalg.inv(jnp.eye(X.shape[1]) + X.T @ X) @ v), 0)),
    Row("batch centred on its stopped mean", {"X": MN}, "grad(sum((X - outer(ones(m), sg(mean(X, 0))))^2), X)",
        _grad(lambda X: jnp.sum((X - jnp.outer(jnp.ones(X.shape[0]), sg(jnp.mean(X, axis=0)))) ** 2), 0)),
    Row("a vector times ones", {"x": N, "y": N}, "grad(sum((x * ones(n) - sg(y))^2), x)",
        _grad(lambda x, y: jnp.sum((x * jnp.ones(x.shape[0]) - sg(y)) ** 2), 0)),
    Row("SimSiam, symmetric", {"P": NN, "Z": NN, "x": N},
        "grad(-cosine(P @ x, sg(Z @ x))/2 - cosine(Z @ x, sg(P @ x))/2, P)",
        _grad(lambda P, Z, x: -symbolic_table._cosine(P @ x, sg(Z @ x)) / 2
              - symbolic_table._cosine(Z @ x, sg(P @ x)) / 2, 0)),
]

ROWS = [_from_symbolic_table(loss) for loss in symbolic_table.LOSSES] + MORE
_SIZE_NAME = re.compile(r"\b([mn])\b")


def _spelled(text: str, sizes: dict) -> str:
    """The text with every size name written as its number."""
    return _SIZE_NAME.sub(lambda match: str(sizes[match.group(1)]), text)


def _program(row: Row, sizes: dict | None) -> str:
    """The declarations and definitions, at symbolic sizes (`m, n: size`) or with the sizes as numbers."""
    def shape(names):
        dims = [str(sizes[d]) if sizes else d for d in names]
        return f"R^{dims[0]}" if len(dims) == 1 else f"R^({', '.join(dims)})"

    head = "" if sizes else "m, n: size\n"
    text = head + "\n".join(f"{name}: {shape(names)}" for name, names in row.declarations.items())
    definitions = _spelled(row.definitions, sizes) if sizes else row.definitions
    return text + "\n" + definitions


def _point(row: Row, sizes: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=tuple(sizes[d] for d in names)) for name, names in row.declarations.items()}


def _at(point: dict, row: Row) -> str:
    given = [f"{name} = {value.tolist()!r}" for name, value in point.items()]
    return ", ".join(given + [f"{name} = {value!r}" for name, value in (row.scalars or {}).items()])


def _session(program: str) -> Session:
    session = Session()
    session.run(program)
    return session


def _numbers(value) -> list:
    """A value at a point as float arrays (one per entry of a gradient by a list)."""
    if isinstance(value, ListAt):
        return [as_floats(entry) for entry in value]
    return [as_floats(value)]


def _close(got: list, expected: list, message: str) -> None:
    assert len(got) == len(expected), message
    for g, e in zip(got, expected):
        e = np.asarray(e, dtype=float)
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12 * scale, err_msg=message)


_LIST = re.compile(r"(?<![\w\])])\[")  # a list opens where no name, call or index precedes
_PICK = re.compile(r"\b([A-Za-z_]\w*)\[([^\[\]]*)\]")


def _longest_list(text: str) -> int:
    """The most entries of any list written in the text ([[1, 0], [0, 1]] counts its 2 rows and 2 columns)."""
    longest = 0
    for start in (match.start() for match in _LIST.finditer(text)):
        depth, count = 0, 1
        for char in text[start:]:
            depth += (char in "([") - (char in ")]")
            count += char == "," and depth == 1
            if depth == 0:
                break
        longest = max(longest, count)
    return longest


def _components_free(shown: str, written: str, declared: dict) -> list:
    """What in a printed form is a component the program did not write: a list longer than any it wrote,
    an entry of a declared tensor it did not pick."""
    faults = []
    if _longest_list(shown) > _longest_list(written):
        faults.append(f"a list of {_longest_list(shown)} entries")
    picked = {m.group(0) for m in _PICK.finditer(written) if m.group(1) in declared}
    faults += [m.group(0) for m in _PICK.finditer(shown) if m.group(1) in declared and m.group(0) not in picked]
    return faults


_NUMBERS_ONLY = re.compile(r"^[\[\]\d\s,.\-e+]*$")


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_a_loss_prints_its_formula_at_literal_sizes(row):
    symbolic = _session(_program(row, None)).run(row.statement)[-1].text
    for m, n in SIZES:
        sizes = {"m": m, "n": n}
        statement = _spelled(row.statement, sizes)
        literal = _session(_program(row, sizes)).run(statement)[-1].text
        if literal == _spelled(symbolic, sizes) or _NUMBERS_ONLY.match(literal):
            continue
        written = _program(row, sizes) + "\n" + statement
        faults = _components_free(literal, written, row.declarations)
        assert not faults, f"{row.name} at {sizes}: {faults}\n  at R^n: {symbolic}\n  at {sizes}: {literal}"


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_a_loss_gives_the_same_numbers_at_literal_and_symbolic_sizes_and_jax_s(row):
    symbolic = _session(_program(row, None))
    for seed, (m, n) in enumerate(SIZES):
        sizes = {"m": m, "n": n}
        point = _point(row, sizes, seed)
        literal = _session(_program(row, sizes))
        by_number = _numbers(literal.eval(f"{_spelled(row.statement, sizes)} at {_at(point, row)}"))
        by_name = _numbers(symbolic.eval(f"{row.statement} at {_at(point, row)}"))
        oracle = row.oracle(*point.values())
        by_jax = list(oracle) if isinstance(oracle, tuple) else [oracle]
        message = f"{row.name} at {sizes}"
        _close(by_number, by_name, message + ": literal against symbolic")
        _close(by_number, by_jax, message + ": literal against JAX")


def test_the_printed_check_finds_components():
    """The check is narrow: a list or an entry the program did not write is caught, a formula passes."""
    declared = {"W": MN, "x": N}
    assert _components_free("outer(W @ x, x)", "W: R^(2, 3)\ngrad(sum((W @ x)^2), W)", declared) == []
    assert _components_free("x*[1, 1, 1]", "x: R^3\nx*ones(3)", declared) == ["a list of 3 entries"]
    assert _components_free("[[1, 0], [0, 1]] @ x", "x: R^2", declared) == ["a list of 2 entries"]
    assert _components_free("[W[0, 1], x[0]]", "W: R^(2, 3)\nx[0]", declared) == ["a list of 2 entries", "W[0, 1]"]
    assert _components_free("softmax(W @ x)[1]", "grad(-log(softmax(W @ x)[1]), W)", declared) == []
