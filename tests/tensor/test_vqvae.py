"""VQ-VAE at rank 4 (issue #39, section 3b): onehot(argmin(…, axis=-1), k) of an index tensor, batched `@`, and the
codebook, encoder and input gradients at symbolic and literal sizes, against jax.grad in float64.

The quantiser as written in channels-last layout (b,h,w,c) and in PyTorch's (b,c,h,w) with a transpose; the
codebook's gradient contracts every batch axis (an einsum), never an `outer` of a rank-4 tensor.
"""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gradlang import Session

jax.config.update("jax_enable_x64", True)

_RNG = np.random.default_rng(39)
X0 = _RNG.normal(size=(2, 2, 3, 3))
W0 = _RNG.normal(size=(3, 4))
Z0 = _RNG.normal(size=(2, 2, 3, 4))
E0 = _RNG.normal(size=(5, 4))
ZCHW = np.transpose(Z0, (0, 3, 1, 2))

QUANTISER = """d = sum((expand_dims(Z, -2) - E)^2, axis=-1)
q = onehot(argmin(d, axis=-1), K) @ E
L = sum((Z - sg(q))^2) + sum((sg(Z) - q)^2)"""
DECLARED = {
    "symbolic": "Z: R^(b,h,w,c); E: R^(k,c)\nK = k",
    "literal": "Z: R^(2,2,3,4); E: R^(5,4)\nK = 5",
}
ENCODED = {
    "symbolic": "X: R^(b,h,w,m); W: R^(m,c); E: R^(k,c)\nK = k\nZ = X @ W",
    "literal": "X: R^(2,2,3,3); W: R^(3,4); E: R^(5,4)\nK = 5\nZ = X @ W",
}
TORCH_LAYOUT = {  # PyTorch's (b,c,h,w), moved channels-last as the quantiser needs
    "symbolic": "Y: R^(b,c,h,w); E: R^(k,c)\nK = k\nZ = transpose(Y, (0, 2, 3, 1))",
    "literal": "Y: R^(2,4,2,3); E: R^(5,4)\nK = 5\nZ = transpose(Y, (0, 2, 3, 1))",
}


def _loss(Z, E):
    d = jnp.sum((Z[..., None, :] - E) ** 2, axis=-1)
    q = jax.nn.one_hot(jnp.argmin(d, axis=-1), E.shape[0], dtype=jnp.float64) @ E
    sg = jax.lax.stop_gradient
    return jnp.sum((Z - sg(q)) ** 2) + jnp.sum((sg(Z) - q) ** 2)


def _run(source: str, **arrays):
    session = Session()
    for name, array in arrays.items():
        session.bind(name, array)
    return session.eval(source)


@pytest.mark.parametrize("sizes", sorted(DECLARED))
@pytest.mark.parametrize("by", [0, 1])
def test_channels_last_grads_are_jax(sizes, by):
    name = "ZE"[by]
    value = _run(f"{DECLARED[sizes]}\n{QUANTISER}\ngrad(L, {name}) at Z = z0, E = e0", z0=Z0, e0=E0)
    np.testing.assert_allclose(np.asarray(value, dtype=float), jax.grad(_loss, by)(Z0, E0), rtol=0, atol=1e-9)


@pytest.mark.parametrize("sizes", sorted(DECLARED))
def test_loss_value_is_jax(sizes):
    value = _run(f"{DECLARED[sizes]}\n{QUANTISER}\nL at Z = z0, E = e0", z0=Z0, e0=E0)
    assert abs(float(value) - float(_loss(Z0, E0))) < 1e-9


