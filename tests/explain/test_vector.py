"""Vector-level derivations (issue 14): short, in the vector form a teacher writes, and right.

The ML derivations of the issue's table are derived once with a named
identity, fit in 25 plain lines at 100 columns, state their result in
vector form, and that result (its let names replaced by their values)
equals grad/jacobian at random points; a few are checked against JAX too.
"""

from __future__ import annotations

import math
import random
import re
import shutil
from pathlib import Path

import pytest
import sympy as sp

from gradlang.expr.tensor.lower import lowered
from tests.component_session import ComponentSession
from gradlang.core.session import Session
from gradlang.derive import derivatives as derive
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.values import elements, to_symbolic
from gradlang.render import to_latex, to_plain

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WIDTH = 100
MOST_LINES = 25

# A gradient of a tensor formula is the tensor reverse pass (test_tensor_derivations.py); the identities
# below remain for Jacobians and for expressions that pick the variable's own components.
REVERSE = "the reverse pass at the tensor level, one adjoint rule per operation"
FORWARD = "the forward pass at the tensor level, one tangent rule per operation"
TENSOR_PASSES = (REVERSE, FORWARD)  # at literal sizes too, as at symbolic sizes (issue #36)
EM_ZERO = """data = [-2, -1, 0, 2]
phi(m) = exp(-(data - m)^2 / 2)
resp(m1, m2) = phi(m1) / (phi(m1) + phi(m2))
Q(m1, m2) = sum(sg(resp(m1, m2)) * log(phi(m1)) + sg(1 - resp(m1, m2)) * log(phi(m2)))"""
# (name, example program or declarations, statement, identity, pieces the derivation must state)
TABLE = [
    ("softmax Jacobian", "x: R^3", "jacobian(softmax(x), x)", FORWARD, ["∂s/∂x = diag(s) - outer(s, s)"]),
    ("grad logsumexp", "x: R^3", "grad(logsumexp(x), x)", REVERSE, ["= softmax(x)"]),
    ("grad log sum exp", "x: R^3", "grad(log(sum(exp(x))), x)", REVERSE, ["= softmax(x)", "exp(u) ⊘ Σ exp(u) = softmax(u)"]),
    ("log softmax", "x: R^3", "grad(log(softmax(x)[0]), x)", REVERSE, ["∂L/∂x = onehot(0, 3) - softmax(x)"]),
    ("stable log-probability", "stable_softmax", "grad(log(stable_softmax(x)[0]), x)", REVERSE,
     ["L = log(softmax(x - sg(max(x)))[0])", "∂L/∂x = onehot(0, 3) - softmax(x - sg(max(x)))",
      "adjoint arriving: sum(softmax(x - sg(max(x)))) - 1 = 0  (Σₖ sₖ = 1)", "neutral"]),
    ("TD target", "target_network", "grad(td, W)", REVERSE,
     ["let  c = sg(max(W @ [0, 1]))", "∂L/∂(W @ [1, 0]) = ((W @ [1, 0])[0] - 9*c/10 - 1)*onehot(0, 2)",
      "adjoint arriving: 81*c/100 + 9/10 - 9*(W @ [1, 0])[0]/10", "blocking: removes"]),
    ("VQ-VAE commitment", "vq_vae", "grad(commit, W)", REVERSE,
     ["let  z_e = W @ [1, 2]", "∂commit/∂W = outer(∂commit/∂z_e, [1, 2]) = outer(z_e - sg(e), [1, 2])/2",
      "one stop, irrelevant"]),  # the example's L is its whole loss: the commitment goes by its own name
    ("squared norm", "W: R^(2,2)", "grad(sum((W @ [1, 1])^2), W)", REVERSE, ["= 2*outer(W @ [1, 1], [1, 1])"]),
    ("half squared error", "W: R^(2,2)\nt: R^2", "grad(sum((W @ [3, -1] - sg(t))^2) / 2, W)", REVERSE,
     ["∂L/∂W = outer(W @ [3, -1] - sg(t), [3, -1])"]),
    ("residual TD target", "x: R^2", "grad((x[0] - 2*sg(x[1]) - 3)^2, x)", "TD error with a stopped target",
     ["δ = q − y", "∇δ = ∇q − ∇y = ∇q", "= 2*δ·∇q = [2*δ, 0]", "= -4*δ"]),
    ("REINFORCE", "reinforce", "grad(surrogate(2), theta)", REVERSE,
     ["∂L/∂theta = pi*(∂L/∂pi - dot(∂L/∂pi, pi))", "= onehot(2, 3)*sg(2 - b) - pi*sg(2 - b)"]),
    ("norm", "x: R^3", "grad(norm(x), x)", REVERSE, ["∂L/∂x = x/norm(x)"]),
    ("sum of squares", "x: R^3", "grad(sum((x - 1)^2), x)", REVERSE, ["∂L/∂x = 2*x - 2 = 2*(x - 1)"]),
    ("dot", "w: R^3\nx: R^3", "grad(dot(w, x), x)", REVERSE, ["= w"]),
    ("elementwise Jacobian", "x: R^3", "jacobian(sigmoid(x), x)", FORWARD, ["diag("]),
    ("sigmoid cross-entropy", "y: R", "diff(-(y*log(sigmoid(z)) + (1-y)*log(1-sigmoid(z))), z)",
     "sigmoid cross-entropy identity", ["= sigmoid(z) − y"]),
    ("EM M-step", "em_gaussian_mixture", "grad(Q(mu1, mu2), [mu1, mu2])", "stopped weights (the weights held fixed)",
     ["Σᵢ rᵢ·(dᵢ - mu1)", "d = [-2, -1, 1, 2]", "blocking"]),
    # a data value of 0 collapses its term (−(0 − μ)²/2 = −μ²/2): the same derivation, the weights written once
    ("EM M-step, a data value 0", EM_ZERO, "grad(Q(mu1, mu2), [mu1, mu2])", "stopped weights (the weights held fixed)",
     ["Σᵢ rᵢ·(dᵢ - mu1)", "d = [-2, -1, 0, 2]", "rᵢ = sg(exp(-(dᵢ - mu1)^2/2)", "blocking"]),
]
_BINDING = re.compile(r"^\s*[A-Za-z_]\w*(\([^)]*\))?\s*(=[^=]|:)")


