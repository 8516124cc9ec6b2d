"""explain jacobian(grad(L, x), x): a Hessian written that way has the hessian's ledger and check.

The Jacobian's own (first-order) ledger took the stops as they stand in the gradient's value: for
sum(x^3)*sg(sum(x)) it said the stop removes 3*outer(x^2, ones(3)) from jacobian(3*x^2*sg(sum(x)), x),
missing the term the stop had already removed from the gradient (its derivative, 3*outer(ones(3), x^2)).
Now each stop of L's term is what it removes from the second derivative (explain/ledger/higher.py), titled
as written; every term is read back by gradlang and compared with JAX float64 (jax.jacobian of jax.grad,
each stop the identity or lax.stop_gradient), at R^3 and at a random size for R^n.
"""

from __future__ import annotations


import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.render import to_json, to_latex, to_plain

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(29112026)
ID, SG = (lambda v: v), jax.lax.stop_gradient

CASES = [  # (L, JAX's L(x, stops), stops in the ledger's order)
    ("sum(x^3)*sg(sum(x))", lambda x, s: jnp.sum(x ** 3) * s[0](jnp.sum(x)), 1),
    ("sum(x^3)*sg(sum(x)) + sum(sg(x)*x^2)", lambda x, s: jnp.sum(x ** 3) * s[0](jnp.sum(x)) + jnp.sum(s[1](x) * x ** 2), 2),
    ("log(sum(exp(x)))*sg(dot(x, x)) + sum(sg(softmax(x))*x^2)",
     lambda x, s: jax.nn.logsumexp(x) * s[0](jnp.dot(x, x)) + jnp.sum(s[1](jax.nn.softmax(x)) * x ** 2), 2),
]


def _result(source: str):
    return [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _jacobian_lines(text: str) -> list[str]:
    """The plain lines of the jacobian's derivation (the grad's, before it, aside), terms joined again."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("# jacobian(grad("))
    joined: list[str] = []
    for line in lines[start:]:
        if line.startswith("#       ") and joined:
            joined[-1] += " " + line[1:].strip()
        else:
            joined.append(line)
    return joined


def _terms(result) -> list[str]:
    """The removed terms in the ledger's order, from JSON (in the user's names; a long one the plain ledger
    only names): a neutral or irrelevant entry's 0."""
    stops = to_json(result)["steps"][-1]["stops"]
    return [stop.get("removed", "0") if stop["verdict"] in ("blocking", "inventing") else "0" for stop in stops]


def _at(size: str, text: str, x: np.ndarray) -> np.ndarray:
    results = Session().run(f"x: R^{size}\nvalue__ = {text}\nvalue__ at x = {x.tolist()}")
    return np.asarray(results[-1].value, dtype=float)


def _telescoped(f, count: int, x: np.ndarray) -> tuple:
    takes = [np.asarray(jax.jacobian(jax.grad(lambda v: f(v, [ID] * k + [SG] * (count - k))))(jnp.asarray(x)))
             for k in range(count + 1)]
    return [takes[k + 1] - takes[k] for k in range(count)], takes[0], takes[-1]


@pytest.mark.parametrize("loss, f, count", CASES)
@pytest.mark.parametrize("size", ["3", "n"])
def test_each_term_is_what_the_stop_removes_from_the_hessian(loss, f, count, size):
    result = _result(f"x: R^{size}\nexplain jacobian(grad({loss}, x), x)")
    lines = _jacobian_lines(to_plain(result))
    assert "tensor forward pass over the gradient" in lines[0] + lines[1]
    assert any(line.startswith("# ✓ equals jacobian") for line in lines)
    assert any("true = kept + removed: hessian(unstopped(L), x)" in line for line in lines)
    printed = _terms(result)
    assert len(printed) == count, lines
    n = 3 if size == "3" else int(RNG.integers(2, 6))
    x = RNG.uniform(-1.2, 1.2, n)
    expected, kept, true = _telescoped(f, count, x)
    for term, value in zip(printed, expected):
        np.testing.assert_allclose(_at(size, term, x), value, rtol=1e-9, atol=1e-9, err_msg=term)
    ours = _at(size, f"jacobian(grad({loss}, x), x)", x)
    np.testing.assert_allclose(ours, kept, rtol=1e-9, atol=1e-9)
    total = ours + sum(_at(size, term, x) for term in printed)
    np.testing.assert_allclose(total, true, rtol=1e-9, atol=1e-9)


def test_it_reads_as_the_hessian_written_jacobian_of_grad():
    """The same lines and ledger as hessian(L, x), titled as written, in every format."""
    loss = CASES[1][0]
    written = _result(f"x: R^n\nexplain jacobian(grad({loss}, x), x)")
    hessian = _result(f"x: R^n\nexplain hessian({loss}, x)")
    ours = _jacobian_lines(to_plain(written))
    theirs = to_plain(hessian).splitlines()
    assert ours[0].startswith("# jacobian(grad(sg(sum(x))*sum(x^3) + sum(x^2*sg(x)), x), x):")
    assert ours[1:-2] == theirs[1:-2]
    assert ours[-2].startswith("# ✓ equals jacobian") and theirs[-2].startswith("# ✓ equals hessian")
    step = to_json(written)["steps"][-1]
    assert step["call"].startswith("jacobian(grad(") and [s["order"] for s in step["stops"]] == [2, 2]
    assert r"Check: equals \texttt{jacobian}" in to_latex(written)


def test_a_jacobian_of_another_formula_keeps_its_own_ledger():
    """jacobian(v, x) of a vector formula written as such (no grad) keeps the first-order Jacobian ledger."""
    text = to_plain(_result("x: R^3\nexplain jacobian(3*x^2*sg(sum(x)), x)"))
    assert "removes r₁ = 3*outer(x^2, ones(3))" in text and "jacobian(unstopped(L), x)" in text


def test_a_selected_entry_selects_from_the_hessian():
    """jacobian(grad(L, x), x)[0, 1]: the hessian's pass and ledger, then the entry; its value JAX's."""
    loss, f, _ = CASES[0]
    result = _result(f"x: R^n\nexplain jacobian(grad({loss}, x), x)[0, 1]")
    lines = _jacobian_lines(to_plain(result))
    assert lines[0] == "# jacobian(grad(sg(sum(x))*sum(x^3), x), x)[0, 1]:"
    assert "[the entries asked for]" in "\n".join(lines) and lines[-2].startswith("# ✓ equals jacobian")
    (term,) = _terms(result)
    x = RNG.uniform(-1.2, 1.2, 4)
    expected, _, _ = _telescoped(f, 1, x)
    np.testing.assert_allclose(_at("n", term, x), expected[0], rtol=1e-9, atol=1e-9)
