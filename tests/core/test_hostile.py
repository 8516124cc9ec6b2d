"""Hostile input ends in the right error kind, with a position, and quickly (issue 2).

Every row runs under a short statement time budget: a hostile program must be
stopped by a structural limit (size, depth, order, recursion), never by the
clock, so a row that only ends because the budget ran out fails.
And what is merely large but reasonable, like a sum of thousands of terms, or
a name that is a Python keyword, must simply work.
"""

from __future__ import annotations

import keyword

import numpy as np
import pytest

from gradlang import GradlangError, Session
from gradlang.render import to_json, to_latex, to_plain, to_rich
from gradlang.render.image import write_png
from tests.safety import SAFETY_NET

BUDGET = SAFETY_NET  # a row ends by a limit, never by the clock: the clock here only ends a hang (tests/safety.py)

DEEP = 30_000

# f composed with itself 2^6 times: small as a DAG, 2^64 nodes as a tree.
DOUBLING = "f(x) = sin(x) + cos(x)\ng0(x) = f(f(x))\n" + "".join(
    f"g{i}(x) = g{i - 1}(g{i - 1}(x))\n" for i in range(1, 6)) + "g5(y)"

HOSTILE = [
    # (id, source, kind, line, column or None when any column on that line will do)
    ("power-tower", "3^(3^(3^(3^7)))", "LimitError", 1, None),
    ("power-tower-right-assoc", "2^2^2^2^2^2", "LimitError", 1, None),
    ("power-tower-negative-base", "y = 1\n(-3)^(3^(3^7))", "LimitError", 2, None),
    ("power-huge-exponent", "10^1000000", "LimitError", 1, None),
    ("power-float-base-exact-tower", "2.0^(3^(3^(3^7)))", "LimitError", 1, None),
    ("integer-literal-100k-digits", "9" * 100_000, "LimitError", 1, 1),
    ("declaration-billions", "x: R^3000000000", "LimitError", 1, None),
    ("declaration-matrix-huge", "y = 2\nW: R^(100000, 100000)", "LimitError", 2, None),
    ("declaration-tall-matrix", "W: R^(3000000000, 1)", "LimitError", 1, None),
    ("linspace-billions", "linspace(0, 1, 3000000000)", "LimitError", 1, 16),
    ("linspace-googol", "linspace(0, 1, 10^100)", "LimitError", 1, None),
    ("linspace-in-at", "sigmoid(t) at t = linspace(0, 1, 10^12)", "LimitError", 1, None),
    ("recursion", "f(x) = f(x) + 1\nf(2)", "LimitError", None, None),
    ("recursion-factorial", "f(n) = n * f(n - 1)\nf(5)", "LimitError", None, None),
    ("mutual-recursion", "f(x) = g(x)\ng(x) = f(x)\nf(1)", "LimitError", None, None),
    ("recursion-through-diff", "f(x) = diff(f(x), x)\nf(y)", "LimitError", None, None),
    ("parentheses-deep", "(" * DEEP + "x" + ")" * DEEP, "LimitError", 1, None),
    ("brackets-deep", "[" * DEEP + "x" + "]" * DEEP, "LimitError", 1, None),
    ("calls-deep", "sg(" * DEEP + "x" + ")" * DEEP, "LimitError", 1, None),
    ("parentheses-deep-unclosed", "(" * DEEP, "LimitError", 1, None),
    ("parentheses-deep-second-line", "y = 1\n" + "(" * DEEP + "y" + ")" * DEEP, "LimitError", 2, None),
    ("unary-minus-chain", "-" * DEEP + "x", "LimitError", 1, None),
    ("power-chain", "x" + "^x" * 5_000, "LimitError", 1, None),
    ("derivative-order-billions", "diff(x^2, x, 100000000000)", "LimitError", 1, 14),
    ("derivative-order-just-above", "diff(sin(x), x, 101)", "LimitError", 1, 17),
    ("derivative-order-summed", "diff(x*y, x, 60, y, 60)", "LimitError", 1, None),
    ("derivative-order-negative", "diff(x, x, -1)", "DiffError", 1, None),
    ("hessian-huge", "hessian(exp(x), [" + ", ".join(f"x{i}" for i in range(2000)) + "])", "LimitError", 1, None),
    ("power-tower-multiline-statement", "y = (1 +\n 3^(3^(3^(3^7))))", "LimitError", 2, None),
    ("linspace-multiline-statement", "y = [1,\n 2,\n linspace(0, 1, 10^10)]", "LimitError", 3, None),
    ("power-tower-via-at", "x^(10^100) at x = 2", "LimitError", 1, None),
    # issue 16/12: every stage of a statement is bounded, parsing included
    ("source-50-megabytes", "x+" * 25_000_000 + "x", "LimitError", 1, None),
    ("source-million-lines", "y = x + 1\n" * 1_000_000, "LimitError", None, None),
    ("statements-over-limit", "1;" * 10_001, "LimitError", 1, None),
    ("arabic-indic-digit", "1\u0660 + 1", "SyntaxError", 1, 2),
    ("devanagari-digit-alone", "\u0967", "SyntaxError", 1, 1),
    ("caret-after-line-separator", "# a\u2028b\n1 +* 2", "SyntaxError", 2, 4),
    ("caret-after-next-line-and-form-feed", "# a\x0cb\x85c\n\n1 +* 2", "SyntaxError", 3, 4),
]

