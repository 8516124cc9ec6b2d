"""Notes: explain's sentences keep their expressions apart, are composed once by explain, and each printer spells them."""

from __future__ import annotations

import sympy as sp

from gradlang.core.session import Session
from gradlang.expr import primitives
from gradlang.explain.formula import Math
from gradlang.explain.note import Note, listed, note
from gradlang.explain.scalar.rules import VECTOR_RULES
from gradlang.render import to_json, to_latex, to_plain
from gradlang.render.latex import to_latex as latex
from gradlang.render.notes import latex_note, latex_rows, plain_note

X = sp.Symbol("x", real=True)


def _explanation(program: str):
    return Session().run(program)[-1].steps[0]


def test_a_note_keeps_words_notation_and_values_apart():
    said = note(X**2, " is treated as a constant, so ", Math("∂", r"\partial"), " is ", sp.S.Zero)
    assert said.parts[0] == X**2 and said.parts[1].startswith(" is")
    assert str(said) == "x^2 is treated as a constant, so ∂ is 0"
    assert latex_note(said, latex) == r"$x^{2}$ is treated as a constant, so $\partial$ is $0$"
    assert plain_note(said, lambda e: "<e>") == "<e> is treated as a constant, so ∂ is <e>"


def test_empty_words_and_nested_notes_flatten():
    assert note("", note("a", ""), X).parts == ("a", X)
    assert not Note() and not note("")


def test_a_list_names_at_most_three_then_counts():
    assert str(listed(sp.symbols("a b c d e"))) == "a, b, c, 2 more"
    assert str(listed(sp.symbols("a b"))) == "a, b"


def test_long_formulas_in_latex_get_display_rows():
    long = sp.Add(*[sp.Symbol(f"w{k}") * X**k for k in range(12)])
    rows = latex_rows(note("blocking: removes ", long), latex, lambda value, show: [show(value)])
    assert rows[0] == r"\intertext{\sloppy blocking: removes}"
    assert rows[1].startswith(r"&\quad ") and rows[1].endswith(r" \\")
    assert latex_rows(note("removes ", X), latex, None) == [r"\intertext{\sloppy removes $x$}"]


def test_the_vector_rules_say_what_their_records_say():
    for name, rule in VECTOR_RULES.items():
        assert str(rule) == primitives.lookup(name).rule


def test_a_step_note_holds_its_expressions():
    explanation = _explanation("y: R\nexplain diff(y*stop_gradient(y^3), y)")
    stop = explanation.steps[0].substeps[-1]
    assert stop.rule == "stop_gradient"
    assert stop.note.parts[0] == sp.Symbol("y", real=True) ** 3
    assert "$y^{3}$ is treated as a constant" in to_latex(explanation)
    assert "y^3 is treated as a constant, so its derivative 3*y^2 does not flow back" in to_plain(explanation)


def test_why_zero_and_the_ledger_are_computed_by_explain():
    explanation = _explanation("x: R\ny: R\nexplain diff(stop_gradient(x^3) + y, x)")
    assert [str(w) for w in explanation.why] == ["stopped: x appears only inside sg(x^3)"]
    (head, verdict), = explanation.sentences
    assert str(head) == "stop sg(x^3): cuts the path from x; adjoint arriving: 1"
    assert str(verdict) == "blocking: removes r₁ = 3*x^2"
    assert to_json(explanation)["stops"][0]["words"] == "blocking: removes r₁ = 3*x^2"
    assert "why zero: stopped: $x$ appears only inside" in to_latex(explanation)


def test_a_tensor_ledger_sentence_names_the_stop_once():
    explanation = _explanation("x: R^3\nexplain grad(sum(x * stop_gradient(x)), x)")
    (head, verdict), = explanation.sentences
    assert str(head).startswith("stop sg(x): cuts the path from x; adjoint arriving: x")
    assert str(verdict) == "blocking: removes r₁ = x"