def _definitions(path: Path) -> str:
    """An example up to its first statement that prints: its declarations and definitions."""
    kept = []
    for line in path.read_text().splitlines():
        code = line.split("#")[0].strip()
        if code and not all(_BINDING.match(part) for part in code.split(";")):
            break
        kept.append(line)
    return "\n".join(kept)


def _explained(program: str, statement: str):
    session = Session()
    path = EXAMPLES / f"{program}.grad"
    source = _definitions(path) if path.exists() else program
    session.run(source)
    [explanation] = session.run(f"explain {statement}")[-1].steps
    return explanation


def lines_at(text: str, width: int = WIDTH) -> int:
    """Lines a terminal of the given width shows (a longer line wraps)."""
    return sum(max(1, math.ceil(len(line) / width)) for line in text.splitlines())


def _numbers(value, point) -> list:
    return [complex(sp.N(unstopped(e).xreplace(point), 20)) for e in elements(to_symbolic(value))]


def _point(value, seed: int) -> dict:
    rng = random.Random(seed)
    symbols = sorted(set().union(*(e.free_symbols for e in elements(to_symbolic(value)))), key=str)
    return {s: sp.Float(rng.uniform(-2, 2), 20) for s in symbols}


@pytest.mark.parametrize("name, program, statement, identity, pieces", TABLE, ids=[row[0] for row in TABLE])
def test_table_derivation_is_short_vector_and_right(name, program, statement, identity, pieces):
    explanation = _explained(program, statement)
    text = to_plain(explanation)
    assert explanation.vector is not None and explanation.vector.identity == identity, text
    assert lines_at(text) <= MOST_LINES, text
    for piece in pieces:
        assert piece in text
    request = explanation.request
    wrt = to_symbolic(request.wrt) if request.wrt is not None else request.specs[0][0]
    expr = to_symbolic(request.expr)
    if identity in TENSOR_PASSES:  # a tensor formula: against the component engine's derivative of its components
        expr, wrt = lowered(expr), lowered(wrt)
    expected = derive.derivative_like(expr, wrt)
    stated = explanation.vector.instantiated() if identity not in TENSOR_PASSES else lowered(explanation.derived)
    for seed in range(3):
        point = _point(expected, seed)
        for a, b in zip(_numbers(stated, point), _numbers(expected, point)):
            assert abs(a - b) <= 1e-9 * (1 + abs(b)), (name, seed)


