"""No unexplained letter (issue 40): in the plain text of every derivation of tests/ and examples/
(tests/explain/every_program.py), each name a formula uses is the user's (a name the program writes:
declared, bound, a function, its parameters, a builtin it calls) or is introduced before the reader needs
it: by the let block, by a `where` or an `r₁ = …` of a line, or by a line of the value under the derivation
(`t1 = exp(x)`). The formulas read are those of the let block, the numbered lines (without their rule) and
the value; the sentences are words.
"""

from __future__ import annotations

import re

import pytest

from gradlang.core.session import Session
from gradlang.render import to_plain
from tests.explain.every_program import every_program

_NAME = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)(?![\w(]|=(?!=))")  # a name, not a call's (softmax( is the
# language's) nor a keyword argument's (softmax(S, axis=2))
_RULE = re.compile(r"\s{2,}\[[^\]]*\]\s*$")        # a numbered line's rule, [softmax: …]
_LET_NOTE = re.compile(r"\s{2,}\(.*\)\s*$")         # a let line's note, (stopped: …)
_DERIVATIVE = re.compile(r"\bd\w*/d\w+")           # d/dz, d²/dx²: notation, not names
_STRING = re.compile(r'"[^"]*"')                     # einsum("bij,bjk->bik", …): subscripts, not names
_LET = re.compile(r"^# (?:let )?\s+([^\s=]+) = (.*)$")
_VALUE = re.compile(r"^([A-Za-z_]\w*) = (.*)$")
_INTRODUCED = re.compile(r"(?:where|removes) ([A-Za-z_]\w*) = ")
_NOTATION = {"L"}  # the loss a line differentiates (∂L/∂x), named in the title


def formulas(text: str) -> tuple[set, list]:
    """(the names the text introduces, the formulas it writes) of one derivation's plain text."""
    introduced, written, in_let = set(_INTRODUCED.findall(text)), [], False
    for line in text.splitlines():
        in_let = line.startswith("# let  ") or in_let and line.startswith("#      ") and not line.startswith("#       ")
        let = _LET.match(line) if in_let else None
        if let:
            introduced.add(let.group(1))
            written.append(_LET_NOTE.sub("", let.group(2)))
        elif line.startswith("# ("):
            written.append(_RULE.sub("", re.sub(r"^# \(\d+\)\s+", "", line)))
        elif not line.startswith("#"):
            value = _VALUE.match(line)
            if value:
                introduced.add(value.group(1))
            written.append(re.sub(r"\s+#.*$", "", value.group(2) if value else line))
    return introduced, written


def title(text: str) -> str:
    """The derivative call a derivation's title writes (`grad(sum(q^2), W)`, `jacobian(s, x)[0, 2]`): the first
    line's text up to the bracket that closes its call, and a selection after it."""
    line, level = text.splitlines()[0].removeprefix("# "), 0
    for i, char in enumerate(line):
        level += (char in "([") - (char in ")]")
        if char in ")]" and level == 0 and line[i + 1:i + 2] != "[":
            return line[:i + 1]
    return line


def unexplained(source: str) -> list:
    """(name, formula) for each name a derivation of the program writes without the reader knowing it. The
    title comes before any line that introduces a name: it may write only the user's."""
    users = set(re.findall(r"[A-Za-z_]\w*", source)) | _NOTATION
    found = []
    for result in Session().iter_run(source):
        if result is None or result.kind != "explain":
            continue
        text = to_plain(result)
        introduced, written = formulas(text)
        called = title(text)
        found += [(name, called) for name in _names_in(called) if name not in users]
        for formula in written:
            found += [(name, formula) for name in _names_in(formula) if name not in introduced and name not in users]
    return found


def _names_in(formula: str) -> list:
    return _NAME.findall(_STRING.sub('""', _DERIVATIVE.sub("", formula)))


PROGRAMS = every_program()


@pytest.mark.parametrize("name, source", PROGRAMS, ids=[name for name, _ in PROGRAMS])
def test_every_letter_of_a_derivation_is_the_users_or_introduced(name, source):
    assert unexplained(source) == []


def test_a_letter_no_line_introduces_is_found():
    """The check itself: a value naming t2 that no line defines is reported, one the let block names is not."""
    text = "# (1)  ∂L/∂x = c*x  [product rule]\n# let  c = stop_gradient(x)\nt1 = exp(x)\nt1 + t2*c\n"
    introduced, written = formulas(text)
    assert introduced == {"c", "t1"} and "t1 + t2*c" in written
    names = {n for w in written for n in _NAME.findall(w)} - introduced - {"x", "L"}
    assert names == {"t2"}


def later_lets(source: str) -> list:
    """(name, let line) for each let that reads a name the let block introduces only below it."""
    found = []
    for result in Session().iter_run(source):
        if result is None or result.kind != "explain":
            continue
        lets = [m for m in map(_LET.match, _let_block(to_plain(result))) if m]
        names = [m.group(1) for m in lets]
        for k, let in enumerate(lets):
            read = set(_NAME.findall(_LET_NOTE.sub("", let.group(2))))
            found += [(name, let.group(0)) for name in read if name in names[k + 1:]]
    return found


def _let_block(text: str) -> list:
    """The lines of a derivation's let block (`# let  a = …` and the `#      b = …` under it), as formulas reads."""
    block, in_let = [], False
    for line in text.splitlines():
        in_let = line.startswith("# let  ") or in_let and line.startswith("#      ") and not line.startswith("#       ")
        block += [line] if in_let else []
    return block


STE = ("x: R^n\nW: R^(n, n)\nh = W @ x\nq = h + stop_gradient(round(h) - h)\nloss = sum(q^2)\n"
       "explain grad(loss, W)\n")


@pytest.mark.parametrize("name, source", PROGRAMS + [("ste", STE)], ids=[name for name, _ in PROGRAMS] + ["ste"])
def test_a_let_reads_only_the_lets_above_it(name, source):
    """A stop's letter came first in the let block, so `c = sg(round(h) - h)` stood above `h = W @ x`."""
    assert later_lets(source) == []


def test_pretty_puts_a_stops_letter_after_the_lets_it_reads_too():
    """Pretty marks a stopped value's characters in a private plane, so the stop's text did not read `h` and
    the REPL still printed c = sg(round(h) − h) above h = W x."""
    from gradlang.explain.explanation import Explanation
    from gradlang.render import vector_lines
    from gradlang.render.derivation import _Shown
    from gradlang.render.pretty import to_line

    result = Session().run(STE)[-1]
    explanation = next(s for s in result.steps if isinstance(s, Explanation))
    show = _Shown(explanation, lambda value: to_line(value, False))
    lines = vector_lines.plain_lines(explanation.vector, show, show.legend())
    names = [line.split(" = ")[0].split()[-1] for line in lines if " = " in line and not line.startswith("(")]
    assert names.index("h") < names.index("c"), lines


def test_a_title_too_long_to_read_names_the_loss_as_the_user_did():
    """SwAV's title wrote its loss out over four lines; a formula past _LONG_TITLE characters that the user bound
    to a name is titled by that name (grad(loss, W)), and a short one is still written out."""
    terms = " + ".join(f"sum(exp(W @ x)^{k})/{k}" for k in range(2, 12))
    long_source = f"x: R^3\nW: R^(3,3)\nloss = {terms}\nexplain grad(loss, W)"
    title = to_plain(Session().run(long_source)[-1]).splitlines()[0]
    assert title.startswith("# grad(loss, W):"), title
    short = to_plain(Session().run("x: R^3\nW: R^(3,3)\nloss = sum(exp(W @ x))\nexplain grad(loss, W)")[-1])
    assert short.startswith("# grad(sum(exp(W @ x)), W):"), short
