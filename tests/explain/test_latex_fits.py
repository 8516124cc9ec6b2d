"""Every derivation of the examples fits a letter page in LaTeX (issue 40): long values and long reverse-pass
lines broken across rows, long formulas in the notes broken where a sentence may break.

One pdflatex run over all of them (the explained .grad files, each derivative statement of an example
explained, and a handful of the derivation tables' programs), in the plain article with amsmath that
tests/explain/test_latex_compiles.py uses; a marker before each derivation names the one a box belongs to.
Skipped where pdflatex is missing, unless GRADLANG_REQUIRE_LATEX=1, which makes that a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from gradlang.core.session import Session
from gradlang.render import to_latex
from tests.explain.every_program import example_gradients, file_programs, table_programs
from tests.explain.test_latex_compiles import DOCUMENT
from tests.safety import SAFETY_NET

TOLERANCE = 1.0  # points a line may stick out: less than a letter's width
_TABLE_SAMPLE = ("softmax", "jacobian:", "list:", "latex:", "issue40:")  # a few table programs of each kind
_OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\)")
_MARK = "@@derivation "


def _require_latex():
    if shutil.which("pdflatex") is None:
        if os.environ.get("GRADLANG_REQUIRE_LATEX") == "1":
            pytest.fail("pdflatex is not installed and GRADLANG_REQUIRE_LATEX=1")
        pytest.skip("pdflatex is not installed")


def _programs() -> list[tuple[str, str]]:
    """The examples' derivations, and the first two table programs of each kind."""
    every_table, tables = table_programs(), []
    for kind in _TABLE_SAMPLE:
        tables += [p for p in every_table if kind in p[0] and p not in tables][:2]
    examples = [p for p in file_programs() if not p[0].startswith("test")]
    return examples + example_gradients() + tables


def _body(source: str) -> str:
    results = [r for r in Session().run(source) if r is not None]
    return "\n".join(to_latex(step) for r in results for step in r.steps)


def _document() -> str:
    parts = []
    for name, source in _programs():
        parts.append(r"\typeout{%s%s}" % (_MARK, re.sub(r"[^\w:@.-]", "-", name)))
        parts.append(_body(source))
    return DOCUMENT % "\n\n".join(parts)


def _overfull(log: str) -> list[str]:
    """`name: Overfull …` for each line wider than the page by more than TOLERANCE."""
    found, current = [], "?"
    for line in log.splitlines():
        if line.startswith(_MARK):
            current = line[len(_MARK):]
        elif (wide := _OVERFULL.search(line)) and float(wide.group(1)) > TOLERANCE:
            found.append(f"{current}: {line}")
    return found


def test_every_derivation_of_the_examples_fits_a_letter_page(tmp_path):
    _require_latex()
    (tmp_path / "doc.tex").write_text(_document(), encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=SAFETY_NET)
    log = (tmp_path / "doc.log").read_text(encoding="latin-1")
    marks = [line for line in log.splitlines() if line.startswith(_MARK)]
    assert run.returncode == 0, (marks[-1:], log[log.find("\n!"):][:1500])
    assert len(marks) == len(_programs())
    assert _overfull(log) == []


def test_a_wide_line_is_found_and_named():
    """The check itself: a marker names the derivation, and only boxes past the tolerance count."""
    log = f"{_MARK}a.grad\nOverfull \\hbox (0.5pt too wide) in paragraph\n{_MARK}b:3\nOverfull \\hbox (20.1pt too wide) detected"
    assert _overfull(log) == ["b:3: Overfull \\hbox (20.1pt too wide) detected"]


def test_a_function_of_two_long_arguments_breaks_at_its_comma():
    """siamese_stop's norm(P W₀ + …, P W₁ + …)⁻¹ was one 136 pt row: now a row per argument, in brackets
    that may span rows."""
    import sympy as sp

    from gradlang.expr.primitives.vectors import Norm
    from gradlang.render.latex_break import pieces as _pieces

    a, b, c, d = sp.symbols("a b c d")
    rows = _pieces(1 / Norm(a*b + c*d + a*b*c*d + a + b + c + d, a*b*c + b*c*d + a*d + c**2*d + a + b), to_latex, 30)
    assert rows == [r"\Bigl(\operatorname{norm}\Bigl(a b c d + a b + a + b + c d + c + d,",
                    r"a b c + a d + a + b c d + b + c^{2} d\Bigr)\Bigr)^{-1}"]


def test_a_long_left_side_of_a_reverse_pass_line_has_a_row_of_its_own():
    """target_network's (1) ∂L/∂(9 max(W e₁)/10 + 1 − (W e₀)₀) = … was 20 pt too wide on one row: a line whose
    two sides together are long is broken, and a long left side stands alone, each side below it."""
    from types import SimpleNamespace

    import sympy as sp

    from gradlang.explain.formula import Math
    from gradlang.render.latex_break import pieces as _pieces
    from gradlang.render.vector_lines import latex_rows

    lhs, rhs = Math("", "x" * 90), Math("", "y" * 80)
    vector = SimpleNamespace(lets=[], lines=[SimpleNamespace(lhs=[lhs], rhs=[[rhs]], rule=[Math("", "r")])])
    assert latex_rows(vector, to_latex, (), _pieces)[:2] == [rf"&(1)\quad {'x' * 90} \\", rf"&\qquad = {'y' * 80} \\"]
    vector.lines[0].lhs = [sp.Symbol("x")]
    assert latex_rows(vector, to_latex, (), _pieces)[0] == rf"&(1)\quad x = {'y' * 80} \\"
