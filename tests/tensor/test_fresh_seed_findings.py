"""What the tensor-engine fuzzer found on the fresh seeds of 2026-11-29 (benchmarks/FUZZ.md), one row each.

Each row is the smallest program that showed the fault, with the numbers it
must give: JAX float64 reading the same program (`jax.lax.stop_gradient` for
the stops, `jnp.max`, which shares a tie equally as section 5 does), at the
symbolic and the literal spelling of the sizes.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gradlang import Session
from gradlang.render import to_plain
from tests.conftest import as_floats

jax.config.update("jax_enable_x64", True)

SYMBOLIC = "m, n: size\nx, y: R^n\nu: R^m\nW: R^(m,n)"
LITERAL = "x, y: R^{n}\nu: R^{m}\nW: R^({m},{n})"


def _eval(declarations: str, source: str):
    session = Session()
    session.run(declarations)
    return as_floats(session.eval(source))


def _both(source: str, m: int, n: int, sized: bool = False) -> list:
    """The statement's numbers at `R^n` and at `R^3`: there the sizes are written as numbers, as the fuzzer's
    judge writes them; `sized` gives the symbolic sizes in the at (where no array gives them)."""
    literal = re.sub(r"\bn\b", str(n), re.sub(r"\bm\b", str(m), source))
    return [_eval(SYMBOLIC, source + (f", m = {m}, n = {n}" if sized else "")), _eval(LITERAL.format(m=m, n=n), literal)]


# seed 17167: a max over a tensor whose entries tie, indexed by a name given at the point (y[k] at k = 0), has no
# components to word its note by; the note took the scalar record of the reduction, which has none (AttributeError)
TIED_MAX = "max(where(outer(u, x) > y[k], y[k], 0))"
TIED_POINT = " at x = [-1.09], y = [-0.64], u = [-0.12, -1.35], k = 0"


def _tied_max(x, y, u):
    return jnp.max(jnp.where(jnp.outer(u, x) > y[0], y[0], 0.0))


@pytest.mark.parametrize("spelling", [0, 1])
def test_a_tied_max_over_an_entry_given_by_an_index_name(spelling):
    point = (np.array([-1.09]), np.array([-0.64]), np.array([-0.12, -1.35]))
    value = _both(TIED_MAX + TIED_POINT, 2, 1)[spelling]
    grad = _both(f"grad({TIED_MAX}, y)" + TIED_POINT, 2, 1)[spelling]
    np.testing.assert_allclose(value, _tied_max(*point), rtol=1e-12)
    np.testing.assert_allclose(grad, jax.grad(_tied_max, argnums=1)(*point), rtol=1e-12)  # 1/2 + 1/2


def test_the_tie_note_of_a_max_over_entries_names_them():
    session = Session()
    session.run(SYMBOLIC)
    (result,) = session.run(TIED_MAX + TIED_POINT)
    (note,) = result.warnings
    assert "has a tie: 2 of its 2 arguments" in note and "[1, 0]" in note


# seed 17289: the same through onehot(k, n), a max of a max
@pytest.mark.parametrize("spelling", [0, 1])
def test_a_max_of_a_onehot_at_an_index_name(spelling):
    source = "grad(max(max(a * onehot(k, n), b)), a) at x = [-0.21, 0.37, -0.59], a = -1.69, b = 1.58, k = 1"
    got = _both(source, 2, 3)[spelling]  # x gives n (the statement does not read it), as the fuzzer's point did
    expected = jax.grad(lambda a: jnp.max(jnp.maximum(a * jax.nn.one_hot(1, 3), 1.58)))(-1.69)
    np.testing.assert_allclose(got, expected, atol=1e-15)


# seed 17134: argmax(b*y) at b = 0: SymPy's 0*y is the scalar 0, and argmax of a scalar was a ShapeError; the
# point's numbers put into argmax first keep its argument's shape (zeros(n))
@pytest.mark.parametrize("spelling", [0, 1])
@pytest.mark.parametrize("b", ["0", "0.0"])
def test_argmax_of_a_product_by_a_zero_given_at_the_point(spelling, b):
    source = f"grad(sum(W, 0)[argmax(b * y)], W) at y = [0, -1, 0], W = [[2, 0, 0]], b = {b}"
    got = _both(source, 1, 3)[spelling]

    def loss(W, y, b):
        return jnp.sum(W, 0)[jnp.argmax(b * y)]
    expected = jax.grad(loss)(jnp.array([[2.0, 0.0, 0.0]]), jnp.array([0.0, -1.0, 0.0]), 0.0)
    np.testing.assert_array_equal(got, expected)


# found beside seed 17134: an index name given at the point made onehot(k, n) - onehot(0, n) the scalar 0
@pytest.mark.parametrize("spelling", [0, 1])
def test_an_index_given_at_the_point_keeps_the_shape(spelling):
    source = "grad(dot(y, softmax(onehot(k, n) - onehot(0, n) + 2*y)), y) at k = 0, y = [0.5, -1.0, 2.0]"
    got = _both(source, 1, 3)[spelling]

    def loss(y):
        return jnp.dot(y, jax.nn.softmax(jax.nn.one_hot(0, 3) - jax.nn.one_hot(0, 3) + 2 * y))
    np.testing.assert_allclose(got, jax.grad(loss)(jnp.array([0.5, -1.0, 2.0])), rtol=1e-12)
    exact = _both("softmax(onehot(k, n) - onehot(0, n)) at k = 0", 1, 3, sized=True)[spelling]
    np.testing.assert_array_equal(exact, [1 / 3] * 3)


# seed 17353: det(inv(A/(1 + exp(A)) + 4 eye(2))) of a 2×2 of symbols (the component engine, which also takes every
# list of scalars) ran into the 120 s limit: SymPy's det expands a 2×2 or 3×3 determinant (dotprodsimp), and the
# inverse's entries are quotients by a determinant of sums
def _det_of_inverse(A):
    return jnp.linalg.det(jnp.linalg.inv(A / (1 + jnp.exp(A)) + 4 * jnp.eye(2)))


def test_det_of_an_inverse_of_components_gives_jax_numbers():
    session = Session()
    session.run("p, q, r, s: R\nM = [[p, q], [r, s]]")
    point = "at p = -0.61, q = -0.08, r = -1.04, s = -1.62"
    value = as_floats(session.eval(f"det(inv(M / (1 + exp(M)) + 4 * eye(2))) {point}"))
    grad = as_floats(session.eval(f"grad(det(inv(M / (1 + exp(M)) + 4 * eye(2))), [p, q, r, s]) {point}"))
    A = jnp.array([[-0.61, -0.08], [-1.04, -1.62]])
    np.testing.assert_allclose(value, _det_of_inverse(A), rtol=1e-12)
    np.testing.assert_allclose(grad, np.ravel(jax.grad(_det_of_inverse)(A)), rtol=1e-10)


def test_a_det_of_symbols_is_not_expanded():
    session = Session()
    session.run("a, b, c, d, e: R")
    (result,) = session.run("det([[a + b, c], [d, e]])")
    assert result.text == "-c*d + e*(a + b)"  # as written, not a*e + b*e - c*d


# seed 17364: argmax of a formula holding log_softmax(W, 1) (whose ones(n) is written with the size) at an exact W
# was a ShapeError, "a 3×3 matrix and a 3×n matrix": the point's arrays went into argmax, its sizes did not
@pytest.mark.parametrize("spelling", [0, 1])
def test_argmax_of_a_formula_written_with_its_sizes_at_an_exact_point(spelling):
    source = ("grad(sin(a / (1 + exp(x)))[argmax(transpose(log_softmax(W, 1)) @ sum(take(W, [0, 0], 1), 1))], x)"
              " at x = [-2, -2, 0], W = [[2, 0, 0], [2, 2, 1], [-1, 0, -1]], a = -1")
    got = _both(source, 3, 3)[spelling]

    def loss(x, W, a):
        pick = jnp.argmax(jnp.transpose(jax.nn.log_softmax(W, 1)) @ jnp.sum(jnp.take(W, jnp.array([0, 0]), 1), 1))
        return jnp.sin(a / (1 + jnp.exp(x)))[pick]
    W = jnp.array([[2.0, 0.0, 0.0], [2.0, 2.0, 1.0], [-1.0, 0.0, -1.0]])
    np.testing.assert_allclose(got, jax.grad(loss)(jnp.array([-2.0, -2.0, 0.0]), W, -1.0), rtol=1e-12)


# mixed-size seed 18534 (fresh seeds of the second run, benchmarks/FUZZ.md): explain of a Jacobian through
# sum(stack([y, sg(x)], 1), 1) at a symbolic n refused, "the derivative of stack([y, x], 1) by x would be a tensor of
# rank three", where the plain statement gives zeros(n, n): the ledger derived the Jacobian without the stop, which
# forward mode cannot write at that size; the entry now names its term (not written) and explain gives the value
STACKED = "jacobian(sum(stack([y, sg(x)], 1), 1) + sg(x) * x, x)"
STACKED_POINT = " at x = [0.2, -0.3, 0.12], y = [1.0, 2.0, -3.0]"


@pytest.mark.parametrize("spelling", [0, 1])
@pytest.mark.parametrize("explained", ["", "explain "])
def test_explain_of_a_jacobian_whose_unstopped_form_needs_rank_three(spelling, explained):
    got = _both(explained + STACKED + STACKED_POINT, 1, 3)[spelling]
    x, y = jnp.array([0.2, -0.3, 0.12]), jnp.array([1.0, 2.0, -3.0])

    def f(x):
        stop = jax.lax.stop_gradient
        return jnp.sum(jnp.stack([y, stop(x)], 1), 1) + stop(x) * x
    np.testing.assert_allclose(got, jax.jacfwd(f)(x), rtol=1e-15)


def test_the_ledger_names_a_removed_term_it_cannot_write_at_a_symbolic_size():
    session = Session()
    session.run(SYMBOLIC)
    (result,) = session.run("explain jacobian(sum(stack([y, sg(x)], 1), 1), x)")
    assert result.text == "zeros(n, n)"
    (entry,) = result.steps[0].ledger
    assert entry.verdict == "blocking"  # without the stop the Jacobian is I: the stop removes all of it
    text = to_plain(result.steps[0])
    assert "adjoint arriving: a tensor of rank three at this size (literal sizes derive it)" in text
    assert "removes r₁, not written: it passes a tensor of rank three" in text and "nan" not in text


def test_json_gives_null_for_a_ledger_term_it_cannot_write_at_a_symbolic_size():
    """The same entry as JSON (known open after seed 18534): its adjoint, removed term and the step's blocked
    part were the string "nan", a number, for a term the words say is not written; now null (the entry's words say
    why)."""
    import json

    from gradlang.render import to_json

    session = Session()
    session.run(SYMBOLIC)
    (result,) = session.run("explain " + STACKED + STACKED_POINT)
    data = to_json(result)
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    assert '"nan"' not in text
    (step,) = data["steps"]
    stops = [s for s in step["stops"] if s["stop"] == "sg(x)"]
    assert any(s["removed"] is None and s["adjoint"] is None for s in stops)
    assert step["blocked"] is None
    x, y = jnp.array([0.2, -0.3, 0.12]), jnp.array([1.0, 2.0, -3.0])

    def f(x):
        stop = jax.lax.stop_gradient
        return jnp.sum(jnp.stack([y, stop(x)], 1), 1) + stop(x) * x
    np.testing.assert_allclose(as_floats(result.value), jax.jacfwd(f)(x), rtol=1e-15)


# explain fuzzer seeds 21001, 21002 (benchmarks/explain_fuzz.py): `explain hessian(b, x)` of a formula that holds
# no tensor, by x: R^n, closed with "✗ differs from hessian": it went to the component rule table, which has no
# size to take x apart by (a scalar 0 against zeros(n, n)); grad and jacobian already took the tensor pass
@pytest.mark.parametrize("point", ["", " at x = [1.5, 0.5, -1.5], b = -0.33"])
@pytest.mark.parametrize("formula", ["b", "2.0", "sg(b)^2"])
def test_explain_of_a_hessian_of_a_formula_without_x_checks_at_a_symbolic_size(formula, point):
    session = Session()
    session.run("n: size\nx: R^n\nb: R")
    (result,) = session.run(f"explain hessian({formula}, x){point}")
    text = to_plain(result)
    assert "✓ equals hessian" in text and "✗" not in text
    if point:
        expected = jax.hessian(lambda x: jnp.sum(x) * 0.0 + 0.5)(jnp.array([1.5, 0.5, -1.5]))
        np.testing.assert_allclose(as_floats(result.value), expected, rtol=0, atol=0)
    else:
        assert result.text == "zeros(n, n)"


# explain fuzzer seeds 21011, 21012: `explain diff(sqrt(1 + (a*mean(A))^2), a, a)` at R^(n,n) closed with
# "✗ differs from diff": the rule table's check gives only the scalar a a number (0.37), so sum(A) and n stayed
# symbols and two equal formulas written apart were compared as expressions; it now evaluates them at random
# sizes and points (explain_sizes, as a tensor derivation's check does)
@pytest.mark.parametrize("point", ["", " at a = -0.2, A = [[1.95, -0.35], [-1.97, 0.14]], u = [-0.44, -1.27], W = [[1.27, -1.74], [-0.37, -1.47]], x = [-1.7, -0.31]"])
@pytest.mark.parametrize("formula, of", [
    ("sqrt(1 + (a * mean(A))^2)", lambda a, A, u, W, x: jnp.sqrt(1 + (a * jnp.mean(A)) ** 2)),
    ('sigmoid(a * a + einsum("i,ij,j->", u, W, x))', lambda a, A, u, W, x: jax.nn.sigmoid(a * a + u @ W @ x)),
])
def test_explain_of_a_second_diff_holding_a_mean_checks_at_random_sizes(formula, of, point):
    session = Session()
    session.run("n: size\nA: R^(n,n)\nu: R^n\nW: R^(n,n)\nx: R^n\na: R")
    (result,) = session.run(f"explain diff({formula}, a, a){point}")
    text = to_plain(result)
    assert "✓ equals diff" in text and "✗" not in text
    if point:
        A = jnp.array([[1.95, -0.35], [-1.97, 0.14]])
        u, W, x = jnp.array([-0.44, -1.27]), jnp.array([[1.27, -1.74], [-0.37, -1.47]]), jnp.array([-1.7, -0.31])
        expected = jax.grad(jax.grad(lambda a: of(a, A, u, W, x)))(-0.2)
        np.testing.assert_allclose(as_floats(result.value), expected, rtol=1e-12)


# explain fuzzer seed 21003: `explain grad(sum(a*ones(n)), a)` (and diff, and a*onehot(0, n)) was an InternalError
# (SymPy's "Can't calculate derivative wrt 0.66"): a formula over a size but no declared tensor took the component
# rule table, which left the sum's derivative an unevaluated Subs that the check's test point could not take; such a
# formula now takes the tensor pass, as one over a declared tensor does (core/explain_views.py _tensor_formula)
@pytest.mark.parametrize("call, of", [
    ("grad(sum(a * ones(n)), a)", lambda a: jnp.sum(a * jnp.ones(3))),
    ("diff(sum(a * onehot(0, n)), a)", lambda a: jnp.sum(a * jax.nn.one_hot(0, 3))),
    ("diff(sum(a^3 * ones(n)), a, a)", lambda a: jax.grad(lambda b: jnp.sum(b ** 3 * jnp.ones(3)))(a)),
    ("grad(logsumexp(take(max(a * onehot(0, n), a * ones(n)), [0, 0], 0)), a)",
     lambda a: jax.nn.logsumexp(jnp.take(jnp.maximum(a * jax.nn.one_hot(0, 3), a * jnp.ones(3)), jnp.array([0, 0]), 0))),
])
def test_explain_of_a_formula_over_a_size_alone_by_a_scalar(call, of):
    session = Session()
    session.run("n: size\na: R")
    (result,) = session.run(f"explain {call} at a = 1.5, n = 3")
    assert "✓ equals" in to_plain(result) and "✗" not in to_plain(result)
    np.testing.assert_allclose(as_floats(result.value), jax.grad(of)(1.5), rtol=1e-12)
    (plain,) = session.run(f"explain {call}")
    assert "✓ equals" in to_plain(plain)