BUGS: dict[str, str] = {  # row id -> "BUG: ..." for rows that fail until the core is fixed
}


def _rows(table):
    for id_, *row in table:
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=BUGS[id_])] if id_ in BUGS else []
        yield pytest.param(*row, id=id_, marks=marks)


@pytest.mark.parametrize("source, kind, line, column", list(_rows(HOSTILE)))
def test_hostile_input_is_a_located_error(source, kind, line, column):
    with pytest.raises(GradlangError) as caught:
        Session(time_limit=BUDGET).eval(source)
    error = caught.value
    assert error.kind == kind, error.format()
    assert "took longer" not in error.message, "stopped by the clock, not by a limit"
    assert error.line is not None and error.column is not None
    assert 1 <= error.line <= source.count("\n") + 1
    if line is not None:
        assert error.line == line, error.format()
    if column is not None:
        assert error.column == column, error.format()


def _sum_source(n: int) -> tuple[str, float]:
    terms = [(i % 13 - 6, i % 5) for i in range(1, n + 1)]
    source = " + ".join(f"{c}*x^{p}" for c, p in terms)
    return source, sum(c * 1.5**p for c, p in terms)


@pytest.mark.parametrize("n", [3_000, 6_000])
def test_a_sum_of_thousands_of_terms_works(n, values):
    source, expected = _sum_source(n)
    assert values(f"{source} at x = 1.5") == pytest.approx(expected, rel=1e-12)


def test_a_sum_of_thousands_of_terms_differentiates(values):
    source, _ = _sum_source(3_000)
    terms = [(i % 13 - 6, i % 5) for i in range(1, 3_001)]
    expected = sum(c * p * 1.5 ** (p - 1) for c, p in terms if p)
    assert values(f"diff({source}, x) at x = 1.5") == pytest.approx(expected, rel=1e-12)


def test_a_long_literal_sum_is_exact(values):
    assert values(" + ".join(["1"] * 5_000)) == 5_000


# Python keywords, soft keywords, builtins, and names SymPy or NumPy code might
# reserve: all ordinary gradlang names (only `at` and `explain` are keywords).
PYTHON_NAMES = sorted(set(keyword.kwlist + keyword.softkwlist) - {"_"}) + [
    "print", "list", "dict", "str", "int", "float", "type", "object", "range", "input", "open",
    "id", "map", "filter", "zip", "eval", "exec", "compile", "globals", "locals", "vars",
    "self", "cls", "args", "kwargs", "numpy", "np", "math", "mpmath", "sympy", "builtins",
    "__builtins__", "__import__", "__name__", "_", "_x", "x_", "I", "E", "S", "Q", "O", "oo", "zoo",
    "Symbol", "Float", "Integer", "Lambda", "Dummy", "beta", "gamma", "zeta", "Eq", "Function",
    "lambdify", "select", "where_", "amax", "x0", "Piecewise", "ITE",
]


def _usages(name: str) -> list[tuple[str, str, object]]:
    """(id, program, expected) rows using `name` in every role a name can play."""
    return [
        ("diff", f"diff({name}^2, {name}) at {name} = 3.0", 6.0),
        ("exact", f"{name}^2 + 1 at {name} = 3", 10.0),
        ("lambdify", f"sigmoid({name}) at {name} = linspace(0, 1, 3)", 1 / (1 + np.exp(-np.linspace(0, 1, 3)))),
        ("broadcast", f"{name} * q + sg({name}) at {name} = linspace(0, 1, 3), q = 2.0", 3 * np.linspace(0, 1, 3)),
        ("binding", f"{name} = 2\n{name} + 1", 3.0),
        ("function", f"{name}(t) = t^2 + t\n{name}(3)", 12.0),
        ("parameter", f"f({name}) = {name} * sg({name})\ndiff(f(y), y) at y = 5.0", 5.0),
        ("vector", f"{name}: R^2\ngrad(sum({name}^3), {name}) at {name} = [1.0, 2.0]", [3.0, 12.0]),
        ("component", f"{name}: R^2\ngrad({name}[0] * {name}[1], [{name}[1]]) at {name}[0] = 4.0", [4.0]),
        ("explain", f"explain diff({name}^3 * sg({name}), {name}) at {name} = 2.0", 24.0),
        ("hessian", f"hessian({name}^2 * q, [{name}, q]) at {name} = 1.0, q = 3.0", [[6.0, 2.0], [2.0, 0.0]]),
    ]


