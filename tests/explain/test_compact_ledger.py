"""Issue #39/#40 on published losses: one ledger entry per written stop however many, names the pass reads.

- past GROUPED stops each entry is compact (the stop, the path it cuts, its verdict: one line, two if wide),
  never a group by verdict (DreamerV3's KL balance writes 12 stops);
- a stop written inside another stop has its entry: irrelevant (MoCo v3's momentum update under no_grad,
  inside the stopped keys), found though the formula explained has its numbers folded to floats;
- a binding of the user's is named as the formula holds it: its integers made floats, a product inside
  SymPy's flat product (0.99*t6 with t6 = t5*sigmoid(x));
- the walls are named over the DAG (no tree walk), and a value's components are not lowered when its tree is
  past what could print shorter.
"""

from __future__ import annotations

import re

import sympy as sp

from gradlang import Session
from gradlang.render import to_json, to_plain

MANY = ("n: size\nx: R^n\n" + "".join(f"a{k} = sg(x^{k + 2})\n" for k in range(10))
        + "explain grad(sum(" + " + ".join(f"a{k}*x" for k in range(10)) + "), x)")


def _explained(program: str):
    result = [r for r in Session().run(program) if r is not None][-1]
    return result, to_plain(result)


def test_a_long_ledger_gives_each_written_stop_one_compact_entry():
    result, text = _explained(MANY)
    entries = re.findall(r"^# stop .*$", text, re.M)
    assert len(entries) == 10 and not re.search(r"^# stops ", text, re.M), text
    assert "# stop a3: cuts the path; blocking: removes r₄ = 5*a3" in entries, text  # a3 = sg(x^5): 5 x^4 · x/x
    assert "= g + r₁ + r₂ + … + r₁₀" in text, text
    assert all(len(line) <= 100 for line in text.splitlines()[:-1]), text
    assert "✓ equals grad" in text
    stops = to_json(result)["steps"][-1]["stops"]
    assert [s["verdict"] for s in stops] == ["blocking"] * 10


def test_a_stop_written_inside_another_has_its_entry():
    result, text = _explained("n: size\nx: R^n\ny: R^n\na = sg(x - y)\nb = sg(0.5*a*x + 1)\n"
                              "explain grad(sum(b*x^2), x)")
    assert "# stop a: inside the stop b; irrelevant: no adjoint flows inside a stop" in text, text
    assert "two stops: one irrelevant, one blocking" in text, text
    assert [e.verdict for e in result.steps[-1].ledger] == ["irrelevant", "blocking"]
    assert "= g + r₁ (g = grad(L, x))" in text and "✓ equals grad" in text, text


def test_a_binding_is_named_inside_a_float_product():
    _, text = _explained("n: size\nx: R^n\ny: R^n\nt5 = exp(x - y)\nt6 = t5*sigmoid(x)\n"
                         "explain grad(sum(log(0.99*t6 + 0.0025)*y), x)")
    assert "# let  t5 = exp(x - y)\n#      t6 = t5*sigmoid(x)\n" in text, text
    assert "# (6)  ∂L/∂x = 0.99*t6*y*(2 - sigmoid(x))/(0.99*t6 + 0.0025)" in text, text
    assert "✓ equals grad" in text


def test_a_binding_no_pass_line_reads_gets_no_let():
    _, text = _explained("n: size\nx: R^n\nh = tanh(x)\nunused = sg(h*2)\nk = sg(exp(x))\n"
                         "explain grad(sum(h*k) + sum(unused), x)")
    assert "unused =" not in text.split("# (1)")[0], text
    assert "✓ equals grad" in text


def test_wall_names_walk_no_tree(monkeypatch):
    """Each distinct part once: SymPy's tree walks (xreplace, preorder_traversal) are never asked."""
    from gradlang.expr.tensor.nodes import Var
    from gradlang.explain.tensor.names import wall_names

    n = sp.Symbol("n", integer=True, positive=True)
    x, w = Var("x", (n,)), Var("w", (n,))
    v = x
    for _ in range(6):
        v = v * sp.tanh(v + w) + w  # a DAG of 6 levels whose parts repeat at every level
    lines = [[v], [v * sp.exp(v)]]

    def refused(*args, **kwargs):
        raise AssertionError("a tree walk")

    monkeypatch.setattr(sp.Basic, "xreplace", refused)
    monkeypatch.setattr(sp, "preorder_traversal", refused)
    named = wall_names(lines, {"x", "w"})
    assert named and all(name.name not in ("x", "w") for _, name in named)


def test_a_value_whose_tree_is_huge_is_not_lowered_to_be_shown(monkeypatch):
    from gradlang.expr.tensor import lower
    from gradlang.render.shown import shorter

    session = Session()
    session.run("x: R^3\nv = x\n" + "v = v*v + v\n" * 12)
    value = session.env["v"]

    def refused(*args, **kwargs):
        raise AssertionError("lowered")

    monkeypatch.setattr(lower, "components", refused)
    assert shorter(value) is value
