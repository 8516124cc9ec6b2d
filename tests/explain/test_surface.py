"""The surface of explain: explain[depth=N], component selection, the closing check.

Selections are checked against the engine: the derivation of grad(e, x)[i]
has one component, and what it derives equals grad(e, x)[i]. The closing
check is checked against numbers computed independently (the statement's
own value at the point), and made to fail on purpose to see it say so.
"""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
import sympy as sp

from gradlang.core.explain_check import checked
from tests.component_session import ComponentSession
from gradlang.expr.tensor.lower import lowered
from gradlang.core.explaining import Point
from gradlang.core.session import Session
from gradlang.errors import SyntaxError, ValueError
from gradlang.expr.values import elements, to_symbolic
from gradlang.render import to_json, to_latex, to_plain
from gradlang.render.plain import derivation_text
from gradlang.render.messages import error_text
from gradlang.shell.help import explain_completions


def _explained(source: str):
    """The explanations and the value of the last statement of a program."""
    result = Session().run(source)[-1]
    return result.steps, result.value


def _error(source: str):
    with pytest.raises((SyntaxError, ValueError)) as caught:
        Session().run(source)
    caught.value.attach_source(source)
    return caught.value


# --- explain[depth=N] -----------------------------------------------------------


def test_the_depth_option_sets_the_depth_of_this_statement_only():
    steps, _ = _explained("explain[depth=1] diff(sin(x)^2, x)")
    assert steps[0].depth == 1
    assert _explained("explain[depth=all] diff(sin(x)^2, x)")[0][0].depth is None
    assert _explained("explain[ depth = 0 ] diff(sin(x)^2, x)")[0][0].depth == 0
    assert Session(explain_depth=5).run("explain diff(x^2, x)")[0].steps[0].depth == 5
    assert Session(explain_depth=5).run("explain[depth=1] diff(x^2, x)")[0].steps[0].depth == 1


def test_the_depth_option_shows_as_much_as_the_flag():
    # not a vector identity (those are derived once, without depth): a deep scalar composition
    source = "x: R^3\nexplain{} grad(sin(x[0] * cos(x[1] * exp(x[2]^2))), x)"
    for depth, flag in (("[depth=1]", 1), ("[depth=all]", None), ("[depth=3]", 3)):
        by_option = to_plain(Session().run(source.format(depth))[-1])
        by_flag = to_plain(Session(explain_depth=flag).run(source.format(""))[-1])
        assert by_option == by_flag
    shallow = to_plain(Session().run(source.format("[depth=1]"))[-1])
    assert "explain[depth=2] (or depth=all) shows them" in shallow
    assert "below depth" not in to_plain(Session().run(source.format("[depth=all]"))[-1])


def test_a_bracket_after_explain_is_still_a_vector_when_it_is_not_an_option_list():
    assert _explained("explain [diff(x^2, x), depth]")[1] == sp.ImmutableDenseNDimArray(
        [2 * sp.Symbol("x", real=True), sp.Symbol("depth", real=True)])


@pytest.mark.parametrize("source, kind, column, words", [
    ("explain[deep=1] diff(x^2, x)", "SyntaxError", 9, "no option 'deep'"),
    ("explain[depth=-1] diff(x^2, x)", "ValueError", 15, "whole number"),
    ("explain[depth=1.5] diff(x^2, x)", "ValueError", 15, "whole number"),
    ("explain[depth=some] diff(x^2, x)", "ValueError", 15, "or all"),
    ("explain[depth=1, depth=2] diff(x^2, x)", "SyntaxError", 18, "given twice"),
    ("y = 1\nexplain[depth=x] diff(x^2, x)", "ValueError", 15, "whole number"),
])
def test_a_bad_option_is_an_error_with_its_place(source, kind, column, words):
    error = _error(source)
    assert error.kind == kind and words in error.message
    assert (error.line, error.column) == (source.count("\n") + 1, column)
    text = error_text(error)
    caret_line = text.splitlines()[-1]
    assert caret_line.index("^") == text.splitlines()[-2].index(source.splitlines()[-1]) + column - 1


def test_an_option_list_with_nothing_after_it_is_a_syntax_error():
    error = _error("explain[depth=1]")
    assert error.kind == "SyntaxError" and error.line == 1


def test_the_repl_completes_options_inside_explain_brackets():
    assert explain_completions("explain[") == ("", ["depth=", "unfold"])
    assert explain_completions("explain[depth=a") == ("a", ["all"])
    assert explain_completions("explain diff(") is None


# --- component selection ----------------------------------------------------------


SELECTIONS = [
    ("x: R^3", "grad(x[0]^2 * sin(x[1]) * x[2], x)", [(0,), (1,), (2,), (-1,)]),
    ("x: R^3", "jacobian([x[0]*x[1], sin(x[2]), x[0]^3], x)", [(0, 1), (2, 0), (1,), (-1, -1)]),
    ("x: R^2", "jacobian(x[0] * sg(x[1]), x)", [(0,), (1,)]),
    ("W: R^(2,2)\nv: R^2", "grad(sum(W @ v)^2, W)", [(0, 1), (1,)]),
    ("x: R^2", "hessian(x[0]^3 * x[1]^2, x)", [(0, 1), (1, 1)]),
    ("x: R", "diff([x^2, sin(x), x*sg(x)], x)", [(1,), (2,)]),
    ("x: R^2", "blocked(x[0] * sg(x[0] * x[1]), x)", [(0,), (1,)]),
]