def test_no_identity_falls_back_to_the_components():
    explanation = _explained("x: R^2", "grad(x[0] * sin(x[1]), x)")
    assert explanation.vector is None and len(explanation.steps) == 2


def test_let_names_never_collide_with_the_users():
    """s is the user's name here, so softmax's let is called something else."""
    explanation = _explained("s: R^3", "jacobian(softmax(s), s)")
    names = [getattr(let.name, "plain", str(let.name)) for let in explanation.vector.lets]
    assert "s" not in names and names, names
    assert "sg" not in to_plain(explanation).replace("stop_gradient", "")


def test_the_vector_differentiated_by_prints_whole_only_in_derivations():
    explanation = _explained("x: R^3", "grad(log(softmax(x)[0]), x)")
    assert to_plain(explanation).startswith("grad(log(softmax(x)[0]), x)")
    # explain derives by components (the component engine), whose values print x by its components;
    # only the derivation names the vector whole. A plain statement now holds x as one tensor.
    value = ComponentSession().run("x: R^3\nsoftmax(x)[0]")[-1]
    assert to_plain(value).strip() == "softmax([x[0], x[1], x[2]])[0]"
    tensor = Session().run("x: R^3\nsoftmax(x)[0]")[-1]
    assert to_plain(tensor).strip() == "softmax(x)[0]"
    assert sp.simplify(lowered(tensor.value) - value.value) == 0


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    point = [0.3, -1.2, 2.0]
    checks = [
        ("x: R^3", "jacobian(softmax(x), x)", jax.jacobian(jax.nn.softmax)),
        ("x: R^3", "grad(logsumexp(x), x)", jax.grad(jax.scipy.special.logsumexp)),
        ("stable_softmax", "grad(log(stable_softmax(x)[0]), x)",
         jax.grad(lambda v: jnp.log(jax.nn.softmax(v - jax.lax.stop_gradient(jnp.max(v)))[0]))),
    ]
    for program, statement, reference in checks:
        explanation = _explained(program, statement)
        xs = elements(to_symbolic(explanation.request.wrt))
        stated = explanation.vector.instantiated() if explanation.vector.identity not in TENSOR_PASSES \
            else lowered(explanation.derived)
        xs = elements(to_symbolic(lowered(explanation.request.wrt)))
        ours = _numbers(stated, dict(zip(xs, map(sp.Float, point))))
        theirs = [complex(v) for v in jnp.ravel(reference(jnp.array(point)))]
        assert all(abs(a - b) < 1e-10 for a, b in zip(ours, theirs)), statement


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("name, program, statement", [row[:3] for row in TABLE], ids=[row[0] for row in TABLE])
def test_table_derivation_latex_compiles(name, program, statement, tmp_path):
    from test_latex_compiles import _compile

    log = _compile(to_latex(_explained(program, statement)), tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]


@pytest.mark.parametrize("name, program, statement", [row[:3] for row in TABLE], ids=[row[0] for row in TABLE])
def test_pretty_shows_no_private_use_characters(name, program, statement):
    """The pretty printer marks stops by shifting them into private planes; every line must shift them back."""
    import io

    from rich.console import Console

    from gradlang.render import to_rich

    console = Console(width=WIDTH, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(_explained(program, statement)))
    text = console.export_text()
    assert not [c for c in text if ord(c) >= 0xF0000], text


def test_the_commitment_names_its_adjoint_in_latex_and_pretty_names_w():
    import io

    from rich.console import Console

    from gradlang.render import to_rich

    explanation = _explained("vq_vae", "grad(commit, W)")
    # the example binds L to its whole loss: the commitment's lines go by its own name (explain/loss_letter.py)
    assert r"\frac{\partial commit}{\partial z_{e}} \begin{bmatrix} 1 \\ 2 \end{bmatrix}^{\top}" in to_latex(explanation)
    console = Console(width=WIDTH, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(explanation))
    assert "irrelevant: the stopped value does not depend on W\n" in console.export_text()
