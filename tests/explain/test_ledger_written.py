"""The ledger lists the stops the user wrote, and only those, in the language's own words (issue 40).

softmax and logsumexp over an axis of a rank-3 tensor are primitives computed stably by their helpers (as
jax.nn.logsumexp is); LANGUAGE.md section 6 promises "no stop the user sees", so no shift has an entry, at a
symbolic and at a literal size, while the stops the user wrote each keep theirs. The shares of a max or
min (the engine's max_share, min_share) are printed in the language's builtins in every format.
"""

from __future__ import annotations

import io
import json

import pytest
import sympy as sp

from gradlang.core.session import Session
from gradlang.expr.functions import MaxShare, MinShare
from gradlang.explain.explanation import Explanation
from gradlang.explain.ledger.arithmetic import in_builtins
from gradlang.render import to_json, to_latex, to_plain, to_rich

ATTENTION = "explain grad(sum(softmax(Q @ transpose(sg(K), (0, 2, 1)) / sqrt(d), -1) @ V), Q)"

# name: (program, the labels of the ledger's entries, in order)
WRITTEN = {
    "attention@symbolic": ("b: size\nt: size\nd: size\nQ: R^(b,t,d)\nK: R^(b,t,d)\nV: R^(b,t,d)\n" + ATTENTION,
                           ["stop sg(K)"]),
    "attention@literal": ("Q: R^(2,2,3)\nK: R^(2,2,3)\nV: R^(2,2,3)\n" + ATTENTION.replace("sqrt(d)", "sqrt(3)"),
                          ["stop sg(K)"]),
    "rank3_blocking@literal": ("X: R^(2,2,3)\nexplain grad(sum(softmax(X, -1) * sg(X)), X)", ["stop sg(X)"]),
    "rank3_blocking@symbolic": ("a: size\nb: size\nc: size\nX: R^(a,b,c)\n"
                                "explain grad(sum(softmax(X, -1) * sg(X)), X)", ["stop sg(X)"]),
    "rank3_none@symbolic": ("a: size\nb: size\nc: size\nX: R^(a,b,c)\nexplain grad(sum(softmax(X, -1) * X), X)", []),
    "rank3_none@literal": ("X: R^(2,2,3)\nexplain grad(sum(log_softmax(X, -1) * X), X)", []),
    "rank2@symbolic": ("m: size\nn: size\nX: R^(m,n)\nexplain grad(sum(softmax(X, -1) * sg(X)), X)", ["stop sg(X)"]),
    "rank2@literal": ("X: R^(2,3)\nexplain grad(sum(softmax(X, -1) * sg(X)), X)", ["stop sg(X)"]),
    "rank1_written_max@symbolic": ("n: size\nx: R^n\nexplain grad(log(softmax(x - sg(max(x)))[0]), x)",
                                   ["stop sg(max(x))"]),
    "rank1_none@literal": ("x: R^3\nexplain grad(logsumexp(x) * sum(x), x)", []),
}


def _explanation(source: str) -> Explanation:
    results = [r for r in Session().run(source) if r is not None and r.kind == "explain"]
    return results[-1].steps[-1]


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_only_the_stops_the_user_wrote_have_entries(name):
    source, labels = WRITTEN[name]
    explanation = _explanation(source)
    text = to_plain(explanation)
    heads = [line.split(":")[0] for line in text.splitlines() if line.startswith("stop ")]
    assert heads == labels, text
    assert len(explanation.ledger) == len(labels)
    assert "max(X, axis=2)):" not in text and "max(u, axis=2)):" not in text  # the builtin's shift: no entry
    assert ("stop" in explanation.summary) == bool(labels), explanation.summary
    assert not explanation.summary.endswith("; ") and "; ;" not in explanation.summary
    assert ("true = kept + removed" in text) == bool(labels)
    assert explanation.check is not None and explanation.check.agrees  # the derivation equals grad's numbers


def test_a_stop_written_on_a_tensor_explained_by_components_is_one_entry():
    """sg(x_fgsm) of a literal-size vector is a stop per component once the request is lowered (the
    component ledger of `blocked`): one entry, named as written."""
    source = ("w: R^2\nx: R^2\nf(u) = sigmoid(dot(w, tanh(u)))\nx_fgsm = x - sign(grad(f(x), x))/10\n"
              "explain blocked(f(sg(x_fgsm)) * x[0], x)")
    explanation = _explanation(source)
    text = to_plain(explanation)
    assert len(explanation.ledger) == 1 and [e.verdict for e in explanation.ledger] == ["blocking"]
    assert "stop sg(x_fgsm): cuts the path from x[0], x[1]" in text
    assert text.count("\nstop ") == 1 and "one stop, blocking" in explanation.summary


SHARES = [MaxShare(0, *sp.symbols("x y", real=True)), MinShare(1, *sp.symbols("x y", real=True)),
          MaxShare(2, *sp.symbols("x y z", real=True)), MinShare(0, *sp.symbols("x y z", real=True))]


@pytest.mark.parametrize("share", SHARES, ids=str)
@pytest.mark.parametrize("point", [(1, 1, 1), (1, 2, 3), (3, 2, 1), (2, 2, 1), (1, 3, 3), (-1, 0, -1)])
def test_a_share_in_the_languages_builtins_has_the_shares_value_ties_included(share, point):
    symbols = sorted(share.free_symbols, key=str)
    at = dict(zip(symbols, map(sp.Integer, point)))
    shown = in_builtins(share)
    assert not shown.atoms(MaxShare, MinShare)
    assert sp.nsimplify(shown.subs(at)) == share.subs(at)


