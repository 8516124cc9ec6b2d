"""The loss's letter never is a name the user bound to something else (issue 40, one set of names).

A derivation writes the function it differentiates as L (∂L/∂u, unstopped(L)). Soft Q-learning's program
binds L to the TD error and its loss is `loss = L^2/2`: the lines read ∂L/∂L = …, two things by one letter.
The letter is chosen once per request (explain/loss_letter.py) and every format writes it: the lines, the
ledger's identity, LaTeX, pretty and JSON.
"""

from __future__ import annotations

import io
import json

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich

HEAD = "n: size\nx: R^n\nW: R^(n, n)\n"


def _explained(source: str):
    return [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _formats(source: str) -> dict:
    from rich.console import Console

    result = _explained(source)
    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(result))
    return {"plain": to_plain(result), "latex": to_latex(result), "pretty": console.export_text(),
            "json": json.dumps(to_json(result), ensure_ascii=False)}


def _letter_everywhere(texts: dict, letter: str) -> None:
    """Every format writes the adjoints and the identity with `letter`, and none with the user's L."""
    for kind in ("plain", "pretty", "json"):
        text = texts[kind]
        assert f"∂{letter}/∂W" in text and f"unstopped({letter})" in text, (kind, text)
        assert "∂L/∂W" not in text and "unstopped(L)" not in text, (kind, text)
    latex = texts["latex"]
    assert rf"\partial {letter}}}{{\partial W}}" in latex and rf"\operatorname{{unstopped}}({letter})" in latex, latex
    assert r"\frac{\partial L}" not in latex and r"\partial L/" not in latex, latex
    assert r"\operatorname{unstopped}(L)" not in latex, latex


def test_the_users_L_is_not_the_loss_so_the_loss_goes_by_its_own_name():
    """soft Q's shape: L the TD error, loss = L^2/2; ∂loss/∂L reads where ∂L/∂L did."""
    texts = _formats(HEAD + "r: R\nL = (W @ x)[0] - r - sg(sum(W @ x))\nloss = L^2/2\nexplain grad(loss, W)\n")
    _letter_everywhere(texts, "loss")
    assert "∂loss/∂L = " in texts["plain"] and "∂L/∂L" not in texts["plain"]
    assert "✓ equals grad" in texts["plain"]


def test_an_unnamed_loss_beside_the_users_L_takes_the_first_free_letter():
    """No name of the user's for the loss: E, and C when the user bound E too (never L, never a bound name)."""
    body = "L = W @ x\nexplain grad(sum(L^2)/2 + sg(sum(L))*sum(L), W)\n"
    _letter_everywhere(_formats(HEAD + body), "E")
    bound_e = _formats(HEAD + "E = 3\n" + body)
    _letter_everywhere(bound_e, "C")
    assert "unstopped(E)" not in bound_e["plain"] and "∂E/∂" not in bound_e["plain"]


def test_a_long_name_for_the_loss_gives_a_letter_not_a_wide_line():
    texts = _formats(HEAD + "L = W @ x\ntotal_loss = sum(L^2) + sg(sum(L))*sum(L)\nexplain grad(total_loss, W)\n")
    _letter_everywhere(texts, "E")


def test_the_users_L_that_is_the_loss_keeps_L():
    """Double DQN's L is its loss: ∂L/∂W, as before."""
    text = to_plain(_explained(HEAD + "L = sum((W @ x)^2) + sg(sum(W @ x))\nexplain grad(L, W)\n"))
    assert "∂L/∂W" in text and "unstopped(L)" in text


def test_the_identity_of_a_derivation_by_components_takes_the_letter_too():
    """The rule table's derivation never writes ∂L/∂, but its ledger's identity does."""
    text = to_plain(_explained("x: R\nL = x^2\nexplain diff(L*sg(x) + L, x)\n"))
    assert "diff(unstopped(E), x) = g + r₁ (g = diff(E, x))" in text, text


def test_no_name_the_derivation_makes_up_is_the_loss_letter():
    """A let the pass names itself (u, z, δ) is never the letter the loss goes by."""
    import re

    text = to_plain(_explained(HEAD + "L = 2\nE = 3\nC = 4\nexplain grad(sum(tanh(W @ x) * sg(tanh(W @ x))), W)\n"))
    letter = re.search(r"unstopped\((\w+)\)", text).group(1)
    assert letter not in ("L", "E", "C")
    assert not re.search(rf"^# (let |     )\s*{letter} = ", text, re.M), text
