"""A stop is named by what it stops (issue 40): `sg(z1)` in every format, the plain derivation included; a
short stop is written as itself, each instance of a stop written once in a function too (`sg(1 - b)`,
never c₄, c₅, c₆); a wide title breaks between its terms; sides the names make equal are said once."""

from __future__ import annotations

from pathlib import Path

from gradlang import Session
from gradlang.render import to_plain

ROOT = Path(__file__).resolve().parents[2]
REINFORCE = "grad(sg(pi[0]) * surrogate(0) + sg(pi[1]) * surrogate(1) + sg(pi[2]) * surrogate(2), theta)"
STABLE = "stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"


def _explained(source: str):
    return [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _lines(source: str) -> list[str]:
    return [line for line in to_plain(_explained(source)).splitlines() if line.startswith("#")]


def _example_explain(name: str, statement: str) -> str:
    """The example up to the statement, then the statement explained (tests/explain/every_program.py's way)."""
    source = (ROOT / "examples" / f"{name}.grad").read_text()
    return source[:source.rindex(statement)] + f"\nexplain {statement}\n"


def test_the_plain_title_writes_a_stop_of_a_users_name_as_pretty_does():
    """siamese_stop: the title wrote stop_gradient(z1) four times, 146 columns; pretty wrote sg(z1)."""
    lines = _lines(_example_explain("siamese_stop", "blocked(L, P)"))
    head = lines.index(next(line for line in lines if line.startswith("# blocked(")))
    title = " ".join(lines[head:head + 2])  # broken before its second term
    assert "sg(z1)" in title and "sg(z2)" in title and "stop_gradient" not in title
    assert max(len(line) for line in lines) <= 100


def test_a_stop_written_once_in_a_function_is_written_as_itself_at_each_call():
    """reinforce: surrogate(a) = log(pi[a]) * sg(R[a] - b), called at 0, 1, 2: sg(1 - b), sg(-b), sg(2 - b)
    where the let block named them c₄, c₅, c₆ (26 lines); sg(pi[0]) is short in the user's names too."""
    lines = _lines(_example_explain("reinforce", REINFORCE))
    text = "\n".join(lines)
    assert "sg(1 - b)" in text and "sg(-b)" in text and "sg(2 - b)" in text and "sg(pi[0])" in text
    assert not any(letter in text for letter in ("c₁", "c₄", "c₆", "stop_gradient"))
    assert len(lines) <= 25 and max(len(line) for line in lines) <= 100


def test_a_wide_title_breaks_before_the_terms_of_its_sum():
    lines = _lines(_example_explain("reinforce", REINFORCE))
    head = lines.index(next(line for line in lines if line.startswith("# grad(")))
    assert lines[head + 1].startswith("#      + log(pi[2])*sg(2 - b)*sg(pi[2]), theta):"), lines[head:head + 2]


def test_the_value_under_a_plain_derivation_reads_back():
    """The value under a derivation writes its stops as the derivation does, sg(u), which is gradlang."""
    result = _explained("x: R^3\nexplain grad(x[0] * sg(x[2]) + x[1]^2, x)")
    value = to_plain(result).splitlines()[-1]
    assert "sg(" in value and "stop_gradient" not in value
    session = Session()
    session.run("x: R^3")
    again = session.run(f"v = {value}\nv - grad(x[0] * sg(x[2]) + x[1]^2, x)")[-1]
    assert to_plain(again.value) in ("[0, 0, 0]", "0")


def test_a_ledger_line_that_shows_an_adjoint_is_zero_names_its_repeated_part():
    """The stable softmax's stop, sg(max(x)), is short and written as itself; the ledger's identity
    `s[0]*sum(s) - s[0] = 0` is measured as printed, so s is named (it ran 124 columns)."""
    lines = _lines("x: R^3\n" + STABLE + "explain blocked(stable_softmax(x)[0], x)")
    assert "# let  s = softmax(x - sg(max(x)))" in lines
    assert any("adjoint arriving: s[0]*sum(s) - s[0] = 0  (Σₖ sₖ = 1)" in line for line in lines)
    assert max(len(line) for line in lines) <= 100


def test_the_rules_letter_for_a_stopped_value_is_none_the_derivation_uses():
    """reinforce names u in its let block; a removed term given by its rule said `ā·∂u/∂theta (u stopped)`
    beside it, two values one letter: the rule takes the first letter the derivation leaves free. (Its r₂,
    three terms, is written out now, on three lines: the rule is for a term too long for four.)"""
    from gradlang.explain.explanation import Explanation
    from gradlang.explain.ledger.words import _by_rule
    from gradlang.explain.note import note

    lines = _lines(_example_explain("reinforce", REINFORCE))
    assert any(line.startswith("#      u = ") for line in lines)
    assert "#    blocking: removes r₂ = pi*(pi[0]*log(pi[0])*dot([1, 0, 2], pi) - pi[0]*[1, 0, 2]*log(pi[0]))" in lines
    assert "#       + pi*(pi[2]*log(pi[2])*dot([1, 0, 2], pi) - pi[2]*[1, 0, 2]*log(pi[2]))" in lines
    step = next(s for s in _explained(_example_explain("reinforce", REINFORCE)).steps if isinstance(s, Explanation))
    rule = note(*_by_rule([e for e in step.ledger if e.verdict == "blocking"][1], step.vector.display, step.request.expr))
    assert str(rule) == "ā·∂v/∂theta (ā arriving, v stopped)"