PPO = ("W: R^({n},{n})\ns: R^{n}\nA = 3/2\nold = -1\neps = 1/5\nlogp = log(softmax(W @ s)[0])\n"
       "ratio = exp(logp - sg(old))\nexplain grad(-min(ratio * sg(A), max(min(ratio, 1 + eps), 1 - eps) * sg(A)), W)")
STABLE = ("x: R^3\nstable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"
          "explain blocked(stable_softmax(x)[0], x)")


def _four_formats(step) -> list[str]:
    from rich.console import Console

    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(step))
    return [to_plain(step), to_latex(step), console.export_text(), json.dumps(to_json(step), ensure_ascii=False)]


def _backward_td() -> str:
    from tests.explain.test_latex_compiles import DERIVATIONS

    return DERIVATIONS["backward_td"]


HELPERS = {"ppo@3": lambda: PPO.replace("{n}", "3"), "ppo@n": lambda: "n: size\n" + PPO.replace("{n}", "n"),
           "stable_blocked": lambda: STABLE,
           "nested_max": lambda: "x: R^3\nexplain grad(max(max(x[0], x[1]), x[2]), x)",  # the rule's note
           "max_of_a_vector@n": lambda: "n: size\nx: R^n\nexplain grad(max(x), x)",  # LaTeX of its shares
           "backward_td": _backward_td}  # the tape's cut: what it adds, in JSON


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_no_derivation_names_a_share_helper(name):
    results = [r for r in Session().run(HELPERS[name]()) if r is not None and r.kind == "explain"]
    for step in results[-1].steps:
        for text in _four_formats(step):
            assert "max_share" not in text and "min_share" not in text and r"max\_share" not in text, text


@pytest.mark.parametrize("size", [3, "n"])
def test_the_jacobians_ledger_shows_the_identity_that_makes_its_zero(size):
    """The stable softmax's max inside a Jacobian: ∂f/∂m = 2·s·(Σₖ sₖ − 1), 0 only by Σₖ sₖ = 1, as the
    gradient's ledger shows it; the form is the arriving Jacobian (numbers: 0 at a random point)."""
    import numpy as np

    from gradlang.expr.tensor import numbers
    from gradlang.expr.tensor.nodes import Var

    source = ("n: size\n" if size == "n" else "") + f"x: R^{size}\nexplain jacobian(2*softmax(x - sg(max(x))) + x, x)"
    explanation = _explanation(source)
    [entry] = explanation.ledger
    assert entry.verdict == "neutral"
    form, identities = entry.zero_form
    assert form != 0 and identities == ("Σₖ sₖ = 1",)
    x = next(s for s in form.free_symbols if isinstance(s, Var))
    sizes = {s: 4 for s in x.shape if not s.is_number}
    point = {x: np.random.default_rng(40).normal(size=4 if sizes else 3)}
    assert np.allclose(np.asarray(numbers.evaluate(form, point, sizes), dtype=float), 0)
    text = to_plain(explanation)
    assert "stop sg(max(x)): cuts the path from x; adjoint arriving: 2*s*(sum(s) - 1) = 0  (Σₖ sₖ = 1)" in text
    assert "true = kept + removed: jacobian(unstopped(L), x) = J" in text


def test_a_stop_of_a_value_the_user_named_is_written_by_that_name():
    """sg(z_e) for the user's z_e = W @ x: the lines and the ledger write sg(z_e), no letter c₁ for it."""
    source = ("n: size\nW: R^(n,n)\ne: R^n\nd: R\nx: R^n\nz_e = W @ x\nz_q = z_e + sg(e - z_e)\n"
              "explain grad(sum((d * z_q - x)^2) + sum((sg(z_e) - e)^2), W)")
    text = to_plain(_explanation(source))
    assert "sg(z_e)" in text and "c₁" not in text and "c₂" not in text, text
    assert "stop sg(z_e): cuts the path from W; adjoint arriving: 2*sg(z_e) - 2*e" in text, text


def test_the_components_of_a_stop_of_a_users_name_are_named_by_it():
    """sg(x_fgsm) of a literal-size vector, explained by components: sg(x_fgsm[0]), sg(x_fgsm[1]) in the lines,
    never letters c₁, c₂ that the reader must look up."""
    source = ("w: R^2\nx: R^2\nf(u) = sigmoid(dot(w, tanh(u)))\nx_fgsm = x - sign(grad(f(x), x))/10\n"
              "explain blocked(f(sg(x_fgsm)) * x[0], x)")
    explanation = _explanation(source)
    plain, _, pretty, _ = _four_formats(explanation)
    assert "sg(x_fgsm[0])" in plain and "sg(x_fgsm[1])" in plain
    assert "c₁" not in plain and "c₂" not in plain and "where c" not in plain
    assert "sg(x_fgsm₀)" in pretty.replace(" ", "")


def test_a_stop_in_a_formula_with_floats_keeps_its_entry():
    """A float in the formula makes its integers floats (-x as -1.0*x, the importers' programs): the stop the
    user wrote is still found, so its entry is not dropped as a builtin's own."""
    from gradlang import Session
    from gradlang.render import to_plain

    for sizes in ("3", "n"):
        results = Session().run(f"x: R^{sizes}; w: R^{sizes}\nt = stop_gradient(x[0] * (1.0 - x))\n"
                                "L = sum((t - w)^2)\nexplain grad(L, w)")
        text = to_plain(results[-1])
        assert text.count("# stop t = sg(") == 1, text
        assert "irrelevant" in text, text
