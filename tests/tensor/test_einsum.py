"""einsum, reshape, take and batched @ (section 3b): one node each, gradients against JAX in float64.

Each row is a loss over declared tensors; its gradient by one of them is
taken at symbolic sizes (one formula) and at literal sizes, and both are
compared at a random point with `jax.grad` of the same loss written in
jax.numpy, to 1e-9. The plain text of every value reads back as the same value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from gradlang import GradlangError, Session
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient
IDX = np.array([2, 0, 2, 1])


@dataclass(frozen=True)
class Row:
    name: str
    shapes: dict  # name -> shape of size names (declaration order)
    loss: str
    wrt: str
    oracle: Callable  # JAX, of the arrays in declaration order


ROWS = [
    Row("matvec", {"A": ("m", "n"), "x": ("n",)}, 'sum(einsum("ij,j->i", A, x)^2)', "A",
        lambda A, x: jnp.sum(jnp.einsum("ij,j->i", A, x) ** 2)),
    Row("matvec by x", {"A": ("m", "n"), "x": ("n",)}, 'sum(tanh(einsum("ij,j", A, x)))', "x",
        lambda A, x: jnp.sum(jnp.tanh(A @ x))),
    Row("batch gradient", {"D": ("b", "m"), "X": ("b", "n")}, 'sum(einsum("bi,bj->ij", D, X)^2)', "X",
        lambda D, X: jnp.sum(jnp.einsum("bi,bj->ij", D, X) ** 2)),
    Row("implicit transpose", {"A": ("m", "n"), "B": ("m", "n")}, 'sum(einsum("ji", A) @ B)', "A",
        lambda A, B: jnp.sum(A.T @ B)),
    Row("trace", {"A": ("n", "n")}, 'einsum("ii", exp(A))', "A", lambda A: jnp.trace(jnp.exp(A))),
    Row("diagonal", {"A": ("n", "n"), "x": ("n",)}, 'sum(einsum("ii->i", A * A) * x)', "A",
        lambda A, x: jnp.sum(jnp.einsum("ii->i", A * A) * x)),
    Row("row sums", {"A": ("m", "n")}, 'sum(exp(einsum("ij->i", A)))', "A",
        lambda A: jnp.sum(jnp.exp(jnp.sum(A, 1)))),
    Row("three operands", {"A": ("m", "n"), "B": ("n", "m"), "x": ("m",)}, 'einsum("ij,jk,k->", A, sg(B), x)^2', "A",
        lambda A, B, x: jnp.einsum("ij,jk,k->", A, sg(B), x) ** 2),
    Row("rank 3 inside", {"A": ("m", "n"), "B": ("n", "m")}, 'einsum("ijk,jl->", reshape(A, (m, n, 1))^2, B)', "A",
        lambda A, B: jnp.einsum("ijk,jl->", A.reshape(A.shape + (1,)) ** 2, B)),
    Row("reshape", {"A": ("m", "n"), "x": ("n",)}, "sum(sin(reshape(A, (m*n,))) * reshape(outer(ones(m), x), (m*n,)))",
        "A", lambda A, x: jnp.sum(jnp.sin(A.reshape(-1)) * jnp.outer(jnp.ones(A.shape[0]), x).reshape(-1))),
    Row("reshape inferred", {"A": ("m", "n")}, "sum(reshape(A^3, (n, -1)) @ ones(m))", "A",
        lambda A: jnp.sum((A ** 3).reshape(A.shape[1], -1) @ jnp.ones(A.shape[0]))),
    Row("take", {"x": ("n",)}, "sum(take(x, [2, 0, 2, 1], 0)^3)", "x", lambda x: jnp.sum(jnp.take(x, IDX, 0) ** 3)),
    Row("take rows", {"A": ("n", "m")}, "sum(take(A, [2, 0, 2, 1], 0)^2 @ ones(m))", "A",
        lambda A: jnp.sum(jnp.take(A, IDX, 0) ** 2)),
    Row("take columns", {"A": ("m", "n")}, 'einsum("ijk->", exp(take(A, [[2, 0], [2, 1]], 1)))', "A",
        lambda A: jnp.sum(jnp.exp(jnp.take(A, IDX.reshape(2, 2), 1)))),
    Row("batched matmul", {"A": ("m", "n")}, 'einsum("bij->", reshape(A, (m, n, 1)) @ reshape(A^2, (m, 1, n)))', "A",
        lambda A: jnp.sum(A.reshape(A.shape + (1,)) @ (A ** 2).reshape(A.shape[0], 1, A.shape[1]))),
    Row("permuted", {"A": ("m", "n")}, 'sum(einsum("ijk->ik", transpose(reshape(A, (m, n, 1)), (2, 0, 1)))^2)', "A",
        lambda A: jnp.sum(jnp.einsum("ijk->ik", jnp.transpose(A.reshape(A.shape + (1,)), (2, 0, 1))) ** 2)),
]
RANK_3 = [
    Row("batched attention, a stopped key", {"Q": ("b", "t", "d"), "K": ("b", "t", "d"), "V": ("b", "t", "d")},
        "sum((softmax(Q @ transpose(sg(K), (0, 2, 1)) / sqrt(d), -1) @ V)^2)", "Q",
        lambda Q, K, V: jnp.sum((jax.nn.softmax(Q @ jnp.transpose(sg(K), (0, 2, 1)) / jnp.sqrt(Q.shape[2]), -1) @ V) ** 2)),
    Row("batched attention by the values", {"Q": ("b", "t", "d"), "K": ("b", "t", "d"), "V": ("b", "t", "d")},
        "sum(sin(softmax(Q @ transpose(K, (0, 2, 1)) / sqrt(d), -1) @ V))", "V",
        lambda Q, K, V: jnp.sum(jnp.sin(jax.nn.softmax(Q @ jnp.transpose(K, (0, 2, 1)) / jnp.sqrt(Q.shape[2]), -1) @ V))),
    Row("batched attention by the keys", {"Q": ("b", "t", "d"), "K": ("b", "t", "d"), "V": ("b", "t", "d")},
        "sum(tanh(_softmax(Q @ transpose(K, (0, 2, 1))) @ sg(V)))", "K",  # softmax by einsum, the stop by hand
        lambda Q, K, V: jnp.sum(jnp.tanh(jax.nn.softmax(Q @ jnp.transpose(K, (0, 2, 1)), -1) @ sg(V)))),
    Row("einsum of rank 3", {"X": ("b", "t", "d"), "W": ("d", "m")}, 'sum(tanh(einsum("btd,dm->btm", X, W))^2)', "W",
        lambda X, W: jnp.sum(jnp.tanh(jnp.einsum("btd,dm->btm", X, W)) ** 2)),
    Row("einsum with an ellipsis", {"X": ("b", "t", "d"), "W": ("d", "m")}, 'sum(exp(einsum("...d,dm", X, W)))', "X",
        lambda X, W: jnp.sum(jnp.exp(jnp.einsum("...d,dm", X, W)))),
    Row("batched diagonal", {"X": ("b", "t", "t")}, 'sum(einsum("bii->bi", X)^3)', "X",
        lambda X: jnp.sum(jnp.einsum("bii->bi", X) ** 3)),
    Row("broadcast batch", {"X": ("b", "t", "d"), "W": ("d", "m")}, "sum((X @ reshape(W, (1, d, m)))^2)", "W",
        lambda X, W: jnp.sum((X @ W.reshape(1, *W.shape)) ** 2)),
    Row("split an axis", {"X": ("b", "t", "d")}, "sum(exp(reshape(X, (b, t*d))) @ ones(t*d))", "X",
        lambda X: jnp.sum(jnp.exp(X.reshape(X.shape[0], -1)))),
    Row("take of rank 3", {"X": ("b", "t", "d")}, "sum(take(X, [[2, 0], [2, 1]], 1)^2)", "X",
        lambda X: jnp.sum(jnp.take(X, IDX.reshape(2, 2), 1) ** 2)),
]
# softmax along the last axis of a rank-3 tensor, by einsum (shifted by a stopped maximum, as jax.nn.softmax)
SOFTMAX = '_softmax(S) = exp(S - sg(max(S))) / einsum("bt,s->bts", einsum("bts->bt", exp(S - sg(max(S)))), ones(t))\n'
SIZES = [{"m": 2, "n": 3, "b": 2, "t": 3, "d": 4}, {"m": 3, "n": 3, "b": 3, "t": 3, "d": 2}]


def _declared(row: Row, sizes: dict | None) -> str:
    def size(s):
        return str(sizes[s]) if sizes else s

    bound = "".join(f"{s} = {n}\n" for s, n in sizes.items()) if sizes else ""  # reshape's sizes as numbers
    return bound + SOFTMAX + "\n".join(f"{name}: R^({', '.join(size(s) for s in shape)})" if len(shape) > 1
                     else f"{name}: R^{size(shape[0])}" for name, shape in row.shapes.items())


def _point(row: Row, sizes: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=tuple(sizes[s] for s in shape)) * 0.5 for name, shape in row.shapes.items()}


def _gradient(row: Row, sizes: dict | None, point: dict) -> np.ndarray:
    session = Session()
    session.run(_declared(row, sizes) + f"\ng = grad({row.loss}, {row.wrt})")
    for name, array in point.items():
        session.bind(f"{name.lower()}_value", array)
    given = ", ".join(f"{name} = {name.lower()}_value" for name in point)
    return as_floats(session.eval(f"g at {given}"))


@pytest.mark.parametrize("row", ROWS + RANK_3, ids=lambda r: r.name)
def test_gradients_agree_with_jax_at_symbolic_and_literal_sizes(row):
    for seed, sizes in enumerate(SIZES):
        point = _point(row, sizes, seed)
        want = np.asarray(jax.grad(row.oracle, argnums=list(row.shapes).index(row.wrt))(*point.values()))
        for declared in (None, sizes):
            np.testing.assert_allclose(_gradient(row, declared, point), want, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{row.name} declared at {declared}")


@pytest.mark.parametrize("row", ROWS + RANK_3, ids=lambda r: r.name)
def test_the_plain_gradient_reads_back(row):
    session = Session()
    session.run(_declared(row, None))
    result = session.run(f"grad({row.loss}, {row.wrt})")[-1]
    again = Session()
    again.run(_declared(row, None))
    assert again.run(result.text)[-1].value == result.value, result.text  # shared parts named, as `h = …` lines


def test_an_einsum_is_bounded_by_its_multiply_adds(monkeypatch):
    """einsum's work is counted as np.einsum contracts it, pair by pair: "ij,jk,k->" at 20 is 20³ + 20, not 20⁴."""
    from gradlang import limits

    program = 'A: R^(n,n); x: R^n; einsum("ij,jk,k->", A, A, x) at A = a, x = v'
    session = Session()
    a, v = np.arange(400.0).reshape(20, 20) / 400, np.arange(20.0) / 20
    session.bind("a", a)
    session.bind("v", v)
    np.testing.assert_allclose(float(session.run(program)[-1].value), a.sum(0) @ a @ v, rtol=1e-12)
    monkeypatch.setattr(limits, "MAX_NUMERIC_PRODUCTS", 20 ** 3 + 20 - 1)
    with pytest.raises(GradlangError, match=r"8e\+03 multiply-adds in @, einsum, inv and det, above the limit"):
        session.run(program)
    monkeypatch.setattr(limits, "MAX_NUMERIC_PRODUCTS", 20 ** 3 + 20)
    np.testing.assert_allclose(float(session.run(program)[-1].value), a.sum(0) @ a @ v, rtol=1e-12)


