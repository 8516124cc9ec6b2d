"""NumPy broadcasting and axes at any rank (section 3b), against JAX in float64 at symbolic and literal sizes.

Broadcasting is one node, broadcast_to, whose adjoint sums over the stretched
axes; every axis-taking builtin takes negative axes, tuples and keepdims=.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import logsumexp

from gradlang import GradlangError, Session

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient
RNG = np.random.default_rng(7)
X0, V0, S0 = RNG.normal(size=(2, 3, 4)), RNG.normal(size=4), RNG.normal(size=(3, 4))
SHAPES = "X: R^(b,t,d)\nv: R^d\nS: R^(m,d)"
DECLARED = {"literal": "b = 2\nt = 3\nd = 4\nm = 3\n" + SHAPES, "symbolic": SHAPES}  # a name bound to 3 is size 3

CASES = [
    ("sum((X - mean(X, 0))^2 * X)", lambda X, v, S: jnp.sum((X - jnp.mean(X, 0)) ** 2 * X)),
    ("sum(sin(X * v)) + sum(S * v)", lambda X, v, S: jnp.sum(jnp.sin(X * v)) + jnp.sum(S * v)),
    ("sum(exp(S - max(S, axis=-1, keepdims=true)))", lambda X, v, S: jnp.sum(jnp.exp(S - jnp.max(S, axis=-1, keepdims=True)))),
    ("sum(softmax(X, -1) * X)", lambda X, v, S: jnp.sum(jax.nn.softmax(X, -1) * X)),
    ("sum(log_softmax(X, axis=1) * X)", lambda X, v, S: jnp.sum(jax.nn.log_softmax(X, axis=1) * X)),
    ("sum(logsumexp(X, axis=(0, 2))^2)", lambda X, v, S: jnp.sum(logsumexp(X, axis=(0, 2)) ** 2)),
    ("sum(norm(X, axis=-1)^3)", lambda X, v, S: jnp.sum(jnp.linalg.norm(X, axis=-1) ** 3)),
    ("sum(min(X, axis=(1,))^2) + sum(max(X, axis=(1, 2))^2)",
     lambda X, v, S: jnp.sum(jnp.min(X, axis=(1,)) ** 2) + jnp.sum(jnp.max(X, axis=(1, 2)) ** 2)),
    ("sum(mean(X, axis=(0, 1), keepdims=true) * X)", lambda X, v, S: jnp.sum(jnp.mean(X, axis=(0, 1), keepdims=True) * X)),
    ("sum(transpose(X, (0, 2, 1)) * exp(transpose(X, (0, 2, 1))))",
     lambda X, v, S: jnp.sum(jnp.transpose(X, (0, 2, 1)) * jnp.exp(jnp.transpose(X, (0, 2, 1))))),
    ("sum(transpose(X)^3 * v[0])", lambda X, v, S: jnp.sum(jnp.transpose(X) ** 3 * v[0])),
    ("sum(expand_dims(X, 1) * X) + sum(squeeze(expand_dims(X, 0), 0)^2)",
     lambda X, v, S: jnp.sum(jnp.expand_dims(X, 1) * X) + jnp.sum(X**2)),
    ("sum(broadcast_to(v, (t, d)) * X)", lambda X, v, S: jnp.sum(jnp.broadcast_to(v, (3, 4)) * X)),
    ("sum(where(X > 0, X, v)^2)", lambda X, v, S: jnp.sum(jnp.where(X > 0, X, v) ** 2)),
    ("sum(X * sum(X, axis=2, keepdims=true)) + sum(S * sum(S, 0))",
     lambda X, v, S: jnp.sum(X * jnp.sum(X, axis=2, keepdims=True)) + jnp.sum(S * jnp.sum(S, 0))),
    ("sum(max(X, sg(X) * v)^2)", lambda X, v, S: jnp.sum(jnp.maximum(X, sg(X) * v) ** 2)),
    ("sum(X[1] * X[0] * v) + sum(X[:, 2]^2 * X[1, 0]) + sum(exp(X[-1])) * sum(X[..., -1])",
     lambda X, v, S: jnp.sum(X[1] * X[0] * v) + jnp.sum(X[:, 2] ** 2 * X[1, 0]) + jnp.sum(jnp.exp(X[-1])) * jnp.sum(X[..., -1])),
]


def _layer_norm(X, v, S):
    centred = X - jnp.mean(X, -1, keepdims=True)
    var = sg(jnp.mean(centred**2, -1, keepdims=True))
    return jnp.sum(jnp.tanh(centred / jnp.sqrt(var + 1e-5) * v))


def _stable_softmax(X, v, S):
    shifted = S - sg(jnp.max(S, axis=-1, keepdims=True))
    return jnp.sum(jnp.exp(shifted) / jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True) * S)


CASES += [
    ("sum(tanh((X - mean(X, -1, keepdims=true)) / sqrt(sg(mean((X - mean(X, -1, keepdims=true))^2, -1, keepdims=true))"
     " + 0.00001) * v))", _layer_norm),
    ("sum(exp(S - sg(max(S, axis=-1, keepdims=true))) / sum(exp(S - sg(max(S, axis=-1, keepdims=true))), axis=-1,"
     " keepdims=true) * S)", _stable_softmax),
]


def _session():
    session = Session()
    for name, array in (("x0", X0), ("v0", V0), ("s0", S0)):
        session.bind(name, array)
    return session


@pytest.mark.parametrize("sizes", sorted(DECLARED))
@pytest.mark.parametrize("source, function", CASES, ids=[c[0][:40] for c in CASES])
def test_gradients_are_jax(sizes, source, function):
    session = _session()
    point = " at X = x0, v = v0, S = s0"
    session.run(f"{DECLARED[sizes]}\nL = {source}")
    for name, argnum in (("X", 0), ("v", 1), ("S", 2)):
        got = np.asarray(session.eval(f"grad(L, {name}){point}"), dtype=float)
        np.testing.assert_allclose(got, jax.grad(function, argnum)(X0, V0, S0), rtol=0, atol=1e-9)
    assert abs(float(session.eval(f"L{point}")) - float(function(X0, V0, S0))) < 1e-9


def test_the_same_formula_at_literal_and_symbolic_sizes():
    texts = [str(Session().eval(f"X: R^({m},{n})\nX - mean(X, 0)")) for m, n in (("m", "n"), ("2", "3"))]
    assert texts == ["X - broadcast_to(sum(X, 0), (m, n))/m", "X - broadcast_to(sum(X, 0), (2, 3))/2"]


@pytest.mark.parametrize("source", ["X - mean(X, 0)", "S - max(S, axis=-1, keepdims=true)", "X * v",
                                    "grad(sum(softmax(X, -1) * X), X)", "transpose(X, (0, 2, 1))",
                                    "X[1] * X[0] + expand_dims(X[..., 2][0], 1)", "grad(sum(X[1]^2), X)"])
def test_plain_reads_back(source):
    session = Session()
    value = session.eval(f"{DECLARED['symbolic']}\n{source}")
    assert str(session.eval(str(value))) == str(value)


@pytest.mark.parametrize("left, right, message", [
    ("R^(m,n)", "R^m", "a m×n matrix and a vector of length m"),
    ("R^(2,3)", "R^2", "a 2×3 matrix and a vector of length 2"),
    ("R^(b,t,d)", "R^(t,3)", "cannot broadcast"),
])
def test_a_clash_names_both_shapes(left, right, message):
    with pytest.raises(GradlangError, match=message) as caught:
        Session().eval(f"A: {left}\nB: {right}\nA + B")
    assert caught.value.kind == "ShapeError"


def test_a_symbolic_size_broadcasts_against_one():
    value = Session().eval("X: R^(b,1,d)\nY: R^(t,1)\nsum(X * Y) at X = x0, Y = y0".replace("x0", str(np.ones((2, 1, 4)).tolist()))
                           .replace("y0", str([[1.0], [2.0], [3.0]])))
    assert float(value) == 2 * 4 * 6


def test_axes_of_lists_and_keepdims():
    assert str(Session().eval("sum([[1, 2], [3, 4]], axis=1, keepdims=true)")) == "Matrix([[3], [7]])"
    assert str(Session().eval("[[1, 2], [3, 4]] - [1, 2]")) == "Matrix([[0, 0], [2, 2]])"
    with pytest.raises(GradlangError, match="no axis 3"):
        Session().eval("X: R^(b,t,d)\nsum(X, axis=3)")
    with pytest.raises(GradlangError, match="same axis twice"):
        Session().eval("X: R^(b,t,d)\nsum(X, axis=(0, -3))")
    with pytest.raises(GradlangError, match="keepdims"):
        Session().eval("X: R^(b,t,d)\nsoftmax(X, -1, keepdims=true)")


def test_slices_of_lists_of_any_rank():
    listed = "x = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]\n"
    assert str(Session().eval(listed + "x[:, 1]")) == "Matrix([[3, 4], [7, 8]])"
    assert str(Session().eval(listed + "x[..., 0]")) == "Matrix([[1, 3], [5, 7]])"
    assert str(Session().eval("M: R^(m,n)\nM[..., 1]")) == "M[:, 1]"


def test_one_class_of_node_at_several_ranks_compiles_each():
    """ones(n) and ones(2, n) in one formula: NumPy's code once spelled the second as the first (its one-argument
    template, cached per class), a vector where a matrix was meant."""
    assert float(Session().eval("x: R^n\nsum(ones(n)*x) + sum(ones(2, n)*x) at x = [1.0, 2.0, 4.0]")) == 21.0


@pytest.mark.parametrize("source", [
    "X - mean(X, 0)", "grad(sum(softmax(X, -1) * X), X)", "sum(X, axis=(0, 2)) + max(X, axis=2)[0]",
    "transpose(X) + 0", "X[0] * X[-1] + squeeze(expand_dims(M, 0), 0)", "broadcast_to(v, (t, d))",
])
def test_every_format_prints_the_nodes_of_axes(source):
    """Pretty drew an axis as a picture inside text, and LaTeX read `_{2}` as the node's third argument."""
    from gradlang.render.pretty import to_text

    result = Session().run(f"{SHAPES}\n{source}")[-1]
    assert result.kind == "value" and result.text and result.latex and to_text(result.value)
    assert "_{2}" not in result.latex.replace("t_{2}", "")  # an axis as text, never a field of the template