def _cases():
    for setup, call, selections in SELECTIONS:
        for index in selections:
            yield pytest.param(setup, call, index, id=f"{call}{list(index)}")


@pytest.mark.parametrize("setup, call, index", list(_cases()))
def test_a_selection_derives_only_the_selected_components(setup, call, index):
    written = ", ".join(str(i) for i in index)
    steps, value = _explained(f"{setup}\nexplain {call}[{written}]")
    value = lowered(value)  # the value is the one formula; the oracle holds components
    # explain derives at literal sizes by components: its reference is the component engine's value
    whole = ComponentSession().run(f"{setup}\n{call}")[-1].value
    whole = to_symbolic(whole)
    expected = whole[index] if len(index) > 1 else whole.row(index[0]) if len(whole.shape) == 2 else whole[index[0]]
    assert [sp.simplify(a - b) for a, b in zip(elements(to_symbolic(value)), elements(to_symbolic(expected)))] \
        == [0] * len(elements(to_symbolic(expected)))
    (explanation,) = steps
    if explanation.request.operation != "blocked":
        derived = elements(to_symbolic(lowered(explanation.derived)))
        assert [sp.simplify(a - b) for a, b in zip(derived, elements(to_symbolic(expected)))] == [0] * len(derived)
    if explanation.vector is not None:  # the tensor pass of the whole, then one line picks the entries asked for
        assert "the entries asked for" in to_plain(explanation).splitlines()[-2]
    else:  # by components (a formula that picks x's own components): only the selected ones are derived
        derived_components = sum(len(labels) for labels in explanation.components)
        assert derived_components == len(elements(to_symbolic(expected))) * (1 if "hessian" not in call else 2)
    assert f"{call.split('(')[0]}(" in to_plain(explanation).splitlines()[0]
    assert f")[{written}]" in to_plain(explanation).splitlines()[0].split(":")[0] or index[0] < 0


def test_a_selection_under_at_is_narrowed_and_checked_at_the_point():
    (explanation,), value = _explained("x: R^2\nexplain grad(x[0]*x[1]^2, x)[1] at x = [2, 5]")
    assert value == 20 and explanation.check.agrees and explanation.check.derived == 20
    assert to_plain(explanation).splitlines()[0].startswith("grad(x[0]*x[1]^2, x)[1]:")


def test_an_index_on_anything_but_a_derivative_call_derives_everything():
    steps, _ = _explained("x: R^2\nexplain (grad(x[0]*x[1], x) + [1, 1])[1]")
    assert sum(len(labels) for labels in steps[0].components) == 2


# --- the closing check ----------------------------------------------------------


def test_the_check_of_a_blocking_stop_gives_value_gradient_and_true_gradient():
    (explanation,), _ = _explained("explain diff(x * sg(x), x) at x = 3")
    assert to_plain(explanation).splitlines()[-1] == "✓ equals diff; at x = 3: value 9, gradient 3, true gradient 6"


def test_the_check_of_the_log_softmax_gives_the_gradient_at_the_point():
    (explanation,), value = _explained("x: R^3\nexplain grad(log(softmax(x)[0]), x) at x = [1, 3, 3]")
    line = to_plain(explanation).splitlines()[-1]
    assert line == "✓ equals grad; at x = [1, 3, 3]: [0.937, -0.468, -0.468]"
    numbers = [float(e) for e in elements(to_symbolic(value))]  # the statement's own value, evaluated apart
    assert [round(n, 3) for n in numbers] == [0.937, -0.468, -0.468]


def test_the_check_without_a_point_says_equal():
    (explanation,), _ = _explained("explain diff(log(cos(x)), x)")
    assert to_plain(explanation).splitlines()[-1] == "✓ equals diff"
    assert explanation.check.agrees and explanation.check.point == ()


def _spoiled(source: str, point=None):
    """The explanation of `source` with its derivation's result made wrong by 1, re-checked."""
    (explanation,), _ = _explained(source)
    wrong = dataclasses.replace(explanation, derived=explanation.derived + 1, check=None)
    return checked(wrong, point)


def test_a_wrong_derivation_fails_the_check_with_both_numbers_in_every_format():
    x = sp.Symbol("x", real=True)
    bad = _spoiled("explain diff(x^3, x) at x = 2", Point((("x", sp.Integer(2)),), ((x, sp.Integer(2)),)))
    assert not bad.check.agrees
    assert to_plain(bad).splitlines()[-1] == "✗ differs from diff; at x = 2: derivation 13, diff 12"
    assert "Check failed" in to_latex(bad) and "$13$" in to_latex(bad) and "$12$" in to_latex(bad)
    data = to_json(bad)["check"]
    assert data["agrees"] is False and data["derivation"] == 13.0 and data["engine"] == 12.0
    from rich.console import Console

    console = Console(file=io.StringIO(), width=100, color_system="truecolor", force_terminal=True)
    from gradlang.render.pretty import to_rich

    console.print(to_rich(bad, 100))
    assert "✗ differs from diff" in console.file.getvalue() and "derivation 13" in console.file.getvalue()


