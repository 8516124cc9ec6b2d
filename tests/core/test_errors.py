"""Every error kind of LANGUAGE.md section 9, with its place: (program, kind, line, column)."""

import pytest

from gradlang import GradlangError, Session

ROWS = [
    ("x +", "SyntaxError", 1, 4),
    ("a = (1 +\n  2", "SyntaxError", 1, 5),
    ("1 + )", "SyntaxError", 1, 5),
    ("3 4", "SyntaxError", 1, 3),
    ("x $ 2", "SyntaxError", 1, 3),
    ("f(2) = 3", "SyntaxError", 1, 3),
    ("x: Q^3", "SyntaxError", 1, 4),
    ("nosuch(1)", "NameError", 1, 1),
    ("exp(1, 2)", "NameError", 1, 1),
    ("f(a) = a\nf(1, 2)", "NameError", 2, 1),
    ("stop_gradient = 3", "NameError", 1, 1),
    ("grad(t) = t", "NameError", 1, 1),
    ("f(sg) = sg", "NameError", 1, 3),
    ("x: R\nx(2)", "NameError", 2, 1),
    ("[1, 2] + [1, 2, 3]", "ShapeError", 1, 1),
    ("[[1, 2], [3, 4]] @ [1, 2, 3]", "ShapeError", 1, 20),
    ("[1, [2, 3]]", "ShapeError", 1, 1),
    ("x: R^2\nx[2]", "ShapeError", 2, 3),
    ("y = 3\ny[0]", "ShapeError", 2, 1),
    ("x: R^2\ngrad(x, x)", "ShapeError", 2, 1),
    ("x: R^2\nsum(x) at x = [1, 2, 3]", "ShapeError", 2, 11),
    ("diff(x^2, x^2)", "DiffError", 1, 11),
    ("diff(x^2, 3)", "DiffError", 1, 11),
    ("x: R^2\ndiff(x[0], x)", "DiffError", 2, 12),
    ("grad(x^2, [x, 2])", "DiffError", 1, 11),
    ("1/0", "ValueError", 1, 3),
    ("1/x at x = 0", "ValueError", 1, 1),
    ("a = 3\na^2 at a = 2", "ValueError", 2, 8),
    ("where(1, 2, 3)", "ValueError", 1, 7),
    ("(x > 1) + 2", "ValueError", 1, 2),
    ("log(0)", "ValueError", 1, 1),
    ("sqrt(-4)", "ValueError", 1, 1),
    ("t at t = [1, x]", "ValueError", 1, 6),
    ("3^(3^(3^(3^7)))", "LimitError", 1, 4),
    ("x: R^1000000000", "LimitError", 1, 6),
    ("x: R^(100000, 100000)", "LimitError", 1, 1),
    ("linspace(0, 1, 10000000000)", "LimitError", 1, 16),
    ("f(n) = f(n)\nf(1)", "LimitError", 1, 8),
    ("f(n) = g(n)\ng(n) = f(n)\nf(1)", "LimitError", 2, 8),
    ("diff(x, x, 1000000)", "LimitError", 1, 12),
    ("(" * 20000 + "x" + ")" * 20000, "LimitError", 1, 201),
    ("-" * 20000 + "x", "LimitError", 1, None),
]


@pytest.mark.parametrize("program, kind, line, column", ROWS)
def test_error_kind_and_place(program, kind, line, column):
    with pytest.raises(GradlangError) as caught:
        Session().run(program)
    error = caught.value
    assert (error.kind, error.line) == (kind, line), error.format()
    if column is not None:
        assert error.column == column, error.format()


def test_error_shows_source_line_and_caret():
    with pytest.raises(GradlangError) as caught:
        Session().run("a = 1\nb = a + nosuch(2)", filename="demo.grad")
    text = caught.value.format()
    assert text.splitlines() == [
        "demo.grad:2:9: NameError: unknown function 'nosuch'",
        "    b = a + nosuch(2)",
        "            ^^^^^^",
    ]


def test_error_in_multiline_statement_points_at_its_line():
    with pytest.raises(GradlangError) as caught:
        Session().run("total = (1 +\n   2 +\n   nosuch(3))")
    assert (caught.value.line, caught.value.column) == (3, 4)


def test_a_long_sum_works():
    program = " + ".join(f"{i}*x" for i in range(1, 3001))
    assert Session().eval(f"diff({program}, x)") == 3000 * 3001 // 2


def test_time_limit_is_a_limit_error():
    session = Session(time_limit=0.5)
    with pytest.raises(GradlangError) as caught:
        session.run("x: R^1000\ngrad(sum(components(softmax(x))), x)")  # by components: n² partials, minutes
    assert caught.value.kind == "LimitError"


def test_subclasses_are_catchable_by_kind():
    from gradlang import DiffError, LimitError, NameError, ShapeError, SyntaxError, ValueError

    for program, cls in [("x +", SyntaxError), ("nosuch(1)", NameError), ("[1, 2, 3] + [1, 2]", ShapeError),
                         ("diff(x, 2)", DiffError), ("1/0", ValueError), ("diff(x, x, 999)", LimitError)]:
        with pytest.raises(cls):
            Session().run(program)


@pytest.mark.parametrize("size", ["3", "n"])
def test_a_hessian_of_a_vector_names_hessian_not_the_grad_inside_it(size):
    """The tensor engine takes a hessian as a reverse pass; its refusal still speaks of what the user wrote."""
    with pytest.raises(GradlangError) as caught:
        Session().run(f"x: R^{size}\nhessian(x^2, x)")
    error = caught.value
    assert (error.kind, error.line, error.column) == ("ShapeError", 2, 1), error.format()
    assert error.message.startswith("hessian needs a scalar expression"), error.format()
