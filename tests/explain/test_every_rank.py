"""explain derives at the tensor level at every rank (issue #39, LANGUAGE.md section 3b).

Three rank-3 and rank-4 programs written in gradlang (tests/explain/rank3/, each at symbolic and at literal
sizes, also run by every_program.py's derivation set): batched attention with a stopped key over R^(b,t,d),
VQ-VAE over (b,c,h,w) with onehot(argmin(…)), a batched layer norm with stopped statistics. Each explains in
a tensor pass of at most 25 plain lines of at most 100 columns, one ledger entry per stop written, the
closing check; the gradient is JAX's in float64. softmax over an axis of a rank-3 tensor is one primitive with
one rule (no stopped maximum spelled out); a constant array of data is shown by a name and its shape.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gradlang import Session
from gradlang.render.plain import to_plain

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient
FOLDER = Path(__file__).resolve().parent / "rank3"
_RNG = np.random.default_rng(39)


def _attention(Q, K, V):
    S = Q @ jnp.transpose(sg(K), (0, 2, 1)) / jnp.sqrt(Q.shape[-1])
    return jnp.sum((jax.nn.softmax(S, -1) @ V) ** 2)


def _vq_vae(Y, E):
    Z = jnp.transpose(Y, (0, 2, 3, 1))
    D = jnp.sum((Z[..., None, :] - E) ** 2, axis=-1)
    q = jax.nn.one_hot(jnp.argmin(D, axis=-1), E.shape[0], dtype=jnp.float64) @ E
    return jnp.sum((Z - sg(q)) ** 2) + 0.25 * jnp.sum((sg(Z) - q) ** 2)


def _layer_norm(X, g):
    mu = sg(jnp.mean(X, axis=-1, keepdims=True))
    s2 = sg(jnp.mean((X - mu) ** 2, axis=-1, keepdims=True))
    return jnp.sum(jnp.tanh(g * (X - mu) / jnp.sqrt(s2 + 0.00001)) ** 2)


# program: (the JAX loss, the variable explained, the arrays of the point in declaration order, stops written)
PROGRAMS = {
    "attention": (_attention, "Q", {"Q": (2, 3, 4), "K": (2, 3, 4), "V": (2, 3, 4)}, 1),
    "vq_vae": (_vq_vae, "E", {"Y": (2, 4, 2, 3), "E": (5, 4)}, 2),
    "layer_norm": (_layer_norm, "X", {"X": (2, 3, 4), "g": (4,)}, 2),
}
CASES = [(name, size) for name in PROGRAMS for size in ("symbolic", "literal")]


def _source(name: str, size: str) -> str:
    return (FOLDER / f"{name}_{size}.grad").read_text()


@pytest.mark.parametrize("name, size", CASES)
def test_explain_is_a_tensor_pass_that_fits_with_one_entry_per_stop(name, size):
    source = _source(name, size)
    result = Session().run(source)[-1]
    text = to_plain(result)
    lines = text.splitlines()
    assert "tensor reverse pass" in text, text
    assert len(lines) <= 25 and max(map(len, lines)) <= 100, text
    assert len(re.findall(r"^# stop ", text, re.M)) == PROGRAMS[name][3] == source.count("sg("), text
    assert "# ✓ equals grad" in text, text
    assert "[[" not in text and "c = sg(max" not in text, text  # no constant written out, no builtin's own stop


@pytest.mark.parametrize("name, size", CASES)
def test_the_gradient_explained_is_jaxs(name, size):
    loss, wrt, shapes, _ = PROGRAMS[name]
    arrays = {n: _RNG.normal(size=shape) for n, shape in shapes.items()}
    session = Session()
    for n, array in arrays.items():
        session.bind(f"{n}0", array)
    session.run(_source(name, size))
    ours = np.asarray(session.eval(f"grad(L, {wrt}) at " + ", ".join(f"{n} = {n}0" for n in arrays)), dtype=float)
    theirs = jax.grad(loss, argnums=list(arrays).index(wrt))(*arrays.values())
    assert np.allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_a_layer_norms_statistics_keep_their_names_and_entries_at_a_literal_size():
    """With a float in the formula its constants are float64 (sum(X, axis=2)/4 is 0.25*sum(X, axis=2)); the
    stops written as mu and s2 are still found, named and given their entries, as at R^(b,t,d)."""
    texts = [to_plain(Session().run(_source("layer_norm", size))[-1]) for size in ("symbolic", "literal")]
    for text in texts:
        assert "mu = sg(" in text and "s2 = sg(" in text, text
        assert "two stops: two blocking" in text, text
        assert len(re.findall(r"^# stop (mu|s2) = sg\(", text, re.M)) == 2, text


def test_softmax_over_an_axis_of_a_rank_3_tensor_is_one_primitive_that_reads_back():
    session = Session()
    session.run("X: R^(2,3,4)")
    for written, printed in [("softmax(X, -1)", "softmax(X, axis=2)"),
                             ("logsumexp(X, axis=(1, 2))", "logsumexp(X, axis=(1, 2))")]:
        value = session.eval(written)
        assert to_plain(value) == printed and session.eval(printed) == value
    X = _RNG.normal(size=(2, 3, 4)) * 300  # large: the helper shifts by each group's maximum
    session.bind("X0", X)
    ours = np.asarray(session.eval("softmax(X, axis=(0, 2)) at X = X0"), dtype=float)
    assert np.allclose(ours, jax.nn.softmax(X, axis=(0, 2)), rtol=1e-12)
    ours = np.asarray(session.eval("logsumexp(X, axis=1) at X = X0"), dtype=float)
    assert np.allclose(ours, jax.nn.logsumexp(X, axis=1), rtol=1e-12)


CONSTANT = """x: R^(3,2,2)
w: R^(3,2,2)
t1 = x * broadcast_to(reshape([4.5, 5.25, 0.5], (3, 1, 1)), (3, 2, 2))
L = sum((t1 * w)^2) + sum(w[0] * [[1.5, 2.5], [3.5, 4.5]])
explain grad(L, w)"""


def test_a_constant_array_is_shown_by_a_name_and_its_shape_never_its_entries():
    """An importer's constant array (a schedule at a traced draw, stretched over the batch) is data to the
    derivation: named once in the let block with its shape; a short list the user wrote stays as written."""
    text = to_plain(Session().run(CONSTANT)[-1])
    derivation = [line for line in text.splitlines() if line.startswith("#")]
    assert "# let  k1 = a constant array of shape (3, 2, 2)" in derivation, text
    assert not any("20.25" in line or "4.5, 4.5" in line for line in derivation), text
    assert any("[[1.5, 2.5], [3.5, 4.5]]" in line for line in derivation), text
    assert "# ✓ equals grad" in derivation[-1], text
