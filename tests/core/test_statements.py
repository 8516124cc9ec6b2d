"""Every statement form of LANGUAGE.md section 2, as (program, expected plain text) rows."""

import pytest

from gradlang import Session

ROWS = [
    # declarations
    ("x: R\nx", "x"),
    ("x: R^3\nx", "x"),  # one tensor, its components on request
    ("x: R^3\ncomponents(x)", "[x[0], x[1], x[2]]"),
    ("W: R^(2,2)\nW", "W"),
    ("W: R^(2,2)\ncomponents(W)", "[[W[0, 0], W[0, 1]], [W[1, 0], W[1, 1]]]"),
    ("x: R^2\ndiff(x[0] * x_0, x_0)", "x[0]"),
    ("x: R^2\ndiff(x[0] * x_0, x[0])", "x_0"),
    # assignments are eager
    ("a = 2\nb = a^3\na = 5\nb", "8"),
    # definitions are late-bound, parameters shadow outer names
    ("f(t) = t + c\nc = 10\nf(1)", "11"),
    ("v = 100\nf(v) = v^2\nf(3)", "9"),
    ("f(a, b) = a * b\nf(2, y)", "2*y"),
    # a user definition may shadow a builtin math function
    ("softmax(v) = exp(v) / sum(exp(v))\nsoftmax([0, 0])", "[1/2, 1/2]"),
    ("exp(u) = u + 1\nexp(2)", "3"),
    # separators and comments
    ("a = 1; b = 2; a + b", "3"),
    ("a = (1 +\n  2)  # continued inside brackets\na", "3"),
    ("\n\n# only a comment\n  x^2\n\n", "x^2"),
    # unbound names are real scalar symbols
    ("abs(t)^2", "t^2"),
    # exact in, exact out; a float anywhere makes a float
    ("diff(x^3, x) at x = 2", "12"),
    ("exp(x) at x = 1.0", "2.718281828459045"),
    ("1/3 + 1/6", "1/2"),
    ("0.1 + 0.2", "0.30000000000000004"),
    ("2 * pi * 1.0", "6.283185307179586"),
    # keywords of Python are ordinary names
    ("if = 3\nif + 1", "4"),
    ("diff(lambda^2, lambda) at lambda = 3.0", "6.0"),
    ("sigmoid(pass) at pass = [0, 0]", "[0.5, 0.5]"),
    ("explainer = 2\nexplainer", "2"),
]


@pytest.mark.parametrize("program, expected", ROWS)
def test_statement(program, expected):
    results = Session().run(program)
    assert results[-1].text == expected


def test_declaration_and_assignment_print_nothing():
    assert Session().run("x: R^3\na = 2\nf(t) = t") == []


def test_result_records_line_and_source():
    results = Session().run("a = 1\n\nb = a +\\\n".replace("\\\n", "2\n") + "b * 3")
    assert [(r.line, r.source, r.kind) for r in results] == [(4, "b * 3", "value")]


def test_explain_result_kind_and_value():
    result = Session().run("x: R^2\nexplain diff(x[0] * stop_gradient(x[1]), x[1])")[-1]
    assert result.kind == "explain"
    assert result.text == "0"
    assert [d.operation for d in result.derivations] == ["diff"]


def test_eval_returns_sympy_values():
    import sympy as sp

    session = Session()
    assert session.eval("diff(x^3, x)") == 3 * sp.Symbol("x", real=True) ** 2
    assert session.eval("a = 1") is None


def test_failing_statement_leaves_state():
    session = Session()
    session.run("a = 1")
    with pytest.raises(Exception):
        session.run("a = 2\nb = 1/0")
    assert session.eval("a") == 2  # the first statement had finished
    assert "b" not in session.user_names()


def test_snapshot_and_restore():
    session = Session()
    session.run("a = 1")
    state = session.snapshot()
    session.run("a = 5; f(t) = t")
    session.restore(state)
    assert session.eval("a") == 1
    assert "f" not in session.user_names()


def test_bind_underscore():
    session = Session()
    session.bind("_", session.eval("2 + 3"))
    assert session.eval("_ * 2") == 10