@pytest.mark.parametrize("sizes", sorted(ENCODED))
@pytest.mark.parametrize("name, by", [("W", 1), ("E", 2), ("X", 0)])
def test_encoder_grads_are_jax(sizes, name, by):
    value = _run(f"{ENCODED[sizes]}\n{QUANTISER}\ngrad(L, {name}) at X = x0, W = w0, E = e0", x0=X0, w0=W0, e0=E0)
    expected = jax.grad(lambda X, W, E: _loss(X @ W, E), by)(X0, W0, E0)
    np.testing.assert_allclose(np.asarray(value, dtype=float), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("sizes", sorted(TORCH_LAYOUT))
@pytest.mark.parametrize("name, by", [("Y", 0), ("E", 1)])
def test_pytorch_layout_grads_are_jax(sizes, name, by):
    value = _run(f"{TORCH_LAYOUT[sizes]}\n{QUANTISER}\ngrad(L, {name}) at Y = y0, E = e0", y0=ZCHW, e0=E0)
    expected = jax.grad(lambda Y, E: _loss(jnp.transpose(Y, (0, 2, 3, 1)), E), by)(ZCHW, E0)
    np.testing.assert_allclose(np.asarray(value, dtype=float), expected, rtol=0, atol=1e-9)


def test_onehot_of_an_index_tensor_adds_a_last_axis():
    value = _run("K: R^(2,2)\nonehot(argmin(K, axis=-1), 3) at K = [[0, -1], [2, 1]]")
    np.testing.assert_array_equal(np.asarray(value, dtype=float), [[0, 1, 0], [0, 1, 0]])
    shape = _run("K: R^(b,t,n)\nonehot(argmax(K, axis=-1), n)").shape
    assert tuple(str(s) for s in shape) == ("b", "t", "n")


def test_codebook_gradient_contracts_the_batch_axes():
    text = str(_run(f"{DECLARED['symbolic']}\n{QUANTISER}\ngrad(L, E)"))
    assert "outer(" not in text and "einsum(" in text


@pytest.mark.parametrize("by", ["E", "Z"])
def test_same_formula_at_literal_and_symbolic_sizes(by):
    texts = [str(_run(f"{DECLARED[s]}\n{QUANTISER}\ngrad(L, {by})")) for s in ("literal", "symbolic")]
    sized = texts[1]
    for name, size in (("b", "2"), ("h", "2"), ("w", "3"), ("c", "4"), ("k", "5")):
        sized = sized.replace(f", {name})", f", {size})").replace(f"({name}, ", f"({size}, ").replace(f", {name},", f", {size},")
    assert texts[0] == sized


@pytest.mark.parametrize("target", ["jax", "torch"])
def test_exported_codebook_gradient_is_gradlangs(target, tmp_path):
    """onehot of an index tensor exports in the framework's operations (a last axis, as jax.nn.one_hot)."""
    from gradlang.export import export_program
    from tests.tools.test_export import load
    from tests.tools.test_export_examples import framework, to_framework, to_numpy

    framework(target)
    program = f"{DECLARED['symbolic']}\n{QUANTISER}\ng = grad(L, E)\n"
    session = Session()
    session.run(program)
    module = load(export_program(session, target, program), tmp_path, f"vq_{target}")
    got = to_numpy(module.g(to_framework(target, Z0), to_framework(target, E0)))
    np.testing.assert_allclose(got, jax.grad(_loss, 1)(Z0, E0), rtol=0, atol=1e-9)


def _printed(source: str, form: str = "plain") -> str:
    from gradlang.render import to_latex, to_plain
    from gradlang.render.shown import shown

    value = _run(source)
    return (to_plain if form == "plain" else to_latex)(shown(value))


def test_implicit_broadcast_prints_as_written_and_reads_back():
    """`expand_dims(Z, -2) - E` prints without the evaluator's broadcast_to nodes, and the text is the value."""
    text = _printed(f"{DECLARED['symbolic']}\n{QUANTISER}\nd")
    assert text == "sum((expand_dims(Z, 3) - E)^2, axis=4)"
    again = _run(f"{DECLARED['symbolic']}\nd = {text}\nd at Z = z0, E = e0", z0=Z0, e0=E0)
    expected = np.sum((Z0[..., None, :] - E0) ** 2, axis=-1)
    np.testing.assert_allclose(np.asarray(again, dtype=float), expected, rtol=0, atol=1e-12)


def test_a_needed_broadcast_stays_written():
    assert _printed("X: R^(b,t,d)\nbroadcast_to(sum(X, axis=0), (b, t, d))") == "broadcast_to(sum(X, axis=0), (b, t, d))"


@pytest.mark.parametrize("by", ["E", "Z"])
def test_printed_gradient_reads_back_to_jax(by):
    text = _printed(f"{DECLARED['symbolic']}\n{QUANTISER}\ngrad(L, {by})")
    assert "broadcast_to" not in text and "outer(" not in text
    value = _run(f"{DECLARED['symbolic']}\nK = k\ng = {text}\ng at Z = z0, E = e0", z0=Z0, e0=E0)
    np.testing.assert_allclose(np.asarray(value, dtype=float), jax.grad(_loss, "ZE".index(by))(Z0, E0),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("form", ["plain", "latex"])
def test_printed_at_literal_sizes_is_the_symbolic_with_sizes_put_in(form):
    texts = [_printed(f"{DECLARED[s]}\n{QUANTISER}\ngrad(L, E)", form) for s in ("literal", "symbolic")]
    assert "sum" in texts[1] and texts[0].count("argmin") == texts[1].count("argmin")
    sized = texts[1]
    for name, size in (("b", "2"), ("h", "2"), ("w", "3"), ("c", "4"), ("k", "5")):
        sized = sized.replace(f", {name})", f", {size})").replace(f"({name}, ", f"({size}, ")
    assert texts[0] == sized


def test_one_axis_prints_in_latex_and_pretty():
    """sum(X, axis=2) in LaTeX and pretty (the VQ-VAE distances print so): once an InternalError."""
    from gradlang.render import to_rich

    assert _printed("X: R^(b,t,d)\nsum(X^2, axis=2)", "latex") == r"\operatorname{sum}_{ 2 }\left(X^{2}\right)"
    assert to_rich(_run("X: R^(b,t,d)\nsum(X, axis=2)")) is not None


def test_pretty_index_of_a_onehot_is_gradlang_source():
    """e[…] of a computed index wrote SymPy's `**`; it is written as the language writes it."""
    from rich.console import Console

    from gradlang.render.pretty import to_rich
    from gradlang.render.shown import shown

    console = Console(width=300, record=True, file=io.StringIO())
    console.print(to_rich(shown(_run(f"{DECLARED['symbolic']}\n{QUANTISER}\nq")).value))
    text = console.export_text()
    assert "**" not in text and "^2" in text and "broadcast_to" not in text
