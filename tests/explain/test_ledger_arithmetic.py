"""The ledger reads as arithmetic (issue 40): one entry per stop the user wrote, each removed term named
(r₁, r₂) in the language's own builtins, the identity true gradient = kept + removed at the end, a zero
shown by its identity, and a gradient that is 0 at every point said to be. For each lesson the numbers
are checked: kept + the removed terms = the gradient of the unstopped formula, by central differences
at a random point, at a literal and at a symbolic size."""

from __future__ import annotations

import re

import shutil

import numpy as np
import pytest
import sympy as sp

from gradlang.core.session import Session
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.tensor import numbers
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.tensor.shapes import is_size
from gradlang.expr.values import to_symbolic
from gradlang.explain.ledger.components import removed_value
from gradlang.render import to_json, to_latex, to_plain

EM = """data = [-2, -1, 1, 2]
phi(m) = exp(-(data - m)^2 / 2)
resp(m1, m2) = phi(m1) / (phi(m1) + phi(m2))
Q(m1, m2) = sum(sg(resp(m1, m2)) * log(phi(m1)) + sg(1 - resp(m1, m2)) * log(phi(m2)))
explain grad(Q(mu1, mu2), [mu1, mu2])"""

VQ_VAE = """W: R^({n},{n})
e: R^{n}
d: R
x: R^{n}
z_e = W @ x
z_q = z_e + sg(e - z_e)
L = sum((d * z_q - x)^2) + sum((sg(z_e) - e)^2) + sum((z_e - sg(e))^2) / 4
explain grad(L, {wrt})"""

# name: (program with {n} for the size, verdicts in order, the closing identity)
LESSONS = {
    "stable_softmax": ("x: R^{n}\nexplain grad(log(softmax(x - sg(max(x)))[0]), x)",
                       ["neutral"], "grad(unstopped(L), x) = g"),
    "layer_norm": ("x: R^{n}\ng: R^{n}\nmu = sg(mean(x))\nsigma = sg(sqrt(mean((x - mu)^2) + 1/100000))\n"
                   "explain grad(sum(g * (x - mu) / sigma), x)",
                   ["blocking", "blocking"], "grad(unstopped(L), x) = k + r₁ + r₂"),
    "entropy_bonus": ("z: R^{n}\np = softmax(z)\nexplain grad(-sum(sg(p) * log(p)), z)",
                      ["blocking"], "grad(unstopped(L), z) = g + r₁"),
    "ppo_clip": ("W: R^({n},{n})\ns: R^{n}\nA = 3/2\nold = -1\neps = 1/5\nlogp = log(softmax(W @ s)[0])\n"
                 "ratio = exp(logp - sg(old))\n"
                 "explain grad(-min(ratio * sg(A), max(min(ratio, 1 + eps), 1 - eps) * sg(A)), W)",
                 ["irrelevant"] * 3, "grad(unstopped(L), W) = g"),  # sg(A) written twice: two entries
    "ppo_ratio": ("W: R^({n},{n})\ns: R^{n}\nA: R\neps = 1/5\nlogp = log(softmax(W @ s)[0])\n"
                  "ratio = exp(logp - sg(logp))\n"
                  "explain grad(-min(ratio * A, max(min(ratio, 1 + eps), 1 - eps) * A), W)",
                  ["inventing"], "grad(unstopped(L), W) = g + r₁"),
    "h1": ("W1: R^({n},{n})\nx: R^{n}\nb: R^{n}\nh1 = tanh(W1 @ x + sg(b))\n"
           "explain grad(sum(h1 * sg(2)) + dot(h1, sg(W1 @ x)), W1)",
           ["irrelevant", "irrelevant", "blocking"], "grad(unstopped(L), W1) = g + r₁"),
    "vq_vae_encoder": (VQ_VAE.replace("{wrt}", "W"), ["inventing", "blocking", "irrelevant"],
                       "grad(unstopped(L), W) = g + r₁ + r₂"),
    "vq_vae_codebook": (VQ_VAE.replace("{wrt}", "e"), ["blocking", "irrelevant", "blocking"],
                        "grad(unstopped(L), e) = g + r₁ + r₂"),
}


def _explanation(source: str):
    results = [r for r in Session().run(source) if r is not None and r.steps]
    return results[-1].steps[-1]