def test_a_wrong_derivation_fails_the_check_without_a_point_too():
    bad = _spoiled("explain diff(x^3, x)")
    assert not bad.check.agrees
    assert to_plain(bad).splitlines()[-1].startswith("✗ differs from diff; at a test point x = ")


def test_a_tiny_difference_is_caught_but_rounding_is_not():
    x = sp.Symbol("x", real=True)
    (explanation,), _ = _explained("explain diff(exp(x), x)")
    point = Point((("x", sp.Float(0.5)),), ((x, sp.Float(0.5)),))
    close = dataclasses.replace(explanation, derived=explanation.derived * (1 + sp.Float(1e-14)), check=None)
    off = dataclasses.replace(explanation, derived=explanation.derived * (1 + sp.Float(1e-6)), check=None)
    assert checked(close, point).check.agrees and not checked(off, point).check.agrees


def test_the_check_is_data_in_json():
    result = Session().run("explain diff(x * sg(x), x) at x = 3")[-1]
    data = json.loads(json.dumps(to_json(result)))["steps"][0]["check"]
    assert data == {"agrees": True, "operation": "diff", "point": {"x": 3.0}, "derivation": 3.0, "engine": 3.0,
                    "value": 9.0, "true": 6.0,
                    "text": "✓ equals diff; at x = 3: value 9, gradient 3, true gradient 6"}


def test_a_long_vector_is_summarised_in_the_check():
    (explanation,), _ = _explained("x: R^8\nexplain grad(sum(x^2), x) at x = [1, 2, 3, 4, 5, 6, 7, 8]")
    assert to_plain(explanation).splitlines()[-1] == "✓ equals grad; at x = [1, 2, 3, …, 8] (8 components): " \
                                                     "[2, 4, 6, …, 16] (8 components)"


# --- pretty -------------------------------------------------------------------------


def _pretty(source: str, width: int = 100) -> tuple[str, list]:
    """The pretty output of a program: its text and the styled segments."""
    from rich.console import Console

    from gradlang.render.pretty import to_rich

    console = Console(file=io.StringIO(), width=width, color_system="truecolor", force_terminal=True)
    segments = []
    for result in Session().run(source):
        renderable = to_rich(result, width)
        segments += list(console.render(renderable))
    return "".join(s.text for s in segments), segments


def test_pretty_colours_stops_inside_the_equations_and_dims_nothing_that_matters():
    text, segments = _pretty("explain diff(x^2 * sg(x), x)")
    stopped = [s for s in segments if s.style and s.style.color and s.style.color.name == "magenta"]
    assert any("x" in s.text for s in stopped) and any("sg" in s.text for s in stopped)
    assert "x²·sg(x)" in text
    dimmed = "".join(s.text for s in segments if s.style and s.style.dim)
    assert "u = " not in dimmed and "(u·v)'" not in dimmed and "product" not in dimmed


def test_pretty_does_not_wrap_a_large_explained_value_into_many_lines():
    text, _ = _pretty("x: R^3\nexplain jacobian(softmax(x), x)")
    after = text.split("✓ equals jacobian")[1].strip().splitlines()
    assert len(after) <= 3 and all(len(line) <= 100 for line in after)
    assert after[-1] == "diag(s) − s sᵀ"  # the formula, as at x: R^n (issue #36), not 597 characters of components


def test_a_selection_is_data_in_json():
    result = Session().run("x: R^3\nexplain jacobian(sin(x) * x[0], x)[2, -1]")[-1]
    data = to_json(result)["steps"][0]
    assert data["selection"] == [2, 2] and data["call"].endswith(")[2, 2]")
    assert len(data["substeps"]) == 1 and data["check"]["agrees"] is True


# --- the value after a derivation ---------------------------------------------------


STABLE = "x: R^3\nstable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"


def test_a_long_symbolic_value_after_a_derivation_is_one_line_in_plain():
    result = Session().run(STABLE + "explain diff(stable_softmax(x), x[0])")[-1]
    last = to_plain(result).splitlines()[-1]
    whole = derivation_text(result.value)  # as the derivation writes it: its stops sg(u)
    assert len(whole) > 500 and len(last) <= 100
    assert last.endswith(f"  # R^3, {len(whole)} characters, shortened: --full prints it whole")
    assert whole.startswith(last.split("…")[0])
    assert to_plain(result, full=True).splitlines()[-1] == whole


def test_numbers_and_short_values_after_a_derivation_are_printed_whole():
    at_point = Session().run("x: R^3\nexplain jacobian(softmax(x), x) at x = [1.0, 2.0, 3.0]")[-1]
    assert to_plain(at_point).splitlines()[-1] == to_plain(at_point.value)
    short = Session().run("explain diff(x * sg(x), x)")[-1]
    assert to_plain(short).splitlines()[-1] == "sg(x)"
