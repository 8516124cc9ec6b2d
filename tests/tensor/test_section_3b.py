"""LANGUAGE.md section 3b, claim by claim, at rank 3: each gradient against JAX in float64, once with the sizes
`b, t, d` written as names and once as the numbers 2, 3, 4 (`R^(b,t,d)` and `R^(2,3,4)`), to 1e-12.

A claim is a loss over the declared tensors and the JAX function it means;
every variable it uses is differentiated. The printing claims (plain reads
back; pretty and LaTeX in index notation with the sums shown) and the shape
claims (a Jacobian of rank r + s, stack of matrices, ranges on any axis) follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest

from gradlang import GradlangError, Session

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient

SIZES = {"b": 2, "t": 3, "d": 4}
DECLARED = {"X": ("b", "t", "d"), "Y": ("b", "t", "d"), "W": ("d", "d"), "v": ("d",), "A": ("t", "d"), "B": ("t", "d")}


@dataclass(frozen=True)
class Claim:
    name: str
    source: str
    oracle: object  # a function of the arrays, by name


def _float32(X):
    """X rounded to float32 with derivative exactly 1, as 3b says: JAX's own transpose of convert_element_type also
    rounds the cotangent to float32 (a relative 1e-8), which a derivative of 1 does not."""
    return X + sg(X.astype(jnp.float32).astype(jnp.float64) - X)


def _take(X, idx, axis):
    return jnp.take(X, jnp.array(idx), axis=axis)


CLAIMS = [
    Claim("ranges on axis 1 (X[:, 0:2])", "sum(tanh(X[:, 0:2]) * Y[:, 1:3])",
          lambda X, Y, **_: jnp.sum(jnp.tanh(X[:, 0:2]) * Y[:, 1:3])),
    Claim("ranges on axis 0 and by sizes", "sum(X[0:1] * Y[b - 1:b]) + sum(X[:, 1:t]^2)",
          lambda X, Y, **_: jnp.sum(X[0:1] * Y[1:2]) + jnp.sum(X[:, 1:3] ** 2)),
    Claim("ranges on the last axis (X[..., a:b], X[:, :, a:b])", "sum(sin(X[..., 1:3]) * sg(Y)[:, :, 0:2])",
          lambda X, Y, **_: jnp.sum(jnp.sin(X[..., 1:3]) * sg(Y)[:, :, 0:2])),
    Claim("stack of matrices, axis 0 and -1", "sum(exp(stack([A, sg(B) * A], 0))) + sum(stack([A, B], -1)^3)",
          lambda A, B, **_: jnp.sum(jnp.exp(jnp.stack([A, sg(B) * A], 0))) + jnp.sum(jnp.stack([A, B], -1) ** 3)),
    Claim("stack of rank 3 on axis 2", "sum(tanh(stack([X, Y * X], 2)))",
          lambda X, Y, **_: jnp.sum(jnp.tanh(jnp.stack([X, Y * X], 2)))),
    Claim("concat of rank 3 on axes 1 and -1", "sum(concat([X, Y], 1)^2 @ W) + sum(cos(concat([X, sg(Y)], -1)))",
          lambda X, Y, W, **_: jnp.sum(jnp.concatenate([X, Y], 1) ** 2 @ W)
          + jnp.sum(jnp.cos(jnp.concatenate([X, sg(Y)], -1)))),
    Claim("keepdims", "sum(X * exp(-sum(X^2, axis=-1, keepdims=true))) + sum(max(X, axis=(0, 2), keepdims=true) * Y)",
          lambda X, Y, **_: jnp.sum(X * jnp.exp(-jnp.sum(X ** 2, axis=-1, keepdims=True)))
          + jnp.sum(jnp.max(X, axis=(0, 2), keepdims=True) * Y)),
    Claim("norm and logsumexp by an axis", "sum(norm(X, axis=-1)) + sum(logsumexp(X, axis=1) * v)",
          lambda X, v, **_: jnp.sum(jnp.linalg.norm(X, axis=-1)) + jnp.sum(jax.nn.logsumexp(X, axis=1) * v)),
    Claim("broadcast_to", "sum(broadcast_to(v, (b, t, d)) * X^2)",
          lambda v, X, **_: jnp.sum(jnp.broadcast_to(v, (2, 3, 4)) * X ** 2)),
    Claim("broadcast_to of a scalar (its entries counted)", "sum(broadcast_to(sum(v)^2, (b, t, d))) + sum(X)",
          lambda v, X, **_: jnp.sum(jnp.broadcast_to(jnp.sum(v) ** 2, (2, 3, 4))) + jnp.sum(X)),
    Claim("squeeze and expand_dims", "sum(squeeze(expand_dims(X, 1) * expand_dims(A, 0), 1)^2)",
          lambda X, A, **_: jnp.sum(jnp.squeeze(jnp.expand_dims(X, 1) * jnp.expand_dims(A, 0), 1) ** 2)),
    Claim("reshape merging and splitting an axis", "sum(reshape(reshape(X, (b*t, d)) @ W, (b, t, d)) * Y)",
          lambda X, W, Y, **_: jnp.sum(jnp.reshape(jnp.reshape(X, (6, 4)) @ W, (2, 3, 4)) * Y)),
    Claim("batched @ and transpose with a permutation", "sum(softmax(X @ transpose(Y, (0, 2, 1)), -1) * (X @ transpose(X, (0, 2, 1))))",
          lambda X, Y, **_: jnp.sum(jax.nn.softmax(X @ jnp.transpose(Y, (0, 2, 1)), -1) * (X @ jnp.transpose(X, (0, 2, 1))))),
    Claim("einsum with ... and a repeated letter", 'sum(einsum("...ij,jk->...ik", X, W)^2) + einsum("bij,bij->", X, Y)',
          lambda X, W, Y, **_: jnp.sum(jnp.einsum("...ij,jk->...ik", X, W) ** 2) + jnp.einsum("bij,bij->", X, Y)),
    Claim("einsum with a letter repeated in one operand (a diagonal)", 'sum(einsum("ii->i", W)^2 * v)',
          lambda W, v, **_: jnp.sum(jnp.einsum("ii->i", W) ** 2 * v)),
    Claim("transpose without a permutation reverses the axes", "sum(sin(transpose(X)) * transpose(Y))",
          lambda X, Y, **_: jnp.sum(jnp.sin(jnp.transpose(X)) * jnp.transpose(Y))),
    Claim("take at rank 3", "sum(take(X, [2, 0, 2], 1)^2 * v)",
          lambda X, v, **_: jnp.sum(_take(X, [2, 0, 2], 1) ** 2 * v)),
    Claim("onehot of an index tensor at rank 3", "sum(onehot(argmax(sg(X), axis=-1), d) * log_softmax(X, -1))",
          lambda X, **_: jnp.sum(jax.nn.one_hot(jnp.argmax(X, axis=-1), 4) * jax.nn.log_softmax(X, -1))),
    Claim("float32 at rank 3 (derivative 1)", "sum(float32(X) * X^2)",
          lambda X, **_: jnp.sum(_float32(X) * X ** 2)),
    Claim("all/any in where at rank 3", "sum(where(X > 0, X^2, -X)) + where(all(X > -10), 1, 0) * sum(X * Y) + "
          "where(any(X > 10), 1, 0) * sum(X)",
          lambda X, Y, **_: jnp.sum(jnp.where(X > 0, X ** 2, -X)) + jnp.where(jnp.all(X > -10), 1, 0) * jnp.sum(X * Y)
          + jnp.where(jnp.any(X > 10), 1, 0) * jnp.sum(X)),
]


def _declarations(literal: bool) -> str:
    lines = ["b = 2", "t = 3", "d = 4"] if literal else ["b, t, d: size"]
    for name, shape in DECLARED.items():
        sizes = [str(SIZES[s]) if literal else s for s in shape]
        lines.append(f"{name}: R^{sizes[0]}" if len(sizes) == 1 else f"{name}: R^({', '.join(sizes)})")
    return "\n".join(lines)


def _point(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=tuple(SIZES[s] for s in shape)) for name, shape in DECLARED.items()}


def _spelled(array) -> str:
    return repr(np.asarray(array).tolist())


def _session(literal: bool) -> Session:
    session = Session()
    session.run(_declarations(literal))
    return session


def _used(source: str) -> list:
    return [name for name in DECLARED if re.search(rf"\b{name}\b", source)]


def _given(point: dict, names: list) -> str:
    return ", ".join(f"{name} = {_spelled(point[name])}" for name in names)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.name)
def test_the_gradient_agrees_with_jax_at_symbolic_and_literal_sizes(claim):
    point = _point(1)
    names = _used(claim.source)
    for literal in (False, True):
        session = _session(literal)
        for name in names:
            value = session.eval(f"grad({claim.source}, {name}) at {_given(point, names)}")
            want = jax.grad(lambda a: claim.oracle(**{**point, name: a}))(point[name])
            np.testing.assert_allclose(np.asarray(value, dtype=float), np.asarray(want), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{claim.name}: by {name}, literal={literal}")


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.name)
def test_the_value_agrees_with_jax_at_symbolic_and_literal_sizes(claim):
    point = _point(2)
    names = _used(claim.source)
    for literal in (False, True):
        value = _session(literal).eval(f"({claim.source}) at {_given(point, names)}")
        np.testing.assert_allclose(float(value), float(claim.oracle(**point)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.name)
def test_the_printed_gradient_reads_back(claim):
    """plain is gradlang source: the printed gradient at a symbolic size, read again, is the same formula."""
    session = _session(False)
    for name in _used(claim.source):
        text = session.run(f"grad({claim.source}, {name})")[-1].text
        if "\n" in text:  # shared parts named `where`: the last line is the formula over them
            continue
        assert session.run(text)[-1].text == text, (claim.name, name)


def test_grad_by_a_list_of_tensors_at_rank_3_in_one_pass():
    point = _point(3)
    source = "sum(tanh(X @ W + v) * Y[:, 0:2][:, 0:1])"
    oracle = lambda X, W, v, Y: jnp.sum(jnp.tanh(X @ W + v) * Y[:, 0:2][:, 0:1])  # noqa: E731
    want = jax.grad(oracle, argnums=(0, 1, 2))(point["X"], point["W"], point["v"], point["Y"])
    for literal in (False, True):
        got = _session(literal).eval(f"grad({source}, [X, W, v]) at {_given(point, ['X', 'W', 'v', 'Y'])}")
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("source, oracle, wrt", [
    ("X @ W", lambda X, W, **_: X @ W, "X"),
    ("X @ W", lambda X, W, **_: X @ W, "W"),
    ("tanh(A) * B", lambda A, B, **_: jnp.tanh(A) * B, "A"),
    ("v @ W", lambda v, W, **_: v @ W, "W"),
])
def test_a_jacobian_of_rank_r_by_rank_s_has_rank_r_plus_s(source, oracle, wrt):
    point = _point(4)
    names = _used(source)
    got = np.asarray(_session(True).eval(f"jacobian({source}, {wrt}) at {_given(point, names)}"), dtype=float)
    want = jax.jacobian(lambda a: oracle(**{**point, wrt: a}))(point[wrt])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12, atol=1e-12)


def test_a_jacobian_of_rank_above_2_at_a_symbolic_size_says_what_it_needs():
    with pytest.raises(GradlangError, match="rank 4.*declare the sizes as numbers") as caught:
        _session(False).run("jacobian(A * B, A)")
    assert caught.value.span is not None


@pytest.mark.parametrize("source, want", [
    ("norm([3, 4], axis=0)", 5.0),
    ("norm([[3, 4], [6, 8]], axis=1)", [5.0, 10.0]),
    ("norm([[[3, 4]]], axis=-1, keepdims=true)", [[[5.0]]]),
    ("argmax([[1, 5], [3, 4]], axis=1)", [1, 1]),
    ("mean([[1, 5], [3, 4]], axis=(0, 1))", 3.25),
    ("sum([[[1, 2], [3, 4]]], axis=2)", [[3, 7]]),
    ("max([[[1, 2], [3, 4]]], axis=(0, 2))", [2, 4]),
    ("onehot([1, 0], 3)", [[0, 1, 0], [1, 0, 0]]),
    ("onehot([[2], [0]], 3)", [[[0, 0, 1]], [[1, 0, 0]]]),
])
def test_a_list_of_numbers_takes_every_axis_keyword_as_a_declared_tensor(source, want):
    """norm([3, 4], axis=0) said 'norm takes 1 argument, got 2' though norm reads axis= (section 3b); onehot of a
    list of whole numbers said it needs a whole number, spelling the list as SymPy's Matrix([[…]])."""
    np.testing.assert_allclose(np.asarray(Session().eval(source), dtype=float), want)