@pytest.mark.parametrize("program, expected", [
    pytest.param(program, expected, id=f"{name}-{use}")
    for name in PYTHON_NAMES for use, program, expected in _usages(name)
])
def test_python_names_are_ordinary_names(program, expected, values):
    np.testing.assert_allclose(values(program), expected, rtol=1e-12)


def test_an_expression_exponential_as_a_tree_prints_with_named_parts():
    """f composed 64 times is tiny as a DAG: it is shown as t1 = …, never written out as a tree."""
    result = Session(time_limit=BUDGET).run(DOUBLING)[-1]
    assert result.named, "the shared parts should be named"
    assert len(result.text) < 20_000
    assert result.text.splitlines()[0].startswith("t1 = ")


@pytest.mark.parametrize("source, line_text", [
    ("# a\u2028b\n1 +* 2", "1 +* 2"),
    ("# a\x0cb\x85c\u2029\n\n1 +* 2", "1 +* 2"),
    ("y = 1\r\n1 +* 2\r\n", "1 +* 2"),
])
def test_the_caret_shows_the_line_the_parser_counted(source, line_text):
    """Only \\n ends a line for the parser, so only \\n may end one for the caret display."""
    with pytest.raises(GradlangError) as caught:
        Session(time_limit=BUDGET).run(source)
    assert caught.value.source_line == line_text
    assert caught.value.format().splitlines()[1].strip() == line_text


def test_a_long_line_is_shown_cut_around_the_caret():
    source = "x + " * 5_000 + "* 2"
    with pytest.raises(GradlangError) as caught:
        Session(time_limit=BUDGET).run(source)
    shown = caught.value.format().splitlines()
    assert len(shown) == 3 and len(shown[1]) < 200
    caret = shown[2].index("^")
    assert shown[1][caret] == "*"


def test_ascii_digits_only():
    """Python's \\d matches every script's digits; gradlang's numbers are ASCII."""
    assert Session().eval("10 + 1") == 11
    for digits in ("\u0661\u0660", "\uff11", "\u09e7"):
        with pytest.raises(GradlangError) as caught:
            Session().eval(digits + " + 1")
        assert caught.value.kind == "SyntaxError"


