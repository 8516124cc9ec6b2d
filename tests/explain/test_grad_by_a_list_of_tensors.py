"""explain of grad(L, [W, b]) (LANGUAGE.md 3b), and of the InfoNCE gradient that was a ShapeError.

A gradient by a list of tensors is one reverse pass: its derivation closes with
one line per listed variable, in the order listed, each in its variable's shape
(a stopped entry is zeros(n), never a scalar 0), at symbolic and literal sizes,
in every output format. Its result must be the engine's list of gradients and
the numbers JAX gives at random points.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.expr.tensor import numbers
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.walk import dag_atoms
from gradlang.render import to_json, to_latex, to_plain, to_rich

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _declared(m, n) -> str:
    sizes = "".join(f"{s}: size\n" for s in (m, n) if isinstance(s, str))
    return sizes + f"W: R^({m},{n})\nb: R^{m}\nc: R\nx: R^{n}\n"


def _explained(m, n, statement: str):
    result = Session().run(_declared(m, n) + f"explain {statement}")[-1]
    (explanation,) = result.steps
    return result, explanation


def _formats(result) -> list[str]:
    """The result in the four formats (pretty through rich, as the terminal shows it)."""
    from rich.console import Console

    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(result))
    return [to_plain(result), to_latex(result), console.export_text(), json.dumps(to_json(result))]


LOSS = "sum(tanh(W @ x + sg(b))^2)*c"


@pytest.mark.parametrize("m, n", [("m", "n"), (2, 3)])
def test_grad_by_a_list_closes_with_one_line_per_listed_variable_in_their_shapes(m, n):
    result, explanation = _explained(m, n, f"grad({LOSS}, [W, b, c])")
    closing = [str(line.lhs[0]) for line in explanation.vector.lines[-3:]]
    assert closing == ["∂L/∂W", "∂L/∂b", "∂L/∂c"]
    plain = to_plain(result)
    assert f"∂L/∂b = zeros({m})" in plain, plain  # the stopped entry in b's shape, not a scalar 0
    assert f"removes r₁ = [zeros({m}, {n}), " in plain, plain
    assert [e.verdict for e in explanation.ledger] == ["blocking"]
    assert plain.splitlines()[-1] == f"[2*c*outer(h - h^3, x), zeros({m}), sum(h^2)]", plain
    assert "✓ equals grad" in plain  # at every size (tests/explain/test_check_at_every_size.py)


@pytest.mark.parametrize("m, n", [("m", "n"), (2, 3)])
def test_grad_by_a_list_derives_in_every_format_without_an_error(m, n):
    for statement in (f"grad({LOSS}, [W, b, c])", "grad(sum(tanh(W @ x + b)^2), [W, b])",
                      "grad(sum(tanh(W @ x + b)^2), [b, W])", "grad(c*sum(x), [W, c])"):
        result, _ = _explained(m, n, statement)
        for text in _formats(result):
            assert "Error" not in text and "TensorList(" not in text, text


def test_grad_by_a_list_at_a_point_checks_the_numbers():
    at = "W = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], b = [1, 2], c = 3, x = [1, 1, 1]"
    result, explanation = _explained(2, 3, f"grad({LOSS}, [W, b, c]) at {at}")
    assert explanation.check.agrees, to_plain(result)
    assert "✓ equals grad; at W = " in to_plain(result)  # a check over 100 columns breaks between phrases


def _jax_loss(W, b, c, x):
    return jnp.sum(jnp.tanh(W @ x + jax.lax.stop_gradient(b)) ** 2) * c


@pytest.mark.parametrize("m, n", [("m", "n"), (2, 3)])
def test_the_derived_list_equals_jax_at_random_points(m, n):
    _, explanation = _explained(m, n, f"grad({LOSS}, [W, b, c])")
    rng = np.random.default_rng(40)
    for _ in range(3):
        shapes = {"W": (2, 3), "b": (2,), "x": (3,)}
        point = {name: rng.uniform(-1.5, 1.5, size=shape) for name, shape in shapes.items()}
        point["c"] = rng.uniform(0.5, 2.0)
        expected = jax.grad(_jax_loss, argnums=(0, 1, 2))(point["W"], point["b"], point["c"], point["x"])
        for derived, want in zip(explanation.derived.entries, expected):
            got = _numbers(derived, point)
            assert np.allclose(got, np.asarray(want), rtol=1e-9, atol=1e-12)


def _numbers(formula, point: dict):
    """A formula of the derivation at the point (sizes m = 2, n = 3 where they are names)."""
    from gradlang.expr.tensor.shapes import is_size

    symbols = {s: point[s.name] for s in formula.free_symbols if not is_size(s) and s.name in point}
    symbols.update({v: point[v.name] for v in dag_atoms(formula, Var)})
    sizes = {s: {"m": 2, "n": 3}[s.name] for s in formula.free_symbols if is_size(s)}
    for v in dag_atoms(formula, Var):
        sizes.update({s: {"m": 2, "n": 3}[s.name] for s in v.shape if is_size(s)})
    return numbers.evaluate(formula, symbols, sizes)


INFONCE = "grad(-log(softmax(sg(X @ transpose(W)) @ (W @ x) / tau)[0]), W)"


@pytest.mark.parametrize("k, d, n", [("k", "d", "n"), (4, 2, 3)])
def test_explain_of_the_infonce_gradient_derives_what_grad_gives(k, d, n):
    """Was a ShapeError: a line's width was measured with the stopped matrix as a scalar letter."""
    sizes = "".join(f"{s}: size\n" for s in (k, d, n) if isinstance(s, str))
    source = sizes + f"X: R^({k},{n})\nW: R^({d},{n})\nx: R^{n}\ntau: R\n"
    session = Session()
    session.run(source)
    engine = session.run(INFONCE)[-1].value
    result = session.run(f"explain {INFONCE}")[-1]
    (explanation,) = result.steps
    assert explanation.derived == engine
    assert [e.verdict for e in explanation.ledger] == ["blocking"]
    for text in _formats(result):
        assert "Error" not in text
    rng = np.random.default_rng(1)
    X, W, x = rng.normal(size=(4, 3)), rng.normal(size=(2, 3)), rng.normal(size=3)
    tau = 0.7

    def loss(W):
        logits = jax.lax.stop_gradient(X @ W.T) @ (W @ x) / tau
        return -jax.nn.log_softmax(logits)[0]

    got = _numbers_infonce(explanation.derived, X, W, x, tau)
    assert np.allclose(got, np.asarray(jax.grad(loss)(W)), rtol=1e-9, atol=1e-12)