def _plain(source: str) -> str:
    results = [r for r in Session().run(source) if r is not None and r.steps]
    return to_plain(results[-1].steps[-1])


def _variables(wrt) -> list:
    return list(wrt) if isinstance(wrt, (tuple, list, sp.NDimArray)) else [wrt]


def _point(formulas, sizes: dict, rng) -> dict:
    symbols: set = set()
    for f in formulas:
        symbols |= {s for s in f.free_symbols if s not in sizes} if isinstance(f, sp.Basic) else set()
    point = {}
    for s in sorted(symbols, key=lambda s: s.name):
        shape = tuple(int(sizes.get(k, k)) for k in s.shape) if isinstance(s, Var) else ()
        point[s] = rng.uniform(0.3, 1.3, size=shape) if shape else float(rng.uniform(0.3, 1.3))
    return point


def _numbers(formula, point, sizes):
    if isinstance(formula, sp.NDimArray):
        return np.array([_numbers(f, point, sizes) for f in formula], dtype=float)
    if isinstance(formula, (int, float)) or (isinstance(formula, sp.Expr) and formula.is_number):
        return np.asarray(float(formula))
    return np.asarray(numbers.evaluate(formula, point, sizes), dtype=float)


def _true_gradient(expr, variables, point, sizes) -> np.ndarray:
    """∂ unstopped(expr) by central differences, variable by variable, in the gradient's shape."""
    true = unstopped(expr)
    parts = []
    for v in variables:
        base = np.array(point[v], dtype=float)
        out = np.zeros(base.shape)
        for index in np.ndindex(base.shape):
            values = []
            for step in (1e-6, -1e-6):
                moved = base.copy()
                moved[index] += step
                values.append(float(_numbers(true, {**point, v: moved if moved.shape else float(moved)}, sizes)))
            out[index] = (values[0] - values[1]) / 2e-6
        parts.append(out)
    return np.array(parts) if len(parts) > 1 else parts[0]


def _kept_plus_removed(explanation, point, sizes):
    kept = _numbers(explanation.derived, point, sizes)
    removed = [_numbers(removed_value(e), point, sizes) for e in explanation.ledger
               if e.verdict in ("blocking", "inventing")]
    return kept + sum(removed) if removed else kept


@pytest.mark.parametrize("size", [3, "n"])
@pytest.mark.parametrize("name", sorted(LESSONS))
def test_one_entry_per_written_stop_with_its_verdict_and_the_identity(name, size):
    program, verdicts, identity = LESSONS[name]
    source = ("n: size\n" if size == "n" else "") + program.replace("{n}", str(size))
    explanation = _explanation(source)
    assert [e.verdict for e in explanation.ledger] == verdicts
    text = _plain(source)
    assert text.count("\nstop ") == len(verdicts)
    assert re.search(re.escape(f"true = kept + removed: {identity}") + r"( \(\w = |\n)", text), text
    assert all(len(line) <= 100 for line in text.splitlines() if line.startswith(("stop ", "   ", "true ")))


@pytest.mark.parametrize("size", [3, "n"])
@pytest.mark.parametrize("name", sorted(LESSONS))
def test_kept_plus_removed_is_the_true_gradient(name, size):
    program = LESSONS[name][0]
    source = ("n: size\n" if size == "n" else "") + program.replace("{n}", str(size))
    explanation = _explanation(source)
    expr = to_symbolic(explanation.request.expr)
    variables = _variables(explanation.request.wrt)
    formulas = [expr, explanation.derived, *[removed_value(e) for e in explanation.ledger if e.removed]]
    flat = [f for x in formulas for f in (list(x) if isinstance(x, sp.NDimArray) else [x]) if isinstance(f, sp.Basic)]
    sizes = {s: 4 for f in flat for s in f.free_symbols if is_size(s)}
    sizes |= {k: 4 for f in flat for s in f.free_symbols if isinstance(s, Var) for k in s.shape if is_size(k)}
    point = _point(flat + variables, sizes, np.random.default_rng(40))
    got = _kept_plus_removed(explanation, point, sizes)
    want = _true_gradient(expr, variables, point, sizes)
    assert np.allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-6)