# One-line programs that once ended in an InternalError (issues 12 and 16): each
# ends in the right answer or a clean error. (id, program, value or error kind)
INF, NAN = float("inf"), float("nan")
ONE_LINERS = [
    ("condition-in-list-tan", "tan([0, 1 < 2])", "ValueError"),
    ("condition-in-list-sum", "sum([1 < 2, 3])", "ValueError"),
    ("condition-in-list-softmax", "softmax([x == 1, 2])", "ValueError"),
    ("condition-in-list-dot", "dot([1 < 2, 1], [1, 2])", "ValueError"),
    ("condition-in-list-sg", "sg([1 < 2])", "ValueError"),
    ("condition-in-list-diff", "diff([1 < 2, x], x)", "ValueError"),
    ("condition-gradcheck", "gradcheck(x > 1, x) at x = 1", "ValueError"),
    ("condition-vector-where-still-works", "where([x > 1, x < 2], [1, 2], 0) at x = 1.5", [1.0, 2.0]),
    ("nan-compare-symbol", "where(nan > x, 1, 2)", 2),
    ("nan-compare-number", "where(nan >= 1, 1, 2)", 2),
    ("nan-not-equal", "where(nan != x, 1, 2)", 1),
    ("round-inf", "round(inf)", INF),
    ("round-minus-inf", "round(-inf)", -INF),
    ("sin-inf-times-float", "sin(inf) * 1.0", NAN),
    ("cos-inf-plus-symbol", "cos(inf) + x at x = 1.0", NAN),
    ("power-chain-huge-float-exponent", "1.5 ^ 2 ^ 1e308", INF),
    ("float-power-huge-exact-exponent", "2.0^(10^30000)", INF),
    ("float-power-huge-odd-exponent", "(-2.0)^(10^30000 + 1)", -INF),
    ("float-power-huge-exponent-small-base", "0.5^(10^30000)", 0.0),
    ("vector-at-matrix-of-points", "[1, 2] at v = [[1, 2], [3, 4]]", "ShapeError"),
    ("prod-of-big-integers", "a = 10^30000\nb = prod([a, a, a, a, a, a, a, a, a, a])", "LimitError"),
    ("product-of-big-integers", "a = 10^20000\na*a*a*a*a*a*a", "LimitError"),
    ("dot-of-big-integers", "a = 10^30000\ndot([a, a], [a, a])", "LimitError"),
    ("matmul-squaring", "A = [[10^10, 1], [1, 1]]\n" + "".join(f"A = A @ A\n" for _ in range(16)), "LimitError"),
    ("gradcheck-too-large", "x: R^30000\ngradcheck(sum(x*x), x) at x = linspace(0, 1, 30000)", "LimitError"),
    ("plot-interval-too-wide", "plot(t, t, -1e308, 1e308)", "ValueError"),
    ("plot-interval-subnormal", "plot(t, t, 0, 5e-324)", "ValueError"),
    # found by tests/fuzz/test_grammar_fuzz.py
    ("fuzz-non-real-compared-at-a-point", "g(a, b) = max(a, b) * sg(b)\n"
     "where(acos(1e3) < -g(x, y), acos(1e3), -g(x, y)) at x = inf, y = 1", -INF),
    ("fuzz-nan-compared-at-a-point", "where(x < 1, 1, 2) at x = nan", 2.0),
    ("fuzz-nan-compared-in-a-list-at-a-point", "where([x, 1] < [0.0, 2], [x, 1], 0) at x = nan", [0.0, 1.0]),
    ("fuzz-non-real-point", "where(x > y, 1, 2) at x = sqrt(-1.0), y = 2", 2.0),
    ("fuzz-backward-of-a-constant", "explain backward(0.0, x)", 0.0),
    ("fuzz-float-power-overflow-then-floor", "floor(1e308 ^ pi)", INF),
    ("fuzz-round-beyond-float64", "round(1e308^2)", INF),
    ("float-power-overflow", "2.0^1024", INF),
    ("fuzz-power-overflow-exponent-with-pi", "cos(10 ^ (pi * 1e3))", NAN),
    ("fuzz-power-overflow-base-and-exponent-with-pi", "(pi * pi) ^ (1e3 ^ pi)", INF),
    ("fuzz-expm1-nan", "expm1(nan)", NAN),
    ("fuzz-expm1-minus-inf", "expm1(-inf)", -1.0),
    ("fuzz-log1p-inf", "log1p(inf)", INF),
    ("fuzz-explain-expm1-nan", "explain [expm1(nan), 1]", [NAN, 1.0]),
    ("fuzz-wrt-float-overflow-is-a-diff-error", "cos(hessian(20, sinh(1e308))) * -softplus(1e308)", "DiffError"),
    ("fuzz-comparison-sympy-calls-non-real", "W: R^(2,2)\na = where(-x == 2.5/W, -x, 2.5/W)\n"
     "where(W[1, 0]/0.5 < a @ a, 1, 2) at x = 0.5, W = [[1, 2], [3, 4]]", [[1.0, 2.0], [2.0, 2.0]]),
]


@pytest.mark.parametrize("source, expected", list(_rows([(i, s, e) for i, s, e in ONE_LINERS])))
def test_one_line_programs_end_in_an_answer_or_a_clean_error(source, expected):
    session = Session(time_limit=SAFETY_NET)
    if isinstance(expected, str):
        with pytest.raises(GradlangError) as caught:
            session.run(source)
        assert caught.value.kind == expected, caught.value.format()
        assert caught.value.line is not None
        return
    np.testing.assert_array_equal(np.asarray(_floats(session.eval(source))), np.asarray(expected, dtype=float))


def _floats(value):
    from tests.conftest import as_floats

    return as_floats(value)


@pytest.mark.parametrize("program", ["plot(t*1e308, t, -10, 10)", "plot(t*1e300 + 1e300, t, -10, 10)", "plot(exp(t), t, 0, 1000)"])
def test_plots_of_values_too_large_to_draw_render_in_every_format(program, tmp_path):
    plot = Session(time_limit=SAFETY_NET).run(program)[-1].attachments[0]
    assert "t" in to_plain(plot)
    to_rich(plot)
    to_latex(plot)
    to_json(plot)
    write_png(plot, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 0