@pytest.mark.parametrize("source", ["X[:, 0:2]", "X[..., 1:3]", "X[:, :, 0:2]", "X[:, :, 1]", "X[1:2]",
                                    "stack([A, B], 0)", "stack([A, B], -1)", "concat([X, Y], 1)", "concat([X, Y], -1)",
                                    "stack([X, Y], 2)"])
def test_every_size_gives_the_entries_numpy_gives(source):
    point = _point(5)
    names = _used(source)
    spelled = source.replace("stack(", "np.stack(").replace("concat(", "np.concatenate(")
    want = eval(spelled, {"np": np}, point)  # the test's own text, never a user's
    for literal in (False, True):
        got = np.asarray(_session(literal).eval(f"{source} at {_given(point, names)}"), dtype=float)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_printing_beyond_rank_2_is_index_notation_with_the_sums_shown():
    from gradlang.render import to_latex
    from gradlang.render.pretty import to_pretty

    session = _session(False)
    value = session.eval("grad(sum((X @ W)^2), W)")
    plain = session.run("grad(sum((X @ W)^2), W)")[-1].text
    assert plain.startswith("2*einsum(") and session.run(plain)[-1].text == plain
    assert "Σ_{a,i}" in to_pretty(value)
    assert r"\sum_{a,i}" in to_latex(value)


