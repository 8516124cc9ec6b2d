"""A formula's numbers do not depend on how its sizes are spelled (core/at.py, docs/decisions.md).

Each program is run with literal sizes (`x: R^3`, `W: R^(2,3)`) and with
symbolic ones (`x: R^n`, `W: R^(m,n)`) at the same float point: the printed
digits are the same, and they are JAX's in float64 to 1e-12 relative.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import logsumexp

from gradlang import Session
from tests.conftest import as_floats

jax.config.update("jax_enable_x64", True)

X = np.array([0.3, -1.2, 0.8])
Y = np.array([1.5, 0.25, -0.5])
W = np.array([[0.2, -0.4, 0.9], [1.1, 0.5, -0.7]])
A = np.array([[2.0, 0.3, -0.1], [0.2, 1.5, 0.4], [-0.3, 0.1, 1.8]])
B1 = np.array([0.1, -0.2])
W2 = np.array([0.7, -0.3])
SIZES = {"literal": {"m": "2", "n": "3"}, "symbolic": {"m": "m", "n": "n"}}
DECLARED = "x: R^{n}\ny: R^{n}\nW: R^({m},{n})\nA: R^({n},{n})\nb1: R^{m}\nw2: R^{m}\n"
POINT = {"x": X, "y": Y, "W": W, "A": A, "b1": B1, "w2": W2}


def _layer_norm(x, y):
    centred = x - jnp.mean(x)
    return jnp.sum(centred / jnp.sqrt(jnp.mean(centred**2) + 1e-5) * y)


def _mlp(W, b1, w2, x):
    hidden = jnp.tanh(jax.lax.stop_gradient(W) @ x + b1)
    return (jnp.tanh(jnp.dot(w2, hidden)) - 0.3) ** 2 + jnp.dot(jax.lax.stop_gradient(w2), b1)


CASES = [
    ("grad(-log(softmax(W @ x)[1]), W)", jax.grad(lambda W: -jax.nn.log_softmax(W @ X)[1])(W)),
    ("grad(logdet(A), A)", jax.grad(lambda A: jnp.linalg.slogdet(A)[1])(A)),
    ("logdet(A) + sum(inv(A) @ x)", jnp.linalg.slogdet(A)[1] + jnp.sum(jnp.linalg.inv(A) @ X)),
    ("grad((tanh(dot(w2, tanh(sg(W) @ x + b1))) - 0.3)^2 + dot(sg(w2), b1), b1)", jax.grad(_mlp, 1)(W, B1, W2, X)),
    ("grad((tanh(dot(w2, tanh(sg(W) @ x + b1))) - 0.3)^2 + dot(sg(w2), b1), x)", jax.grad(_mlp, 3)(W, B1, W2, X)),
    ("grad(dot(onehot(argmax(y), {n}), x^2) + dot(onehot(argmin(y), {n}), exp(x)), x)",
     jax.grad(lambda x: x[jnp.argmax(Y)] ** 2 + jnp.exp(x[jnp.argmin(Y)]))(X)),
    ("grad(logsumexp(x) - x[k] * x[0], x)", jax.grad(lambda x: logsumexp(x) - x[1] * x[0])(X)),
    ("grad(sum(diag(A)^2) + dot(diag(A), x), A)", jax.grad(lambda A: jnp.sum(jnp.diag(A) ** 2) + jnp.diag(A) @ X)(A)),
    ("hessian(logsumexp(x) + sum(x^3) * sum(y), x)",
     jax.hessian(lambda x: logsumexp(x) + jnp.sum(x**3) * jnp.sum(Y))(X)),
    ("jacobian(softmax(W @ x), x)", jax.jacobian(lambda x: jax.nn.softmax(W @ x))(X)),
]


def _listed(array) -> str:
    return str(np.asarray(array, dtype=float).tolist())


def _run(spelling: str, source: str):
    """The printed text and the value of `source` at the float point, sizes spelled as `spelling` says."""
    sizes = SIZES[spelling]
    given = ", ".join(f"{name} = {_listed(value)}" for name, value in POINT.items())
    program = DECLARED.format(**sizes) + f"({source.format(**sizes)}) at {given}, k = 1"
    result = Session().run(program)[-1]
    return result.text, result.value


@pytest.mark.parametrize("source, expected", CASES, ids=[c[0][:40] for c in CASES])
def test_the_same_formula_prints_the_same_digits_at_r3_and_at_rn(source, expected):
    literal, value = _run("literal", source)
    symbolic, _ = _run("symbolic", source)
    assert literal == symbolic
    got, wanted = as_floats(value), np.asarray(expected, dtype=float)
    assert got.shape == wanted.shape
    assert np.max(np.abs(got - wanted)) <= 1e-12 * max(np.max(np.abs(wanted)), 1e-300)


def test_a_mean_folds_a_literal_size_into_the_formula_yet_gives_jax_s_numbers():
    """mean(x) at R^3 is sum(x)/3, and SymPy folds the 3 into the formula's constants (1e-5 beside it makes
    0.3333333333333333*sum(x), and an exact eps 100*sqrt(30)*…): another formula than at R^n, so its
    last digit may differ (len(x) is 3 as well). Both are JAX's to 1e-12: the `at` of one formula is one."""
    source = "grad(sum((x - mean(x)) / sqrt(mean((x - mean(x))^2) + 1e-5) * y), x)"
    for spelling in SIZES:
        _, value = _run(spelling, source)
        np.testing.assert_allclose(as_floats(value), jax.grad(_layer_norm)(X, Y), rtol=1e-12)


def test_exact_numbers_stay_exact_at_either_spelling():
    """Exact in, exact out: an exact point takes the formula's components (expr/tensor/lower.py), then
    SymPy's substitution, at R^3 as at R^n."""
    program = "x: R^{}\ngrad(sum(x^3) / 2 + x[0] * x[2], x) at x = [1, 1/2, 3]"
    assert Session().run(program.format("3"))[-1].text == Session().run(program.format("n"))[-1].text == "[9/2, 3/8, 29/2]"


@pytest.mark.parametrize("size", ["2", "n"])
def test_a_component_given_after_its_tensor_takes_its_last_value_at_a_float_point(size):
    """x = [1.0, 2.0], x[0] = 7.0: the last value of x[0] is 7.0 by NumPy too (it would read x alone), at
    R^2 as at R^n (where a component binding was refused)."""
    session = Session()
    session.run(f"x: R^{size}\nW: R^(2,{size})")
    assert session.run("x at x = [1.0, 2.0], x[0] = 7.0")[-1].text == "[7.0, 2.0]"
    assert session.run("W at W = [[1, 2], [3, 4]], W[1, 0] = 9")[-1].text == "[[1, 2], [9, 4]]"


def test_a_component_of_a_name_bound_to_an_array_is_a_placed_error():
    """m[0] = 1 where m holds a NumPy array (Session.bind): a ValueError at the binding, never a TypeError
    from hashing the array while looking for a tensor given earlier in the at."""
    from gradlang import GradlangError

    session = Session()
    session.bind("m", np.array([1.0, 2.0]))
    session.run("x: R^2")
    with pytest.raises(GradlangError) as caught:
        session.run("x at x = [1.0, 2.0], m[0] = 1")
    assert caught.value.kind == "ValueError" and "not a symbol" in caught.value.message
