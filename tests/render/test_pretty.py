"""Pretty output: golden transcripts at a fixed width without colour, and the stop marking."""

from __future__ import annotations

import io

import numpy as np
import pytest
import sympy as sp
from golden_util import GOLDEN, check_golden, transcript
from rich.console import Console

from gradlang.expr.functions import Maximum, Where
from gradlang.render.pretty import STOP_LABEL_STYLE, STOPPED_STYLE, format_pretty_float, to_pretty, to_text
from gradlang.expr.stopgrad import StopGradient

x, y = sp.symbols("x y", real=True)


def test_golden_pretty_transcript():
    source = (GOLDEN / "lecture.grad").read_text(encoding="utf-8")
    check_golden("lecture.pretty.txt", transcript(source, "pretty", width=80))


ROWS = [
    (x * StopGradient(x), "x⋅sg(x)"),
    (StopGradient(x) ** 2, "     2\nsg(x) "),
    (sp.Symbol("x[0]", real=True), "x₀"),
    (sp.Symbol("W[1, 2]", real=True), "W₁,₂"),
    (sp.Symbol("alpha", real=True), "α"),
    (Maximum(x, y), "max(x, y)"),
    (sp.Float(0.30000000000000004), "0.3"),
    (sp.Float(2.0), "2.0"),
    (sp.true, "true"),
    (np.array([1.0, 0.5, np.nan]), "[1.0  0.5  nan]"),
]


@pytest.mark.parametrize("value, expected", ROWS, ids=[r[1] for r in ROWS])
def test_pretty_rows(value, expected):
    assert to_pretty(value) == expected


def test_matrices_are_aligned():
    art = to_pretty(sp.ImmutableMatrix([[x**2, 1], [3, y / 2]]))
    rows = art.split("\n")
    assert len({len(r) for r in rows}) == 1 and rows[0].startswith("⎡") and rows[-1].startswith("⎣")


def test_where_is_shown_as_cases():
    assert "otherwise" in to_pretty(Where(x > 0, x, y))


def test_stopped_region_is_styled():
    text = to_text(x * StopGradient(x / (y + 1)))
    styled = {text.plain[span.start : span.end]: str(span.style) for span in text.spans}
    assert STOPPED_STYLE in styled.values() and STOP_LABEL_STYLE in styled.values()
    stopped = "".join(text.plain[s.start : s.end] for s in text.spans if str(s.style) == STOPPED_STYLE)
    assert "x" in stopped and "y" in stopped and "+" in stopped
    assert "sg" in "".join(text.plain[s.start : s.end] for s in text.spans if str(s.style) == STOP_LABEL_STYLE)


def test_colour_output_marks_stops_with_ansi_codes():
    out = io.StringIO()
    Console(file=out, width=80, force_terminal=True, color_system="standard").print(to_text(x * StopGradient(y)))
    assert "\x1b[" in out.getvalue() and "sg" in out.getvalue()


def test_without_colour_the_sg_notation_remains():
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(to_text(x * StopGradient(y)))
    assert out.getvalue() == "x⋅sg(y)\n"


def test_float_precision():
    assert format_pretty_float(2.718281828459045) == "2.718281828"
    assert format_pretty_float(1e-10) == "1e-10"
    assert format_pretty_float(float("inf")) == "inf"


def test_a_vector_of_conditions_is_drawn_without_a_library_warning():
    """SymPy deprecates a Matrix of non-expressions: a row of conditions must not be built as one."""
    import warnings

    from gradlang.expr.values import from_elements

    conditions = from_elements((2,), [sp.StrictLessThan(x, 1), sp.StrictLessThan(y, 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_pretty(conditions) == "[x < 1  y < 1]"