def _numbers_infonce(formula, X, W, x, tau):
    from gradlang.expr.tensor.shapes import is_size

    values = {"X": X, "W": W, "x": x, "tau": tau}
    sizes_of = {"k": 4, "d": 2, "n": 3}
    symbols = {v: values[v.name] for v in dag_atoms(formula, Var)}
    symbols.update({s: values[s.name] for s in formula.free_symbols if not is_size(s) and s.name in values})
    sizes = {s: sizes_of[s.name] for s in formula.free_symbols if is_size(s)}
    for v in dag_atoms(formula, Var):
        sizes.update({s: sizes_of[s.name] for s in v.shape if is_size(s)})
    return numbers.evaluate(formula, symbols, sizes)


@pytest.mark.parametrize("m, n", [("m", "n"), (2, 3)])
def test_an_entry_of_the_list_a_list_of_one_and_unfold_derive(m, n):
    """grad(L, [W, b])[0] is the gradient by W, derived whole; [b] is a list of one; unfold (which has
    no components of a list to unfold) shows the reverse pass, as at a symbolic size."""
    loss = "sum(tanh(W @ x + sg(b))^2)"
    result, explanation = _explained(m, n, f"grad({loss}, [W, b])[0]")
    assert to_plain(result).splitlines()[-1] == "2*outer(h - h^3, x)" and explanation.check.agrees
    result, explanation = _explained(m, n, f"grad({loss}, [b])")
    assert to_plain(result).splitlines()[-1] == f"[zeros({m})]" and explanation.check.agrees
    assert [e.verdict for e in explanation.ledger] == ["blocking"]
    result = Session().run(_declared(m, n) + f"explain[unfold] grad({loss}, [W, b])")[-1]
    assert result.steps[0].summary.startswith("tensor reverse pass") and result.steps[0].check.agrees
