"""Random einsums against jax.grad in float64: diagonals, sums in one operand, broadcast letters, ellipses.

Each case draws NumPy subscripts over a few letters (a letter may repeat in
an operand, be summed by one operand alone, or have size 1 in one operand
beside another size), declares the operands at literal and at symbolic sizes,
and compares the gradient by every operand with jax.grad of the same einsum,
to 1e-9. The draws are fixed by a seed, so a failure names its case.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from tests.conftest import as_floats

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

SIZES = {"i": 2, "j": 3, "k": 4, "l": 2}
NAMES = {"i": "p", "j": "q", "k": "r", "l": "s"}  # the size each letter has at a symbolic size


def _case(seed: int):
    """(subscripts, the operands' shapes as letters with 1 for a broadcast axis)."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 4))
    terms, shapes = [], []
    for _ in range(count):
        letters = [str(x) for x in rng.choice(list(SIZES), size=int(rng.integers(1, 4)))]
        shape = [("1" if rng.random() < 0.15 and count > 1 else x) for x in letters]
        terms.append("".join(letters))
        shapes.append(shape)
    used = sorted({x for term in terms for x in term})
    output = "".join(x for x in used if rng.random() < 0.5)
    ellipsis = rng.random() < 0.3 and all(len(t) >= 2 for t in terms)
    if ellipsis:  # the first axis of each operand under one ellipsis letter: the same size, leading
        shapes = [["l"] + s[1:] for s in shapes]
        terms = ["..." + t[1:] for t in terms]
        output = "..." + output.replace("l", "")
    return ",".join(terms) + "->" + output, shapes


def _valid(spec: str, shapes: list) -> bool:
    """NumPy's own check: each letter of one size wherever it is not 1."""
    try:
        np.einsum(spec, *[np.ones([1 if x == "1" else SIZES[x] for x in s]) for s in shapes])
    except ValueError:
        return False
    return True


CASES = [c for c in (_case(seed) for seed in range(60)) if _valid(*c)][:30]


def _declared(shapes: list, symbolic: bool) -> str:
    def size(x):
        return "1" if x == "1" else NAMES[x] if symbolic else str(SIZES[x])

    return "\n".join(f"T{k}: R^{size(s[0])}" if len(s) == 1 else f"T{k}: R^({', '.join(size(x) for x in s)})"
                     for k, s in enumerate(shapes))


@pytest.mark.parametrize("spec, shapes", CASES, ids=[c[0] for c in CASES])
def test_a_random_einsum_has_jaxs_gradient(spec, shapes):
    rng = np.random.default_rng(len(spec))
    arrays = [rng.normal(size=[1 if x == "1" else SIZES[x] for x in s]) for s in shapes]
    names = ", ".join(f"T{k}" for k in range(len(shapes)))
    loss = f'sum(sin(einsum("{spec}", {names})) * 1.5)' if "->" in spec and not spec.endswith("->") \
        else f'sin(einsum("{spec}", {names}))'

    def oracle(*xs):
        return jnp.sum(jnp.sin(jnp.einsum(spec, *xs)) * (1.5 if not spec.endswith("->") else 1.0))

    for symbolic in (False, True):
        session = Session()
        session.run(_declared(shapes, symbolic))
        for k, array in enumerate(arrays):
            session.bind(f"t{k}", array)
        point = ", ".join(f"T{k} = t{k}" for k in range(len(arrays)))
        for k in range(len(arrays)):
            want = np.asarray(jax.grad(oracle, argnums=k)(*arrays))
            got = as_floats(session.eval(f"grad({loss}, T{k}) at {point}"))
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"{spec} by T{k}, symbolic={symbolic}")
