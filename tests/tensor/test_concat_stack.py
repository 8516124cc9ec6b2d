"""concat, stack and ranges (section 3b) on the one engine: gradients against JAX in float64, at symbolic and
literal sizes, with stops; the same printed formula at both spellings; `[x, y]` of vectors is `stack([x, y], 0)`.

Each loss is written once with sizes `m, n` and once with `m = 2, n = 3`
written as numbers (`R^(2,3)`); the gradient by each variable must print the
same formula once the sizes are written as their numbers, and give JAX's
numbers (jnp.concatenate, jnp.stack, jax.lax.stop_gradient) to 1e-12.
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
cat, stk = jnp.concatenate, jnp.stack

SIZES = {"m": 2, "n": 3}
# a value all numbers prints as them, and one that picks components may print by them (render/shown.py)
SHOWN_BY_COMPONENTS = re.compile(r"^[\[\]\d\s,.\-e+]*$|\w\[\d+\]")
DECLARED = {"a": ("m",), "b": ("n",), "x": ("n",), "y": ("n",), "W": ("m", "n"), "V": ("m", "n")}


@dataclass(frozen=True)
class Loss:
    name: str
    source: str
    oracle: object  # a function of the arrays, by name


LOSSES = [
    Loss("concat of two lengths, a stop", "sum(tanh(concat([a, sg(b)])) * concat([b, a]))",
         lambda a, b, **_: jnp.sum(jnp.tanh(cat([a, sg(b)])) * cat([b, a]))),
    Loss("stack as rows, a stop", "logsumexp(stack([x, sg(y)]) @ x) + sum(stack([x, y], 1)^2 @ [1.5, -2])",
         lambda x, y, **_: jax.nn.logsumexp(stk([x, sg(y)]) @ x) + jnp.sum(stk([x, y], 1) ** 2 @ jnp.array([1.5, -2.0]))),
    Loss("[x, y] is stack([x, y])", "sum(exp([x, sg(y) * x] @ y))",
         lambda x, y, **_: jnp.sum(jnp.exp(stk([x, sg(y) * x]) @ y))),
    Loss("concat of matrices on both axes", "sum(concat([W, sg(V)], 1) @ concat([x, y])) + sum(concat([W, V * W], 0)^2 @ x)",
         lambda W, V, x, y, **_: jnp.sum(cat([W, sg(V)], 1) @ cat([x, y])) + jnp.sum(cat([W, V * W], 0) ** 2 @ x)),
    Loss("negative axes", "sum(sin(concat([W, V], -1))) + sum(stack([x, sg(x) * y], -1) @ [1, 2])",
         lambda W, V, x, y, **_: jnp.sum(jnp.sin(cat([W, V], -1))) + jnp.sum(stk([x, sg(x) * y], -1) @ jnp.array([1.0, 2.0]))),
    Loss("ranges of a concat", "sum(concat([a, b])[1:n] * b[0:n - 1]) + sum(W[:, 1:n] ^ 2)",
         lambda a, b, W, **_: jnp.sum(cat([a, b])[1:3] * b[0:2]) + jnp.sum(W[:, 1:3] ** 2)),
    Loss("concat through softmax, stopped", "-log(softmax(concat([W @ x, sg(a)]))[0])",
         lambda W, x, a, **_: -jnp.log(jax.nn.softmax(cat([W @ x, sg(a)]))[0])),
]


def _declarations(literal: bool) -> str:
    lines = ["m = 2", "n = 3"] if literal else ["m, n: size"]
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


def _used(loss: Loss) -> list:
    return [name for name in DECLARED if re.search(rf"\b{name}\b", loss.source)]


def _literal_text(text: str) -> str:
    """A formula printed at symbolic sizes with its sizes written as their numbers: m + n as 5, 2*n as 6."""
    import sympy as sp

    def value(match):
        return str(sp.sympify(match.group(0), locals={"m": sp.Integer(2), "n": sp.Integer(3)}))

    return re.sub(r"(?<![\w.])[0-9mn][0-9mn +\-*]*(?![\w(])", lambda m: value(m) if re.search("[mn]", m.group(0))
                  else m.group(0), text)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_the_gradient_agrees_with_jax_at_symbolic_and_literal_sizes(loss):
    point = _point(0)
    given = ", ".join(f"{name} = {_spelled(point[name])}" for name in _used(loss))
    for literal in (False, True):
        session = _session(literal)
        for name in _used(loss):
            value = session.eval(f"grad({loss.source}, {name}) at {given}")
            want = jax.grad(lambda v: loss.oracle(**{**point, name: v}))(point[name])
            np.testing.assert_allclose(np.asarray(value, dtype=float), np.asarray(want), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{loss.name}: by {name}, literal={literal}")


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_literal_and_symbolic_sizes_print_the_same_gradient(loss):
    symbolic, literal = _session(False), _session(True)
    for name in _used(loss):
        by_name = symbolic.run(f"grad({loss.source}, {name})")[-1].text
        by_number = literal.run(f"grad({loss.source}, {name})")[-1].text
        if SHOWN_BY_COMPONENTS.search(by_number):  # render/shown.py's display choices (test_sizes_spelled.py)
            continue
        assert _literal_text(by_name) == by_number, (loss.name, name)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_the_printed_gradient_reads_back(loss):
    """plain is gradlang source: the printed gradient, read again, is the same formula."""
    session = _session(False)
    for name in _used(loss):
        text = session.run(f"grad({loss.source}, {name})")[-1].text
        if "\n" in text:  # shared parts named `where`: the last line is the formula over them
            continue
        assert session.run(text)[-1].text == text


def test_a_list_of_vectors_is_one_stack_at_every_size():
    for literal in (False, True):
        session = _session(literal)
        assert session.run("[x, y]")[-1].text == "stack([x, y], 0)"
        assert session.run("stack([x, y])")[-1].text == "stack([x, y], 0)"
        assert session.run("[x, y] @ x")[-1].text == "stack([x, y], 0) @ x"


def test_grad_by_a_list_stays_a_list_of_gradients():
    for literal in (False, True):
        session = _session(literal)
        assert session.run("grad(dot(x, y), [x, y])")[-1].text == "[y, x]"


def test_concat_of_two_sizes_has_their_sum_as_its_length():
    session = _session(False)
    assert session.run("len(concat([a, b]))")[-1].text == "m + n"
    value = session.eval("concat([a, b]) at a = [1, 2], b = [3, 4, 5]")
    np.testing.assert_array_equal(value, [1, 2, 3, 4, 5])


def test_numbers_only_join_as_numpy_does():
    session = Session()
    assert session.run("concat([[1, 2], [3]])")[-1].text == "[1, 2, 3]"
    assert session.run("stack([[1, 2], [3, 4]], 1)")[-1].text == "[[1, 3], [2, 4]]"
    assert session.run("concat([[[1, 2]], [[3, 4]]], axis=1)")[-1].text == "[[1, 2, 3, 4]]"
    assert session.run("[1, 2, 3, 4][1:3]")[-1].text == "[2, 3]"


@pytest.mark.parametrize("source, message", [
    ("concat([W, x])", "one rank"),
    ("concat([W, W[0:1]], 1)", "cannot join"),
    ("concat([x, y], 2)", "axis 2 is out of range"),
    ("stack([a, b])", "one shape"),
    ("x[2:1] at n = 3", "out of range"),
])
def test_refusals_name_what_is_wrong(source, message):
    for literal in (False, True):
        with pytest.raises(GradlangError, match=message) as caught:
            _session(literal).run(source)
        assert caught.value.span is not None and "Internal" not in type(caught.value).__name__


@pytest.mark.parametrize("point", ["x = [1.0, 2.0, 3.0]", "x = [1, 2, 3]", "n = 3"])
def test_a_range_outside_its_vector_at_a_point_is_refused_by_name(point):
    """At a symbolic size a range is checked where the point gives its numbers: NumPy would cut x[0:4] short
    without a word, and the gradient, zeros(n − 4) beside ones, has no range left to check."""
    session = _session(False)
    for source in ("x[0:4]", "grad(sum(x[0:4]), x)", "x[n - 1:1]"):
        with pytest.raises(GradlangError, match="out of range|outside its vector") as caught:
            session.run(f"{source} at {point}")
        assert type(caught.value).__name__ == "ShapeError"


def test_explain_derives_through_concat_stack_and_ranges():
    from gradlang.render.json import to_json
    from gradlang.render.plain import to_plain

    def rules(result) -> list:  # a rule too wide beside its line gives its name there; JSON has its formula
        return [line["rule"] for line in to_json(result)["steps"][0]["vector"]["lines"]]

    session = _session(False)
    result = session.run("explain grad(sum(tanh(concat([a, sg(b)])) * concat([b, a])), a)")[-1]
    assert "[concat" in to_plain(result) and "tensor reverse pass" in to_plain(result)
    assert any(rule.startswith("concat: Ā = Ȳ[0:m], B̄ = Ȳ[m:m+n]") for rule in rules(result))
    result = session.run("explain grad(logsumexp([x, sg(y)] @ x), x)")[-1]
    assert "[stack" in to_plain(result) and "tensor reverse pass" in to_plain(result)
    assert any(rule.startswith("stack: ū = Ȳ[0]") for rule in rules(result))
    text = to_plain(session.run("explain grad(sum(x[0:2]^2), x)")[-1])
    assert "range: v̄ = [0; ȳ; 0]" in text and text.splitlines()[-1] == "concat([2*x[0:2], zeros(n - 2)], 0)"