@pytest.mark.parametrize("declared", ["x: R^3; idx: R^4", "x: R^n; idx: R^k"])
def test_take_by_a_declared_index_tensor_is_given_its_integers_by_the_point(declared):
    """The index is data: its numbers come with the point (exact or float), at literal sizes as at symbolic ones;
    a repeated index receives each slice (np.add.at), and an index that is no integer is a ValueError."""
    session = Session()
    session.run(declared)
    point = "x = [1.0, 2.0, 3.0], idx = [2.0, 0.0, 2.0, 1.0]"
    want = np.asarray(jax.grad(lambda x: jnp.sum(jnp.take(x, IDX, 0) ** 3))(
        np.array([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(as_floats(session.eval(f"grad(sum(take(x, idx, 0)^3), x) at {point}")), want, rtol=1e-12)
    assert as_floats(session.eval("take(x, idx, 0) at x = [1, 2, 3], idx = [2, 0, 2, 1]")).tolist() == [3, 1, 3, 2]
    with pytest.raises(GradlangError, match="take's indices must be integers"):
        session.run("take(x, idx, 0) at x = [1.0, 2.0, 3.0], idx = [2.5, 0.0, 1.0, 1.0]")


def test_an_einsum_by_components_is_bounded_by_its_products():
    """At literal sizes its components are SymPy products, as a matrix product's: 300×300 by 300×300 would build
    54 million of them (minutes), so it is a LimitError that says to give numbers; its float numbers are NumPy's."""
    session = Session()
    session.run("A: R^(300,300)")
    with pytest.raises(GradlangError, match="this einsum would build 54000000 products of entries"):
        session.run('components(einsum("ij,jk->ik", A, A))')
    session.bind("a", np.eye(300) * 0.5)
    assert float(session.eval('einsum("ij,jk->", A, A) at A = a')) == pytest.approx(75.0, rel=1e-12)


def test_batched_matmul_is_numpys_matmul():
    """(b,m,n) @ (b,n,k) is (b,m,k); batch axes broadcast (1 against b, or missing); a vector takes part without
    its axis; the contracted axis never broadcasts (NumPy's matmul refuses 4 against 1, where einsum would not)."""
    session = Session()
    session.run("X: R^(2,3,4); Y: R^(2,4,5); Z: R^(1,4,5); M: R^(4,5); v: R^4; w: R^3")
    rng = np.random.default_rng(7)
    arrays = {"X": rng.normal(size=(2, 3, 4)), "Y": rng.normal(size=(2, 4, 5)), "Z": rng.normal(size=(1, 4, 5)),
              "M": rng.normal(size=(4, 5)), "v": rng.normal(size=4), "w": rng.normal(size=3)}
    for name, array in arrays.items():
        session.bind(f"{name.lower()}_", array)
    point = ", ".join(f"{name} = {name.lower()}_" for name in arrays)
    a = arrays
    products = {"X @ Y": a["X"] @ a["Y"], "X @ Z": a["X"] @ a["Z"], "X @ M": a["X"] @ a["M"], "X @ v": a["X"] @ a["v"],
                "w @ X": a["w"] @ a["X"],
                "transpose(Y, (0, 2, 1)) @ transpose(X, (0, 2, 1))": a["Y"].transpose(0, 2, 1) @ a["X"].transpose(0, 2, 1)}
    for product, want in products.items():
        np.testing.assert_allclose(as_floats(session.eval(f"({product}) at {point}")), want, rtol=1e-12, err_msg=product)
    for refused in ("X @ reshape(v, (1, 4))", "X @ X", "Y @ v"):
        with pytest.raises(GradlangError, match="@ cannot multiply"):
            session.run(refused)
