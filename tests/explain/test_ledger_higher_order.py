"""The ledger of a derivative of order two or more (diff(f, a, b), diff(f, x, 2), hessian and its entries):
each written stop's term is what it removes from THAT derivative, not from the gradient it starts from.

In the ledger's order, rᵢ = D(f, stops 1..i transparent) − D(f, stops 1..i−1 transparent), D the derivative
written, so D(unstopped f) = D(f) + r₁ + … + rₖ exactly. Each printed term is read back by gradlang at a
random point and compared with JAX float64 (nested jax.grad, jax.hessian) of the function with each stop as
the identity or lax.stop_gradient; so is the identity true = kept + removed. Before the fix the entries gave
the first-order term: diff(a*b*sg(a − b), a, b) said `removes r₁ = a*b`; it removes a − b.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.render import to_json, to_plain

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(20261129)
ID, SG = (lambda v: v), jax.lax.stop_gradient


def _explained(source: str):
    return [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _ledger_lines(result) -> list[str]:
    lines = [line[2:] for line in to_plain(result).splitlines() if line.startswith("# ")]
    start = next(k for k, line in enumerate(lines) if line.startswith("stop "))
    return lines[start:]


def _terms(result) -> list[str]:
    """The removed terms as printed, in the ledger's order: a blocking or inventing entry's formula, a
    neutral one's 0 (its term is 0), an entry inside another stop none."""
    found, lines = [], []
    for line in _ledger_lines(result):  # a term broken over lines (between a matrix's rows) joined again
        if line.startswith("      ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    for line in lines:
        if (match := re.search(r"removes r\S = (.*)$", line)) or (match := re.search(r"adds −r\S = (.*), a", line)):
            found.append(match.group(1) if "removes" in line else f"-({match.group(1)})")
        elif "neutral: it removes 0" in line:
            found.append("0")
    return found


def _at(declarations: str, text: str, point: dict) -> np.ndarray:
    """gradlang's value of `text` at the point."""
    at = ", ".join(f"{name} = {np.asarray(value).tolist()}" for name, value in point.items())
    results = Session().run(f"{declarations}\nvalue__ = {text}\nvalue__ at {at}")
    return np.asarray(results[-1].value, dtype=float)


def _telescoped(derivative, count: int) -> list:
    """rᵢ by JAX: derivative(stops) with stops 1..i the identity, less with stops 1..i−1, the rest stopped."""
    takes = [np.asarray(derivative(tuple([ID] * k + [SG] * (count - k)))) for k in range(count + 1)]
    return [takes[k + 1] - takes[k] for k in range(count)], takes[0], takes[-1]


def _check(source: str, declarations: str, kept_text: str, derivative, count: int, point: dict):
    """Each printed term equals JAX's rᵢ at the point, and kept + Σ rᵢ equals JAX's true derivative."""
    result = _explained(source)
    printed = _terms(result)
    assert len(printed) == count, _ledger_lines(result)
    expected, kept, true = _telescoped(derivative, count)
    for term, value in zip(printed, expected):
        np.testing.assert_allclose(_at(declarations, term, point), value, rtol=1e-9, atol=1e-9, err_msg=term)
    ours = _at(declarations, kept_text, point)
    np.testing.assert_allclose(ours, kept, rtol=1e-9, atol=1e-9)
    total = ours + sum(_at(declarations, term, point) for term in printed)
    np.testing.assert_allclose(total, true, rtol=1e-9, atol=1e-9)
    return result


def _scalars(*names) -> dict:
    return {name: float(RNG.uniform(-1.5, 1.5)) for name in names}


def _mixed(f, point: dict, first: str, second: str):
    """diff(f, first, second) by JAX: by `first`, then by `second`."""
    names = list(point)

    def by(stops):
        def g(values):
            return f(stops, **dict(zip(names, values)))
        values = jnp.asarray([point[n] for n in names], dtype=jnp.float64)
        return jax.hessian(g)(values)[names.index(first), names.index(second)]
    return by


def test_one_stop_removes_its_term_of_the_second_derivative():
    source = "a: R\nb: R\nexplain diff(a*b*sg(a-b), a, b)"
    point = _scalars("a", "b")
    result = _check(source, "a: R\nb: R", "diff(a*b*sg(a-b), a, b)",
                    _mixed(lambda s, a, b: a * b * s[0](a - b), point, "a", "b"), 1, point)
    lines = _ledger_lines(result)
    assert lines[:2] == ["stop sg(a - b): cuts the path from a, b", "   blocking: removes r₁ = a - b"]
    assert lines[2] == "true = kept + removed: diff(unstopped(L), a, b) = g + r₁ (g = diff(L, a, b))"


def test_two_stops_one_inside_the_other_telescope():
    """sg(b) is listed first and sits inside sg(a*b*sg(b)) and outside it: made transparent first, it removes
    its own term; the outer stop removes the rest. And a stop only inside another removes 0."""
    source = "a: R\nb: R\ns = sg(b)\nexplain diff(a^2*b*sg(a*b*s) + a*b*s, a, b)"
    point = _scalars("a", "b")

    def f(stops, a, b):
        s = stops[0](b)
        return a ** 2 * b * stops[1](a * b * s) + a * b * s
    result = _check(source, "a: R\nb: R", "diff(a^2*b*sg(a*b*sg(b)) + a*b*sg(b), a, b)",
                    _mixed(f, point, "a", "b"), 2, point)
    assert "removes r₂ = 7*a^2*b^2" in "\n".join(_ledger_lines(result))

    nested = "a: R\nb: R\nexplain diff(a^2*b*sg(a*sg(b)) + sg(a+b)*a*b^2, a, b)"

    def g(stops, a, b):  # the inner stop first: it removes 0, the outer one what both stopped
        return a ** 2 * b * stops[1](a * stops[0](b)) + stops[2](a + b) * a * b ** 2
    by = _mixed(g, point, "a", "b")
    expected, _, _ = _telescoped(by, 3)
    assert expected[0] == 0
    result = _explained(nested)
    assert _ledger_lines(result)[0] == "stop sg(b): inside the stop sg(a*sg(b)); irrelevant: no adjoint flows inside a stop"
    for term, value in zip(_terms(result), expected[1:]):
        np.testing.assert_allclose(_at("a: R\nb: R", term, point), value, rtol=1e-9, atol=1e-9)


def test_a_hessian_entry():
    """tests/explain/test_latex_compiles.py's hessian_entry: it said the first-order a*b*c*exp(a + b + c)."""
    source = "a: R\nb: R\nc: R\nexplain hessian(a*b*c*exp(a+b+c)*sg(a-b), [a, b, c])[0, 1]"
    point = _scalars("a", "b", "c")
    result = _check(source, "a: R\nb: R\nc: R", "hessian(a*b*c*exp(a+b+c)*sg(a-b), [a, b, c])[0, 1]",
                    _mixed(lambda s, a, b, c: a * b * c * jnp.exp(a + b + c) * s[0](a - b), point, "a", "b"),
                    1, point)
    assert "removes r₁ = c*(a - b)*exp(a + b + c)" in _ledger_lines(result)[1]


def test_a_whole_hessian_by_a_list():
    source = "a: R\nb: R\nc: R\nexplain hessian(a*b*c*sg(a-b) + sg(a*c)*b^2, [a, b, c])"
    point = _scalars("a", "b", "c")

    def by(stops):
        def g(v):
            a, b, c = v
            return a * b * c * stops[0](a - b) + stops[1](a * c) * b ** 2
        return jax.hessian(g)(jnp.asarray([point["a"], point["b"], point["c"]]))
    _check(source, "a: R\nb: R\nc: R", "hessian(a*b*c*sg(a-b) + sg(a*c)*b^2, [a, b, c])", by, 2, point)


@pytest.mark.parametrize("size", ["3", "n"])
def test_a_whole_hessian_by_a_vector_at_every_size(size):
    """R^3 and R^n give the same ledger (the tensor pass's), each term JAX's rᵢ."""
    formula = "sum(x^3)*sg(sum(x)) + sum(sg(x)*x^2)"
    source = f"x: R^{size}\nexplain hessian({formula}, x)"
    point = {"x": RNG.uniform(-1.5, 1.5, 3)}

    def by(stops):
        return jax.hessian(lambda x: jnp.sum(x ** 3) * stops[0](jnp.sum(x)) + jnp.sum(stops[1](x) * x ** 2))(
            jnp.asarray(point["x"]))
    result = _check(source, f"x: R^{size}", f"hessian({formula}, x)", by, 2, point)
    lines = _ledger_lines(result)
    assert lines[1] == "   blocking: removes r₁ = 3*(outer(x^2, ones(SIZE)) + outer(ones(SIZE), x^2))" \
        .replace("SIZE", size)
    assert lines[3] == "   blocking: removes r₂ = 2*diag(2*x)"
    assert lines[4] == "true = kept + removed: hessian(unstopped(L), x) = g + r₁ + r₂ (g = hessian(L, x))"


def test_a_stop_that_removes_a_gradient_but_no_second_derivative():
    """c*sg(2*x) is linear in x: the stop removes 2*c from the gradient, 0 from the second derivative."""
    second = _explained("x: R\nc: R\nexplain diff(x^3*sg(x) + c*sg(2*x), x, 2)")
    assert [e.verdict for e in second.steps[0].ledger] == ["blocking", "neutral"]
    assert _ledger_lines(second)[2:4] == [
        "stop sg(2*x): cuts the path from x",
        "   neutral: it removes 0 (the derivative is the same with the stop and without it)"]
    first = _explained("x: R\nc: R\nexplain diff(x^3*sg(x) + c*sg(2*x), x)")
    assert [e.verdict for e in first.steps[0].ledger] == ["blocking", "blocking"]
    point = _scalars("x", "c")

    def by(stops):
        return jax.grad(jax.grad(lambda x: x ** 3 * stops[0](x) + point["c"] * stops[1](2 * x)))(point["x"])
    _check("x: R\nc: R\nexplain diff(x^3*sg(x) + c*sg(2*x), x, 2)", "x: R\nc: R",
           "diff(x^3*sg(x) + c*sg(2*x), x, 2)", by, 2, point)


def test_json_gives_the_order_and_no_adjoint():
    data = to_json(_explained("a: R\nb: R\nexplain diff(a*b*sg(a-b), a, b)"))
    (stop,) = data["steps"][0]["stops"]
    assert stop["order"] == 2 and stop["removed"] == "a - b" and "adjoint" not in stop


def test_a_matrix_term_is_written_a_row_a_line():
    """A hessian by a vector whose formula picks x[0] is derived by components at R^3: its terms are matrices,
    written out between their rows within 100 columns (they were "a term of 80 characters"), each JAX's rᵢ."""
    source = "x: R^3\nu = sg(x)\nv = sg(x[0]*x[1])\nexplain hessian(x[0]*sum(u*x^2) + v*x[2]^2 + v*x[0], x)"
    point = {"x": RNG.uniform(-1.5, 1.5, 3)}

    def by(stops):
        def f(x):
            v = stops[1](x[0] * x[1])
            return x[0] * jnp.sum(stops[0](x) * x ** 2) + v * x[2] ** 2 + v * x[0]
        return jax.hessian(f)(jnp.asarray(point["x"]))
    result = _check(source, "x: R^3", "hessian(x[0]*sum(sg(x)*x^2) + sg(x[0]*x[1])*x[2]^2 + sg(x[0]*x[1])*x[0], x)",
                    by, 2, point)
    lines = to_plain(result).splitlines()
    assert "#    blocking: removes r₁ = [[6*x[0]^2, x[1]^2, x[2]^2], [x[1]^2, 4*x[0]*x[1], 0]," in lines
    assert max(len(line) for line in lines[:-1]) <= 100


def test_a_straight_through_stop_invents_a_second_derivative():
    """x^3 + sg(round(x)^3 − x^3): the surrogate's second derivative 6x is one the function (0) lacks."""
    source = "x: R\nexplain diff(x^3 + sg(round(x)^3 - x^3), x, 2)"
    point = {"x": 0.3 + float(RNG.uniform(0, 0.1))}

    def by(stops):
        return jax.grad(jax.grad(lambda x: x ** 3 + stops[0](jnp.round(x) ** 3 - x ** 3)))(point["x"])
    result = _check(source, "x: R", "diff(x^3 + sg(round(x)^3 - x^3), x, 2)", by, 1, point)
    assert _ledger_lines(result)[1] == "   inventing: adds −r₁ = 6*x, a derivative the function lacks"