def test_range_adjoint_is_zeros_around_the_range_at_every_size():
    for literal in (False, True):
        text = _session(literal).run("grad(sum(X[..., 1:3]^2), X)")[-1].text
        size = "d - 3" if not literal else "1"
        assert text.startswith("concat([zeros(") and text.endswith("], 2)") and size in text


def test_a_range_empty_at_the_point_gives_jax_gradient():
    """X[:, 1:t] at t = 1 is empty: its adjoint's components were a ZeroDivisionError (an InternalError)."""
    point = np.random.default_rng(6).normal(size=(2, 1, 4))
    want = jax.grad(lambda X: jnp.sum(jnp.tanh(X[:, 1:]) ** 2) + jnp.sum(X ** 2))(point)
    got = _session(False).eval(f"grad(sum(tanh(X[:, 1:t])^2) + sum(X^2), X) at X = {_spelled(point)}")
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want), rtol=1e-12, atol=1e-12)


def test_onehot_of_a_list_that_is_no_index_tensor_says_so_in_gradlangs_words():
    with pytest.raises(GradlangError, match="a whole number .* or a tensor of them, not a vector of length 2") as caught:
        Session().run("onehot([0.5, 0], 3)")
    assert "Matrix" not in caught.value.message and caught.value.span is not None


@pytest.mark.parametrize("source, printed", [
    ("grad(sum(stack([A, B], 0)^3), A)", "3*A^2"),
    ("grad(sum(tanh(stack([A, B], 0))), B)", "1 - tanh(B)^2"),
    ("grad(sum(squeeze(X[:, 0:1], 1)^2), X)", "concat([2*X[:, 0:1], zeros(b, t - 1, d)], 1)"),
])
def test_an_adjoint_meeting_its_own_node_cancels(source, printed):
    """stack's pick meets the stack, expand_dims meets the squeeze: the gradient prints as a teacher writes it."""
    assert _session(False).run(source)[-1].text == printed
