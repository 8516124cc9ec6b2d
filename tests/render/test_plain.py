"""Plain output is gradlang source: a table of spellings, and the round trip back through the Session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gradlang import GradlangError, Session
from gradlang.expr.tensor.lower import lowered
from gradlang.expr.tensor import Var, is_size
from gradlang.expr.functions import Maximum, MaxShare, Minimum, MinShare, Relu, Round, Where
from gradlang.render.plain import to_plain
from gradlang.expr.stopgrad import StopGradient

x, y = sp.symbols("x y", real=True)
x0, x1, x2 = (sp.Symbol(f"x[{i}]", real=True) for i in range(3))
W01 = sp.Symbol("W[0, 1]", real=True)
REPO = Path(__file__).resolve().parents[2]

ROWS = [
    (x**2, "x^2"),
    (-(x**2), "-x^2"),
    (1 / x, "1/x"),
    (x**-2, "x^(-2)"),
    (x ** sp.Rational(3, 2), "x^(3/2)"),
    (sp.sqrt(x), "sqrt(x)"),
    (1 / sp.sqrt(x + 1), "1/sqrt(x + 1)"),
    (sp.Pow(x**2, y, evaluate=False), "(x^2)^y"),
    (2 ** (x**2), "2^(x^2)"),
    ((-2) ** x, "(-2)^x"),
    (sp.Rational(1, 2), "1/2"),
    (x / 2, "x/2"),
    (sp.Float(2.718281828459045), "2.718281828459045"),
    (sp.Float(1e-10), "1e-10"),
    (sp.Float(0.1) * x, "0.1*x"),
    (sp.E, "exp(1)"),
    (sp.exp(x), "exp(x)"),
    (sp.pi, "pi"),
    (sp.oo, "inf"),
    (-sp.oo, "-inf"),
    (sp.nan, "nan"),
    (StopGradient(x * y), "stop_gradient(x*y)"),
    (x * StopGradient(x), "x*stop_gradient(x)"),
    (StopGradient(x) ** 2, "stop_gradient(x)^2"),
    (Maximum(x, y, 0), "max(x, y, 0)"),
    (Minimum(x, y), "min(x, y)"),
    (MaxShare(1, x, y), "max_share(1, x, y)"),
    (MinShare(0, x, y), "min_share(0, x, y)"),
    (Relu(x), "relu(x)"),
    (Round(x), "round(x)"),
    (Where(x > 0, x, y), "where(x > 0, x, y)"),
    (sp.Abs(x), "abs(x)"),
    (sp.ceiling(x), "ceil(x)"),
    (sp.floor(x), "floor(x)"),
    (sp.sign(x), "sign(x)"),
    (sp.asin(x), "asin(x)"),
    (sp.tanh(x), "tanh(x)"),
    (x0 * W01, "W[0, 1]*x[0]"),
    (sp.ImmutableDenseNDimArray([x, 1, sp.Rational(1, 2)]), "[x, 1, 1/2]"),
    (sp.ImmutableMatrix([[x, 1], [2, y]]), "[[x, 1], [2, y]]"),
    (sp.ImmutableMatrix([[x, 1]]), "[[x, 1]]"),
    (x > 0, "x > 0"),
    (sp.Eq(x, 0), "x == 0"),
    (sp.Ne(x, 1), "x != 1"),
    (x <= y, "x <= y"),
    (sp.true, "true"),
    (sp.false, "false"),
]


@pytest.mark.parametrize("value, expected", ROWS, ids=[r[1] for r in ROWS])
def test_plain_spelling(value, expected):
    assert to_plain(value) == expected


def test_numpy_arrays_print_as_lists_of_floats():
    assert to_plain(np.array([1.0, np.nan, np.inf, -np.inf])) == "[1.0, nan, inf, -inf]"
    assert to_plain(np.array([[1.0, 0.5], [3.0, 4.0]])) == "[[1.0, 0.5], [3.0, 4.0]]"


# --- round trip ---------------------------------------------------------------

DECLARATIONS = "x: R^3\nW: R^(2,2)\n"

ROUND_TRIP_SOURCES = [
    "diff(x[0] * stop_gradient(x[1])^2, x[0])",
    "grad(log(sum(exp(x))), x)",
    "jacobian(softmax(x), x)",
    "hessian(x[0]^2 * x[1], x)",
    "grad(max(x), x)",
    "diff(relu(a) + abs(a) + round(a) + floor(a) + ceil(a), a)",
    "where(a > 0, a^2, -a)",
    "a^(3/2) + 1/sqrt(a) + a^(-2) + (a^2)^b",
    "exp(1) * pi + 0.1 * a - 1e-10",
    "sigmoid(a) + softplus(a) + tanh(a) + asin(a)",
    "W @ x[0:2]" if False else "W[0, 1] * W[1, 0] - W[0, 0]",
    "blocked(a * sg(a), a)",
    "[a, 1/2, 0.25]",
    "[[a, 1], [2, b]]",
    "a > 0",
    "max(a, b, 0) - min(a, 2)",
    "diff(max(a, b), a)",
    "inf",
    "-inf",
    "nan",
]


def _declared(session: Session) -> Session:
    """A fresh session that knows only the declared vectors and matrices of `session`."""
    fresh = Session()
    for name, value in session.user_names().items():
        if isinstance(value, (sp.NDimArray, sp.MatrixBase)) and all(isinstance(e, sp.Symbol) for e in value):
            fresh.bind(name, value)
        elif isinstance(value, Var) or is_size(value):  # a tensor of symbolic size, and the sizes
            fresh.bind(name, value)
    return fresh


def _same(a, b) -> bool:
    """The same value: entry by entry at literal sizes (x[0] reads back as an entry of x, the same number),
    or, where plain writes a helper in the language's builtins (max's shares as where(...) over the count
    of ties), the same exact numbers at points with and without ties."""
    if a is sp.nan or b is sp.nan:
        return a is b
    a, b = lowered(a), lowered(b)
    return a == b or all(_at(a, point) == _at(b, point) for point in _points(a, b))


def _points(a, b) -> list:
    """Exact points for the free symbols of a and b: distinct values, and all equal (every tie)."""
    names = sorted(_free(a) | _free(b), key=str)
    return [{s: sp.Rational(3 * i + 1, 7) for i, s in enumerate(names)}, {s: sp.Rational(2, 7) for s in names}]


def _free(value) -> set:
    return set().union(*(sp.sympify(e).free_symbols for e in value)) if hasattr(value, "shape") else value.free_symbols


def _at(value, point):
    return value.subs(point) if hasattr(value, "shape") else sp.sympify(value).subs(point)


def assert_round_trip(session: Session, value) -> None:
    text = to_plain(value)
    fresh = _declared(session)
    *named, formula = text.splitlines()  # a tensor value's named parts (s = softmax(x)) come first
    fresh.run("\n".join(named))
    again = fresh.eval(formula)
    assert _same(again, value), f"{text!r} read back as {again!r}, not {value!r}"


@pytest.mark.parametrize("source", ROUND_TRIP_SOURCES)
def test_round_trip_of_results(source):
    session = Session()
    value = session.run(DECLARATIONS + source)[-1].value
    assert_round_trip(session, value)


EXAMPLES = sorted((REPO / "examples").glob("*.grad"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_round_trip_on_every_example(path):
    session = Session()
    for result in session.iter_run(path.read_text(encoding="utf-8"), str(path)):
        if not isinstance(result.value, np.ndarray):
            assert_round_trip(session, result.value)


# Random expressions built the way the evaluator builds them.
a, b = sp.symbols("a b", real=True)
_leaves = st.sampled_from([a, b, x0, x1, sp.Integer(2), sp.Integer(-3), sp.Rational(1, 3), sp.Float(0.25), sp.pi])
_unary = st.sampled_from([sp.exp, sp.sin, sp.atan, sp.tanh, sp.Abs, sp.sign, sp.floor, Relu, Round, StopGradient])
_binary = st.sampled_from(
    [
        lambda u, v: u + v,
        lambda u, v: u - v,
        lambda u, v: u * v,
        lambda u, v: u / (v**2 + 1),
        lambda u, v: Maximum(u, v),
        lambda u, v: Minimum(u, v, 0),
        lambda u, v: Where(u > v, u, v),
    ]
)
_powers = st.sampled_from([2, 3, -1, -2, sp.Rational(1, 2), sp.Rational(-3, 2)])


def _extend(children):
    return st.one_of(
        st.builds(lambda f, u: f(u), _unary, children),
        st.builds(lambda f, u, v: f(u, v), _binary, children, children),
        st.builds(lambda u, p: (u**2 + 1) ** p, children, _powers),
    )


expressions = st.recursive(_leaves, _extend, max_leaves=8)


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions)
def test_round_trip_of_random_expressions(expr):
    # The property is about gradlang values: first let the session make one
    # (a float makes a number floating point, exact numbers are tidied), then
    # print it and read it back.
    session = Session()
    session.run("x: R^2")
    try:
        value = session.eval(to_plain(expr))
    except GradlangError:
        assume(False)
    assert_round_trip(session, value)
