"""Tensors of any rank (section 3b): declarations, nested lists, elementwise arithmetic, grad, at and printing.

`X: R^(b,t,d)` is one tensor symbol of rank 3, as `W: R^(m,n)` is of rank 2;
the same formula, derivative and numbers at `R^(2,3,4)` and `R^(b,t,d)`,
checked against JAX in float64.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy
from jax.scipy.special import logsumexp

from gradlang import GradlangError, Session

jax.config.update("jax_enable_x64", True)

X0 = np.random.default_rng(3).normal(size=(2, 3, 4))
DECLARED = {"literal": "X: R^(2,3,4)", "symbolic": "X: R^(b,t,d)"}


def _run(source: str, **arrays):
    session = Session()
    for name, array in arrays.items():
        session.bind(name, array)
    return session.eval(source)


def _loss(X):
    return (jnp.sum(jnp.exp(X) * jnp.tanh(X)) + logsumexp(X) + jnp.linalg.norm(X) + jnp.mean(X**2)
            + 2 * jnp.max(jax.lax.stop_gradient(X) * X))


LOSS = "L = sum(exp(X)*tanh(X)) + logsumexp(X) + norm(X) + mean(X^2) + 2*max(sg(X)*X)"


@pytest.mark.parametrize("sizes", sorted(DECLARED))
def test_grad_of_rank_three_is_jax_at_every_size(sizes):
    value = _run(f"{DECLARED[sizes]}\n{LOSS}\ngrad(L, X) at X = x0", x0=X0)
    assert value.shape == (2, 3, 4)
    np.testing.assert_allclose(value, jax.grad(_loss)(X0), rtol=0, atol=1e-9)
    loss = _run(f"{DECLARED[sizes]}\n{LOSS}\nL at X = x0", x0=X0)
    assert abs(float(loss) - float(_loss(X0))) < 1e-9


def test_same_formula_at_literal_and_symbolic_sizes():
    loss = LOSS.replace(" + mean(X^2)", "")  # a mean divides by 24 at one and by b*t*d at the other
    texts = [str(_run(f"{DECLARED[s]}\n{loss}\ngrad(L, X)")) for s in ("literal", "symbolic")]
    assert texts[0] == texts[1]


def test_point_written_as_a_nested_list():
    written = str(X0.tolist())
    value = _run(f"X: R^(b,t,d)\n{LOSS}\ngrad(L, X) at X = {written}")
    np.testing.assert_allclose(np.asarray(value, dtype=float), jax.grad(_loss)(X0), rtol=0, atol=1e-9)


def test_lists_nest_to_any_depth():
    value = _run("[[[1, 2], [3, 4]]]")
    assert value.shape == (1, 2, 2) and list(value._array) == [1, 2, 3, 4]
    assert _run("[[[[1]], [[2]]]]").shape == (1, 2, 1, 1)
    assert _run("x = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]\nx[1]") == sympy.Matrix([[5, 6], [7, 8]])
    assert _run("x = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]\nx[1, 0, 1]") == 6
    with pytest.raises(GradlangError, match="one shape"):
        _run("[[[1, 2]], [3, 4]]")


def test_a_list_beside_a_rank_three_tensor_is_a_constant_of_the_formula():
    program = "X: R^(2,2,2)\nc = [[[1, 2], [3, 4]], [[0, 1], [1, 0]]]\ng = grad(sum(c*X*X), X)\n"
    assert str(_run(program + "g")) == "2*X*[[[1, 2], [3, 4]], [[0, 1], [1, 0]]]"
    point = np.arange(8.0).reshape(2, 2, 2)
    expected = 2 * point * np.array([[[1, 2], [3, 4]], [[0, 1], [1, 0]]])
    np.testing.assert_allclose(np.asarray(_run(program + "g at X = p", p=point), dtype=float), expected)


def test_components_of_a_rank_three_tensor():
    value = _run("X: R^(2,1,2)\ncomponents(grad(sum(sin(X)), X))")
    assert str(value) == "[[[cos(X[0, 0, 0]), cos(X[0, 0, 1])]], [[cos(X[1, 0, 0]), cos(X[1, 0, 1])]]]"
    assert str(_run("X: R^(2,1,2)\nX[1, 0, 1]")) == "X[1, 0, 1]"


def test_printing_reads_back_and_draws_blocks():
    session = Session()
    (result,) = session.run("X: R^(2,2,2)\nX*[[[1, 2], [3, 4]], [[0, 1], [1, 0]]]")[-1:]
    again = Session().eval(f"X: R^(2,2,2)\n{result.text}")
    assert str(again) == result.text
    assert result.latex.count(r"\begin{bmatrix}") == 3  # the blocks of axis 0, each a matrix
    numbers = Session().run("x = [[[1, 2], [3, 4]], [[0, 1], [1, 0]]]\nx")[-1]
    assert numbers.text == "[[[1, 2], [3, 4]], [[0, 1], [1, 0]]]"


def test_shapes_are_named_as_tensors():
    with pytest.raises(GradlangError, match="2×3×4 tensor"):
        _run("X: R^(2,3,4)\nY: R^(2,3,5)\nX + Y")
    with pytest.raises(GradlangError, match="at most 3 indices"):
        _run("X: R^(b,t,d)\nX[0, 1, 2, 3]")


def test_ones_and_zeros_of_any_rank():
    value = _run("X: R^(b,t,d)\nsum(X*ones(b, t, d)) at X = x0", x0=X0)
    assert abs(float(value) - X0.sum()) < 1e-12


def test_argmax_along_the_only_axis_of_a_vector_is_argmax():
    """argmax(x, 0) of x: R^n was refused (literal sizes only); NumPy's axis 0 of a vector is the whole of it."""
    assert float(_run("x: R^n\nargmax(x, 0) at x = [1.0, 5.0, 2.0]")) == 1.0
