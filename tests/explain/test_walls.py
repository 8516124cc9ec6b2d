"""Derivations without walls (issue 40): a part the lines repeat is named in the let block, a stop keeps its
letter after the rewrites tidied inside it, a long check breaks between its phrases, and `explain backward`
derives at a symbolic size as the tensor reverse pass."""

from __future__ import annotations

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.render import to_latex, to_plain

ADVERSARIAL = """w: R^2
x: R^2
y = 1
eps = 1/10
loss(u) = softplus(-y * dot(w, tanh(u)))
g = grad(loss(x), x)
x_norm = x + eps * g / norm(g)
explain grad(loss(sg(x_norm)), w)
"""


def _derivation(source: str) -> list[str]:
    result = [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]
    return [line for line in to_plain(result).splitlines() if line.startswith("#")]


def test_a_repeated_tanh_of_a_stop_is_named_and_the_stop_keeps_its_letter():
    lines = _derivation(ADVERSARIAL)
    text = "\n".join(lines)
    assert "h = tanh(stop_gradient(x_norm))" in text  # named once, with the user's x_norm inside
    assert "∂L/∂w = -h*sigmoid(-dot(w, h))" in text
    assert text.count("stop_gradient(") == 2  # the stop's let line and h's: the lines write c or h
    assert max(len(line) for line in lines if "blocking: removes" not in line) <= 100  # the ledger's own term aside


def test_the_named_part_is_what_the_lines_write_twice():
    lines = _derivation("n: size\nP: R^(n,n)\nx: R^n\nexplain grad(-dot(P @ x, sg(x)) / (norm(P @ x) * norm(sg(x))), P)")
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("#      u = 1/norm(stop_gradient(x))") for line in lines), lines


def test_a_long_check_breaks_between_its_phrases():
    lines = _derivation("W: R^(2,3)\nb: R^2\nc: R\nx: R^3\nexplain grad(sum(tanh(W @ x + sg(b))^2)*c, [W, b, c]) "
                        "at W = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], b = [1, 2], c = 3, x = [1, 1, 1]")
    assert max(len(line) for line in lines) <= 100
    check = lines[[k for k, line in enumerate(lines) if line.startswith("# ✓ equals grad")][0]:]
    assert check[0] == "# ✓ equals grad;"
    assert check[1] == "#    at W = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], b = [1, 2], c = 3, x = [1, 1, 1]:"
    assert check[2].startswith("#    value 5.54, gradient [[[0.832") and check[3].startswith("#    true gradient")


BACKWARD = "{sizes}x: R^{n}\nW: R^({n},{n})\nexplain backward(log(softmax(W @ x - sg(max(W @ x)))[0]), W)"


def test_backward_at_a_symbolic_size_is_the_tensor_reverse_pass():
    source = BACKWARD.format(sizes="n: size\n", n="n")
    result = [r for r in Session().run(source) if r.kind == "explain"][-1]
    explanation = result.steps[0]
    text = to_plain(result)
    assert text.startswith("# backward(") and "tensor reverse pass" in text
    assert explanation.check is not None and explanation.check.agrees
    assert "✓ equals grad (symbolically" in text
    assert to_latex(result)  # every format renders it
    grad_text = to_plain([r for r in Session().run(source.replace("backward(", "grad(")) if r.kind == "explain"][-1])
    assert text.replace("backward(", "grad(", 1) == grad_text  # the same pass as grad's, line for line


def test_backward_at_a_symbolic_size_gives_the_literal_size_numbers():
    rng = np.random.default_rng(4)
    W, x = rng.normal(size=(3, 3)), rng.normal(size=3)
    point = f" at W = {W.tolist()}, x = {x.tolist()}"
    at_n = Session().run(BACKWARD.format(sizes="n: size\n", n="n").replace("explain ", "") + point)[-1].value
    at_3 = Session().run(BACKWARD.format(sizes="", n=3).replace("explain ", "") + point)[-1].value
    z = W @ x
    s = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    expected = np.outer(np.eye(3)[0] - s, x)  # ∇_W log s₀ = (e₀ − s) xᵀ
    assert np.allclose(np.array(at_n, dtype=float), expected) and np.allclose(np.array(at_3, dtype=float), expected)


@pytest.mark.parametrize("seed", ["0", "1", "2"])
def test_named_walls_are_the_same_bytes_under_every_hash_seed(seed, tmp_path):
    import os
    import subprocess
    import sys

    program = tmp_path / "p.grad"
    program.write_text(ADVERSARIAL)
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-m", "gradlang", "--plain", str(program)], capture_output=True, text=True,
                         env=env, check=True).stdout
    reference = subprocess.run([sys.executable, "-m", "gradlang", "--plain", str(program)], capture_output=True,
                               text=True, env={**os.environ, "PYTHONHASHSEED": "7"}, check=True).stdout
    assert out == reference
