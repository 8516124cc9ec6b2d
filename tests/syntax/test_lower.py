"""The lowered form: typed statements and expressions, with their places, read from the lark tree once."""

from __future__ import annotations

import pytest

from gradlang import Session
from gradlang.errors import GradlangError, LimitError, SyntaxError, ValueError
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import read


def _one(source: str):
    (statement,) = read(source).statements
    return statement


def test_a_declaration_carries_its_shape_with_literal_and_symbolic_sizes():
    statement = _one("W, V: R^(m, 3)")
    assert isinstance(statement, lo.Declaration)
    assert [name.name for name in statement.names] == ["W", "V"]
    assert [d.size for d in statement.shape] == ["m", 3]
    assert statement.type_name == "R" and not statement.is_size


def test_a_scalar_and_a_size_declaration():
    scalar, sizes = read("a: R\nm, n: size").statements
    assert scalar.shape == () and not scalar.is_size
    assert sizes.is_size and [n.name for n in sizes.names] == ["m", "n"]


def test_a_product_keeps_its_operators_in_order():
    product = _one("A @ x * 2 / y").value
    assert isinstance(product, lo.Product)
    assert product.operators == ("@", "*", "/")
    assert [type(o) for o in product.operands] == [lo.Name, lo.Name, lo.Number, lo.Name]


def test_a_sum_keeps_its_signs():
    total = _one("a - b + c").value
    assert isinstance(total, lo.Sum) and total.signs == ("-", "+")


def test_subscripts_and_slices_are_their_own_nodes():
    entry, column, row = (_one(text).value for text in ("M[1, 2]", "M[:, 1]", "M[0, :]"))
    assert isinstance(entry, lo.Index) and len(entry.indices) == 2
    assert isinstance(column, lo.Column) and column.index.literal == "1"
    assert isinstance(row, lo.Row) and row.index.literal == "0"


def test_an_at_holds_its_targets_and_values():
    at = _one("x[1] + y at x[1] = 2, y = 3").value
    assert isinstance(at, lo.At)
    assert [(b.target.name, b.target.indices) for b in at.bindings] == [("x", ("1",)), ("y", ())]


def test_a_call_keeps_a_quoted_file_name_without_its_quotes():
    call = _one('load("w.npy", "W")').value
    assert isinstance(call, lo.Call) and call.name == "load"
    assert [a.value for a in call.args] == ["w.npy", "W"]


def test_explain_options_are_read_when_lowered():
    assert _one("explain[depth=2] x").depth == 2
    assert _one("explain[depth=all] x").depth is None
    plain = _one("explain x")
    assert plain.depth is lo.DEFAULT and plain.unfold is lo.DEFAULT
    assert _one("explain[unfold] x").unfold is True


def test_every_node_has_its_place_and_text():
    source = "a = 1\nf(u, v) = u * v + 2"
    definition = read(source).statements[1]
    assert isinstance(definition, lo.Definition)
    assert definition.text(source) == "f(u, v) = u * v + 2"
    assert (definition.span.line, definition.span.column) == (2, 1)
    assert definition.body.text(source) == "u * v + 2"
    assert [p.name for p in definition.params] == ["u", "v"]


def test_walk_reaches_every_node_and_written_names_skip_at_targets():
    statement = _one("f(x) + g[y] at z = 1")
    kinds = {node.kind for node in lo.walk(statement)}
    assert {"show", "at", "sum", "call", "index", "name", "binding", "target", "number"} <= kinds
    assert lo.written_names(statement) == {"f", "x", "g", "y"}


@pytest.mark.parametrize("source, error, message", [
    ("f(1) = 2", SyntaxError, "plain names"),
    ("f(a, a) = a", SyntaxError, "named twice"),
    ("x: R^0", ValueError, "at least 1"),
    ("x: R^(10000000, 2)", LimitError, "above the limit"),
    ("x: Z^3", SyntaxError, "unknown type 'Z'"),
    ("explain[deep=1] x", SyntaxError, "no option 'deep'"),
    ("explain[depth=x] x", ValueError, "whole number of levels"),
])
def test_a_statement_the_language_refuses_lowers_to_its_error(source, error, message):
    statement = _one(source)
    assert isinstance(statement, lo.Faulty)
    assert isinstance(statement.error, error) and message in statement.error.message
    assert statement.error.span is not None


def test_the_statements_before_a_refused_one_run_first():
    session = Session()
    shown = []
    with pytest.raises(GradlangError) as caught:
        for result in session.iter_run("a = 2\na + 1\nf(1) = 2\na + 2"):
            shown.append(result.value)
    assert shown == [3]
    assert caught.value.span.line == 3 and session.env["a"] == 2