def test_em_has_one_entry_per_stop_written_not_one_per_data_point():
    explanation = _explanation(EM)
    assert [e.verdict for e in explanation.ledger] == ["blocking", "blocking"]
    text = to_plain(explanation)
    assert "stop sg(resp(m1, m2)): cuts the path from mu1, mu2" in text
    assert "stop sg(1 - resp(m1, m2)): cuts the path from mu1, mu2" in text
    assert "true = kept + removed: grad(unstopped(L), [mu1, mu2]) = g + r₁ + r₂" in text
    variables = list(explanation.request.wrt)
    point = {variables[0]: -0.4, variables[1]: 0.7}
    got = _kept_plus_removed(explanation, point, {})
    want = _true_gradient(to_symbolic(explanation.request.expr), variables, point, {})
    assert np.allclose(got, want, rtol=1e-6)


def test_the_stable_softmax_shows_why_its_adjoint_is_zero():
    text = _plain("n: size\nx: R^n\nexplain grad(log(softmax(x - sg(max(x)))[0]), x)")
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("stop "))
    assert lines[at] == "stop sg(max(x)): cuts the path from x"  # the adjoint on a line of its own: 100 columns
    assert lines[at + 1].startswith("   adjoint arriving: sum(softmax(x - ")
    assert lines[at + 1].endswith(") - 1 = 0  (Σₖ sₖ = 1)")
    assert lines[at + 2] == "   neutral: the adjoint arriving is 0, so it removes 0 (it blocks nothing)"


def test_a_gradient_zero_at_every_point_says_so_and_why():
    text = _plain("z: R^3\np = softmax(z)\nexplain grad(-sum(sg(p) * log(p)), z)")
    assert "   g = 0 at every point, though not written 0: each stop has its argument's value, and Σₖ sₖ = 1" in text


def test_layer_norm_writes_what_it_removes_in_the_users_names():
    text = _plain(LESSONS["layer_norm"][0].replace("{n}", "3"))
    assert "   blocking: removes r₁ = -ones(3)*sum(g)/(3*sigma)" in text
    assert "   blocking: removes r₂ = ((x - mu)*(mu*sum(g) - dot(x, g))/sigma^3)/3" in text
    assert "stop mu = sg(sum(x)/3): cuts the path from x" in text
    assert "max_share" not in text and "min_share" not in text


def test_a_stop_of_a_constant_has_its_entry():
    text = _plain(LESSONS["h1"][0].replace("{n}", "3"))
    assert "stop sg(2): no path from W1 reaches it\n   irrelevant: it stops a constant" in text
    assert "stop sg(b): no path from W1 reaches it" in text


@pytest.mark.parametrize("name", ["layer_norm", "vq_vae_encoder", "stable_softmax"])
def test_every_format_carries_the_same_ledger(name):
    source = LESSONS[name][0].replace("{n}", "n").replace("x: R^n", "n: size\nx: R^n", 1) \
        if "x: R^{n}" in LESSONS[name][0] else "n: size\n" + LESSONS[name][0].replace("{n}", "n")
    explanation = _explanation(source)
    data = to_json(explanation)
    ledger = data["ledger"] if isinstance(data, dict) else None
    assert ledger is not None and len(ledger) == len(explanation.ledger) + 1
    assert ledger[-1][0].startswith("true = kept + removed: grad(unstopped(L), ")
    assert [s["words"] for s in data["stops"]] == [sentence[-1] for sentence in ledger[:-1]]
    latex = to_latex(explanation)
    assert r"\operatorname{grad}(\operatorname{unstopped}(L)" in latex
    assert latex.count("stop") >= len(explanation.ledger) and "true = kept + removed" in latex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_lessons_ledgers_compile_and_fit_a_letter_page(tmp_path):
    from tests.explain.test_latex_compiles import _compile
    from tests.explain.test_latex_fits import _MARK, _overfull

    sources = [(f"{name}@{size}", ("n: size\n" if size == "n" else "") + LESSONS[name][0].replace("{n}", str(size)))
               for name in sorted(LESSONS) for size in (3, "n")] + [("em", EM)]
    body = []
    for name, source in sources:
        results = [r for r in Session().run(source) if r is not None]
        body += [r"\typeout{%s%s}" % (_MARK, name)] + [to_latex(step) for r in results for step in r.steps]
    assert _overfull(_compile("\n\n".join(body), tmp_path)) == []
