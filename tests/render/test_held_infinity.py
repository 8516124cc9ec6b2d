"""A -inf held beside a variable (expr/domain.py's Written) reads with its sign in every printer.

SymPy cannot see the sign of a held constant, so its printers wrote
`y + -\\infty` (LaTeX), `y + -∞` (pretty) and `Written(-oo)` (str).
"""

from gradlang import Session
from gradlang.render.latex import to_latex
from gradlang.render.plain import to_plain
from gradlang.render.pretty import to_pretty


def _value():
    return Session().eval("y: R\ny - 1/0.0")


def test_str_shows_the_value_not_the_holder():
    assert str(_value()) == "y - oo"
    assert "Written" not in repr(Session().eval("v: R^2\ndot(v, v) - 3/0.0"))


def test_plain_latex_and_pretty_read_minus_infinity():
    value = _value()
    assert to_plain(value) == "y - inf"
    assert to_latex(value) == r"y - \infty"
    assert to_pretty(value) == "y - ∞"
