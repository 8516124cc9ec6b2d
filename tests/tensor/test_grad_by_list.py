"""grad(L, [W1, b1, W2, …]) (section 3b): one reverse pass, one gradient per listed tensor, at any size.

The numbers at a point are whole-array NumPy's and equal JAX float64's
`jax.grad(f, argnums=(0, 1, …))` to 1e-12; the plain form reads back as the
same list; a list is indexed, printed and refused as an operand at its place."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.errors import DiffError
from gradlang.derive.tensor import reverse
from gradlang.expr.tensor.listed import ListAt, TensorList

jax.config.update("jax_enable_x64", True)

SIZES = {"n": 3, "h": 4, "k": 2}

# A 3-layer MLP regressed on a target network's output: the target is stopped, as in DQN.
MLP = """x: R^n
y: R^k
W1: R^(h,n)
b1: R^h
W2: R^(h,h)
b2: R^h
W3: R^(k,h)
V3: R^(k,h)
h1 = tanh(W1 @ x + b1)
h2 = relu(W2 @ h1 + b2)
target = y + 0.5*sg(V3 @ h2)
L = sum((W3 @ h2 - target)^2) / 2
"""
MLP_LIST = "[W1, b1, W2, b2, W3]"


def _mlp(W1, b1, W2, b2, W3, x, y, V3):
    h1 = jnp.tanh(W1 @ x + b1)
    h2 = jax.nn.relu(W2 @ h1 + b2)
    target = y + 0.5 * jax.lax.stop_gradient(V3 @ h2)
    return jnp.sum((W3 @ h2 - target) ** 2) / 2


CLASSIFIER = """x: R^n
W: R^(k,n)
b: R^k
z = W @ x + b
L = logsumexp(z) - dot(onehot(c, k), z)
"""


def _classifier(W, b, x, c):
    z = W @ x + b
    return jax.nn.logsumexp(z) - z[c]


def _declared(program: str, literal: bool) -> str:
    """The program at symbolic sizes (n, h, k) or with every size written as its number."""
    if not literal:
        return "n, h, k: size\n" + program
    for name, size in SIZES.items():
        program = program.replace(f"R^({name},", f"R^({size},").replace(f",{name})", f",{size})")
        program = program.replace(f"R^{name}\n", f"R^{size}\n").replace(f", {name})", f", {size})")
    return program


def _point(seed: int, shapes: dict) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


def _at(point: dict, extra: str = "") -> str:
    return " at " + ", ".join(f"{name} = {np.asarray(v).tolist()!r}" for name, v in point.items()) + extra


MLP_SHAPES = {"W1": (4, 3), "b1": (4,), "W2": (4, 4), "b2": (4,), "W3": (2, 4), "x": (3,), "y": (2,), "V3": (2, 4)}
CLASSIFIER_SHAPES = {"W": (2, 3), "b": (2,), "x": (3,)}


def _run(program: str, statement: str):
    session = Session()
    session.run(program)
    return session, session.run(statement)[-1]


def _close(got, expected):
    assert isinstance(got, ListAt) and len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(e), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("literal", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_three_layer_mlp_with_a_target_network_equals_jax(literal, seed):
    point = _point(seed, MLP_SHAPES)
    _, result = _run(_declared(MLP, literal), f"grad(L, {MLP_LIST})" + _at(point))
    args = [point[name] for name in ("W1", "b1", "W2", "b2", "W3", "x", "y", "V3")]
    _close(result.value, jax.grad(_mlp, argnums=(0, 1, 2, 3, 4))(*args))


@pytest.mark.parametrize("literal", [False, True])
def test_a_softmax_classifier_equals_jax(literal):
    point = _point(7, CLASSIFIER_SHAPES)
    _, result = _run(_declared(CLASSIFIER, literal), "grad(L, [W, b, x])" + _at(point, ", c = 1"))
    _close(result.value, jax.grad(_classifier, argnums=(0, 1, 2))(point["W"], point["b"], point["x"], 1))


def test_the_gradients_come_from_one_reverse_pass(monkeypatch):
    passes = []
    one_pass = reverse.adjoints_of

    def counted(expr, variables, *args, **kwargs):
        passes.append(list(variables))
        return one_pass(expr, variables, *args, **kwargs)

    monkeypatch.setattr(reverse, "adjoints_of", counted)
    _, result = _run(_declared(MLP, False), f"grad(L, {MLP_LIST})")
    assert isinstance(result.value, TensorList) and len(result.value.entries) == 5
    assert len(passes) == 1 and [v.name for v in passes[0]] == ["W1", "b1", "W2", "b2", "W3"]


@pytest.mark.parametrize("literal", [False, True])
def test_each_entry_is_the_gradient_by_that_variable_alone(literal):
    session, result = _run(_declared(MLP, literal), f"g = grad(L, {MLP_LIST})\ng")
    for k, name in enumerate(["W1", "b1", "W2", "b2", "W3"]):
        assert session.eval(f"g[{k}]") == session.eval(f"grad(L, {name})")
    assert session.eval("g[-1]") == session.eval("grad(L, W3)")


@pytest.mark.parametrize("literal", [False, True])
def test_the_plain_form_reads_back_to_the_same_numbers(literal):
    program = _declared(MLP, literal)
    _, result = _run(program, f"grad(L, {MLP_LIST})")
    *named, value = result.text.strip().splitlines()
    point = _at(_point(3, MLP_SHAPES))
    _, first = _run(program, f"grad(L, {MLP_LIST})" + point)
    _, again = _run(program + "\n".join(named), f"({value})" + point)
    _close(again.value, first.value)


def test_it_prints_in_every_format_with_the_shared_parts_named_once():
    session = Session()
    session.run("m, n: size\nW: R^(m,n)\nb: R^m\nx: R^n\ny: R^m\nL = sum((W @ x + b - y)^2)")
    (result,) = session.run("grad(L, [W, b, x])")
    assert result.text.strip().splitlines() == ["r = b + W @ x - y", "[2*outer(r, x), 2*r, 2*(transpose(W) @ r)]"]
    assert result.latex.startswith(r"\left[ 2 r x^{\top},\; 2 r,\; 2 W^{\top} r \right]")
    (numbers,) = session.run("grad(L, [W, b]) at W = [[1.0, 2.0]], b = [0.5], x = [1.0, 1.0], y = [0.0]")
    assert numbers.text.strip() == "[[[7.0, 7.0]], [7.0]]"
    from gradlang.render.json import to_json

    assert to_json(numbers)["value"] == [[[7.0, 7.0]], [7.0]]


def test_a_list_of_scalars_and_a_scalar_beside_a_tensor():
    session = Session()
    session.run("x: R^n\na: R\nc: R")
    assert str(session.eval("grad(a*c^2, [a, c])")) == "[c**2, 2*a*c]"  # the list of scalars, as before
    value = session.eval("grad(sum(a*x), [x, a]) at x = [1.0, 2.0], a = 3.0")
    assert [np.asarray(v).tolist() for v in value] == [[3.0, 3.0], 3.0]


@pytest.mark.parametrize("source, column, words", [
    ("g + 1", 1, "operand of arithmetic"),
    ("sum(g)", 5, "argument of sum"),
    ("g[0, 1]", 1, "takes one index"),
    ("g[2]", 3, "out of range"),
    ("g[:, 0]", 1, "sliced"),
    ("[g, W]", 1, "an entry of a list"),
    ("jacobian(W @ x, [W, b])", 17, "argument of jacobian"),
    ("grad(sum(W @ x), [W, x[0]])", 18, "the component x[0]"),
    ("grad(sum(W @ x), [W, n])", 18, "declared vector, matrix or scalar symbol"),
])
def test_a_list_where_it_has_no_meaning_is_a_placed_error(source, column, words):
    session = Session()
    session.run("m, n: size\nW: R^(m,n)\nb: R^m\nx: R^n\ng = grad(sum(W @ x + b), [W, b])")
    with pytest.raises(GradlangError) as caught:
        session.run(source)
    assert words in caught.value.message and caught.value.column == column, caught.value.message


def test_at_literal_sizes_a_gradient_only_components_take_is_one_pass_by_every_component():
    """prod(x) has no tensor rule at a literal size: the component engine takes the list, in one DAG pass."""
    session = Session()
    session.run("x: R^3\nW: R^(2,3)\nc: R")
    value = session.eval("grad(prod(x) + sum(W @ x)*c, [x, W, c]) at x = [1.0, 2.0, 3.5], "
                         "W = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], c = 2.0")
    x, W = np.array([1.0, 2.0, 3.5]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    expected = jax.grad(lambda x, W, c: jnp.prod(x) + jnp.sum(W @ x) * c, argnums=(0, 1, 2))(x, W, 2.0)
    _close(value, expected)


def test_symbolic_and_literal_sizes_print_the_same_digits():
    point = _at(_point(5, MLP_SHAPES))
    texts = [_run(_declared(MLP, literal), f"grad(L, {MLP_LIST})" + point)[1].text for literal in (False, True)]
    assert texts[0] == texts[1]


def test_explain_by_a_list_of_one_literal_shape_derives_as_at_a_symbolic_size():
    """a, b: R^3 are two tensors, as at R^n: explain derives a grad by a list of tensors by one reverse pass
    at every size, the same lines (it once derived them by components, stacked into a matrix of variables,
    by a second evaluation; then refused them)."""
    from gradlang.render.plain import to_plain

    texts = []
    for declared in ("a: R^3\nb: R^3", "n: size\na, b: R^n"):
        text = to_plain(Session().run(f"{declared}\nexplain grad(sum(a*b^2), [a, b])")[-1])
        texts.append([line.split("[")[0].strip() for line in text.splitlines() if line.startswith("# (")])
    assert texts[0] == texts[1] == ["# (1)  ∂L/∂(b^2) = a", "# (2)  ∂L/∂a = b^2", "# (3)  ∂L/∂b = 2*a*b"]
