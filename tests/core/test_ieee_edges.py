"""IEEE edges found by the grammar fuzzer: overflow is ±inf at once; tan(inf) is NaN, not an interval."""

import importlib.util
import re

import numpy as np
import pytest
import sympy as sp

from gradlang import Session
from gradlang.export import export_program
from gradlang.render.pretty import to_pretty


@pytest.mark.parametrize(
    "program, expected",
    [
        ("expm1(expm1(1e308))", np.expm1(np.expm1(1e308))),
        ("exp(exp(1e308))", np.exp(np.exp(1e308))),
        ("exp(-exp(1e308))", np.exp(-np.exp(1e308))),
        ("-exp(exp(1e308))", -np.exp(np.exp(1e308))),
    ],
)
def test_overflow_is_ieee(program, expected):
    with np.errstate(over="ignore"):
        assert float(Session().eval(program)) == expected


def test_tan_of_inf_in_a_compiled_where_is_nan():
    # SymPy's tan(oo) is AccumulationBounds(-oo, oo); NumPy's tan(inf) is nan, and nan == v is false
    value = Session().eval("x: R\nW: R^(2,2)\nwhere(tan(x) == [W[1,0], x], tan(x), [W[1,0], x]) at x = inf")
    assert str(value) == "[W[1, 0], oo]"


# SymPy's zoo (an exact x/0, or (0.0*v)^(-x) written as zoo^x) reached the NumPy
# printer, which had no spelling for it: KeyError 'ComplexInfinity' (grammar fuzzer, seed 301).
@pytest.mark.parametrize(
    "program, expected",
    [
        ("v: R^3\n(0.0 * v[0]) ^ -x at x = 0", 1.0),     # IEEE 0.0^(-0) = 1
        ("v: R^3\n(0.0 * v[0]) ^ -x at x = 1.0", np.inf),  # 0.0^(-1) = inf
        ("v: R^3\n(0.0 * v[0]) ^ -x at x = -1.0", 0.0),    # 0.0^1 = 0
        ("v: R^3\n-2.5 - (0.0 * v[0]) ^ -x at x = 0", -3.5),
    ],
)
def test_zero_to_a_symbolic_negative_power_is_ieee(program, expected):
    assert float(Session().eval(program)) == expected


def test_an_unsigned_infinity_in_a_compiled_value_is_nan():
    # 2.5/f(0) is SymPy's zoo (no sign): NaN as a float, never an InternalError
    value = Session().eval("v: R^3\nf(a) = a^2 + sg(a)\n"
                           "where([0.5, v[0]] == 2.5 / f(x), [0.5, v[0]], 2.5 / f(x)) at x = 0")
    assert all(np.isnan(float(e)) for e in value)


def test_a_share_of_a_matrix_is_taken_per_component():
    # min_share(0, -inf, M) kept a matrix inside a scalar function (TypeError when compiled)
    assert Session().eval("W: R^(2,2)\nmin_share(0, -inf, blocked(0.0, W))").tolist() == [[1, 1], [1, 1]]
    value = Session().eval("W: R^(2,2)\nmax_share(1, W, 2) at W = [[1, 2], [3, 4]]")
    assert value.tolist() == [[1, sp.Rational(1, 2)], [0, 0]]


@pytest.mark.parametrize(
    "program, expected",
    [
        ("log(2.5, 2^100)", np.log(2.5) / np.log(2.0**100)),     # NumPy refuses a 101-bit int: a float constant
        ("x*2^100 + 0.5 at x = 1", 2.0**100 + 0.5),
        ("x*10^400 + 0.5 at x = 1", np.inf),                       # beyond float64: inf, as the float would be
    ],
)
def test_integers_beyond_64_bits_in_a_float_value(program, expected):
    assert float(Session().eval(program)) == expected


# logsumexp and softmax shift by the max, which is inf - inf = nan at an infinite
# argument (norm(softmax([inf, 3])) was an AttributeError in evalf); jax.nn's answers:
@pytest.mark.parametrize(
    "program, expected",
    [
        ("softmax([inf, 3])", [np.nan, np.nan]),
        ("softmax([-inf, 3, 3])", [0.0, 0.5, 0.5]),
        ("softmax([nan, 1])", [np.nan, np.nan]),
        ("logsumexp([inf, 3])", np.inf),
        ("logsumexp([-inf, 3])", 3.0),
        ("logsumexp([-inf, -inf])", -np.inf),
        ("norm(softmax([inf, 3]))", np.nan),
        ("x: R\ngrad(logsumexp([x, -inf, x^2]), x) at x = 1.0", 1.5),
    ],
)
def test_logsumexp_and_softmax_at_infinite_arguments_are_jaxs(program, expected):
    value = np.array(Session().eval(program), dtype=float)
    np.testing.assert_allclose(value, expected, rtol=1e-15)


# Grammar fuzzer, seed 302: Python's float ** raised OverflowError for a constant power
# ((0.0 - pi)^1e3), and SymPy gave up (PrecisionExhausted) on the integer part of a huge float.
@pytest.mark.parametrize(
    "program, expected",
    [
        ("(0.0 - pi) ^ 1e3", np.inf),
        ("(0.0 - pi) ^ 1001.0", -np.inf),
        ("ceil(-pi*1e300)", np.ceil(-np.pi * 1e300)),
        ("round(pi*1e300)", np.round(np.pi * 1e300)),   # a float, not a 301-digit integer
        ("floor(1e308*10.0)", np.inf),
        ("round(2.5*pi)", 8.0),
    ],
)
def test_constant_powers_and_integer_parts_of_huge_floats_are_ieee(program, expected):
    value = Session().eval(program)
    assert isinstance(value, sp.Float) or value in (sp.oo, -sp.oo)
    # pi*1e300 is rounded once from the exact product in gradlang, twice in NumPy: equal to 1 ulp
    np.testing.assert_allclose(float(value), expected, rtol=1e-15)


def test_an_exact_number_too_large_to_round_is_a_limit_error():
    from gradlang import LimitError

    with pytest.raises(LimitError, match="too large to compare or round"):
        Session().eval("ceil(pi*10^300) - pi*10^300 < 1")


@pytest.mark.parametrize("program", ["0.0 * max(0.0, nan)", "np(a) = a * max(a, nan)\nnp(0.0)",
                                     "x: R\ndiff(x * max(x, nan), x)", "x: R\nmin([1, nan, x])"])
def test_a_nan_argument_makes_max_and_min_nan_at_once(program):
    # max(0.0, nan) stayed unevaluated until printed, so SymPy's 0.0 * max(…) was 0 (export fuzzer:
    # NumPy and JAX give nan, and jax.grad of x*jnp.maximum(x, nan) is nan)
    assert np.isnan(float(Session().eval(program)))



def test_held_nans_that_cancel_in_a_difference_leave_nan():
    # (x + nan) - (x + (x + nan)) was -x (the held nans cancelled; the result a product -1.0*x,
    # not a sum): the random-program export run's JAX module gave nan, as IEEE does
    assert np.isnan(float(Session().eval("x: R\n(x + nan) - (x + (x + nan)) at x = 0.5")))
    assert float(Session().eval("y: R\ndiff((y + nan) - (y + (y + nan)), y)")) == -1.0  # jax.grad: -1


def test_a_held_infinity_inside_a_factor_is_not_taken_for_cancelled():
    # inf*(inf + x): the held inf sits inside the factor (x + inf), not among the product's factors;
    # taking it for cancelled added nan twice (once held again, Written(Written(nan))), and printing
    # the sum failed on SymPy's nan comparison (found by the random-program export test)
    session = Session()
    session.run("x: R")
    [result] = session.run("inf*(inf + x)")
    assert (result.text, result.latex) == ("inf*(x + inf)", r"\infty \left(x + \infty\right)")
    assert float(Session().eval("x: R\ninf*(inf + x) at x = 0.5")) == np.inf  # NumPy: inf*(inf + 0.5)


HELD_INF_BESIDE_NAN = [
    "g(a, b) = max(a, b) * sg(b)\nfactor(inf / g(x, y)) at x = nan",
    "y: R\ny*inf*nan",
    "x: R\ny: R\nx*(inf + y) + nan*(x + nan*y)",
    "v: R^3\nW: R^(2,2)\nf(a) = a^2 + sg(a)\n(-(3. - nan) + ((f(x) ^ W[1, 0]) ^ [v[0], 100])) at x = inf",
]


@pytest.mark.parametrize("program", HELD_INF_BESIDE_NAN)
def test_a_held_inf_beside_a_held_nan_prints(program):
    # SymPy's sort keys end in the numbers, so ordering a held oo beside a held nan compared them
    # (Invalid NaN comparison) in every printer: the grammar fuzzer, seed 401 (12 programs)
    [result] = Session().run(program)[-1:]
    assert "nan" in result.text and r"\text{NaN}" in result.latex
    assert "nan" in to_pretty(result.value, width=100)


def test_a_held_inf_beside_a_held_nan_exports(tmp_path):
    source = "x: R\ny: R\nk(y) = (-(3. - nan) + ((y^2 + sg(y)) ^ x) ^ 2)\nh = factor(inf / (x*sg(y))) at x = nan"
    session = Session()
    session.run(source)
    (tmp_path / "held.py").write_text(export_program(session, "numpy", source))
    spec = importlib.util.spec_from_file_location("held", tmp_path / "held.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert np.isnan(module.k(2.0, x=np.inf)) and np.isnan(module.h(2.0))


def test_softmax_of_an_argument_that_overflowed_is_nan_as_in_jax():
    # v^2 overflows to inf inside the compiled function; jax.nn.softmax shifts by that inf maximum
    # (inf - inf): nan everywhere, so a where on it takes the other branch (differential fuzzer, seed 109)
    session = "v: R^3\n"
    assert np.isnan(values(session + "softmax(v^2) at v = [1e300, -0.0, 0.0]")).all()
    assert float(Session().eval(session + "where(softmax(v^2)[2] < dot(v, v), 1, 2) at v = [1e300, 0.0, 0.0]")) == 2.0
    np.testing.assert_allclose(values(session + "softmax(-v^2) at v = [1e300, 1, 0]"),
                               [0.0, 0.2689414213699951, 0.7310585786300049], rtol=1e-15)


def values(program: str) -> np.ndarray:
    return np.asarray(Session().eval(program), dtype=float)


@pytest.mark.parametrize("target, message", [("v[1e308]", "an index must be an integer, not 1e308"),
                                             ("v[2.0]", "an index must be an integer, not 2.0"),
                                             ("v[99999999999999999999999]", "is out of range"),
                                             ("v[3]", "index 3 is out of range for length 3")])
def test_an_at_target_index_that_is_no_index_is_a_shape_error(target, message):
    # at x[1e308] = v was an InternalError (int('1e308')): the grammar fuzzer, seed 403
    from gradlang.errors import ShapeError

    with pytest.raises(ShapeError, match=re.escape(message)) as caught:
        Session().run(f"v: R^3\nv[0] + 1 at {target} = 2")
    assert caught.value.line == 2


def test_a_function_does_not_see_through_an_infinity_beside_a_variable():
    # sign(a*inf) was sign(a): 0 at a = 0 where IEEE's sign(0*inf) is nan (export fuzzer, where NumPy's
    # module gave nan); SymPy calls oo positive, so the inf is held (it claims no sign), in the value
    # and when the value is settled in floats
    session = "a: R\n"
    assert np.isnan(float(Session().eval(session + "sign(a*inf) at a = 0.0")))
    assert float(Session().eval(session + "sign(a*inf) at a = -2.0")) == -1.0
    [result] = Session().run(session + "sign(a*inf)")[-1:]
    assert result.text == "sign(a*inf)"


@pytest.mark.parametrize("statement, expected", [
    ("grad(where(v[2] <= sqrt(-1.5) / mean(W), v[0]^2.0 + dot(v, v), 1 / v[2]), v)", [0.0, 0.0, -0.2712673611111111]),
    ("hessian(where(v[2] <= sqrt(-1.5) / mean(W), v[0]^2.0, 1 / v[2]), v)",
     [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.2825701678240741]]),
])
def test_a_condition_with_a_side_that_is_not_real_is_false_in_a_derivative(statement, expected):
    # sqrt(-1.5) in a where's condition: rebuilding the comparison in the derivative raised SymPy's
    # "Invalid comparison of non-real" (an InternalError; differential fuzzer, seed 110); as in JAX,
    # a comparison with nan is false, so the other branch is differentiated
    program = f"v: R^3\nW: R^(2,3)\n{statement} at W = [[-369.0, -1.33, 0.0], [-1e-300, 1.0, 0.0]], v = [-2.3, -1.0, 1.92]"
    np.testing.assert_allclose(values(program), expected, rtol=1e-12)


def test_a_simplify_that_fails_on_a_nan_condition_keeps_the_value():
    # blocked simplifies its difference; SymPy's simplify compared a nan inside a where's condition
    # and raised "Invalid NaN comparison" (an InternalError; differential fuzzer, seed 110). JAX: -2
    program = ("v: R^3\nW: R^(2,3)\nblocked(where(where(2.0 < (z / v[0]), (1 - y), v[1]) <= where(1e-3 > v[2]^0.5, "
               "where(0.0 <= 0.5, 3, v[0]), mean(v)), dot(max(v, v, v), transpose(W) @ (W @ v)), sg(y^2.0)), y) "
               "at W = [[0.0, 0.0, 1e300], [-72.0, 0.0, 1e300]], z = 1e300, v = [0.0, 0.0, -1.92], y = -1.0")
    assert float(Session().eval(program)) == -2.0


@pytest.mark.parametrize("function", ["sigmoid", "softplus"])
def test_sigmoid_and_softplus_of_nan_are_nan_at_once(function):
    # left whole, tanh(softplus(nan)) asked SymPy for the sign of nan's digits (an InternalError:
    # the grammar fuzzer, seed 405)
    assert np.isnan(float(Session().eval(f"tanh({function}(nan))")))
    assert np.isnan(float(Session().eval(f"{function}(nan)")))


@pytest.mark.parametrize(
    "program, expected",
    [
        ("max(1, inf^0.0)", 1.0),
        ("reduce_max(-pi, inf ^ 0.0)", 1.0),
        ("min(-pi, inf^0.0)", -np.pi),
        ("x: R\nmax(x, inf^0.0) at x = 2.5", 2.5),
        ("x: R\ndiff(max(x, inf^0.0), x) at x = 0.5", 0.0),
    ],
)
def test_max_of_a_held_ieee_power_is_its_float(program, expected):
    # inf^0.0 is held (1.0 in IEEE, nan to SymPy's evalf): max ordered it by evalf and SymPy raised
    # "Invalid NaN comparison" (an InternalError; grammar fuzzer, typed seed 407)
    assert float(Session().eval(program)) == expected


@pytest.mark.parametrize(
    "program, expected",
    [
        ("v: R^3\nwhere(((1e308 + pi) * (1e308 + pi)) < -v, ((1e308 + pi) * (1e308 + pi)), -v) at v = [1, -2, 3]",
         [-1.0, 2.0, -3.0]),
        ("x: R\n(1e308 + pi)*(1e308 + pi) + x at x = 1", np.inf),
        ("x: R\nwhere(x > 0, (pi + 1e300)^2, x) at x = 1", np.inf),
    ],
)
def test_a_constant_part_named_by_the_compiler_overflows_to_inf(program, expected):
    # (1e308 + pi)^2 became _t0**2 with _t0 a Python float, whose ** raised OverflowError (an InternalError;
    # grammar fuzzer, typed seed 407); constants are NumPy's float64 now
    np.testing.assert_array_equal(np.array(Session().eval(program), dtype=float), expected)


def test_a_simplify_that_recurses_without_end_keeps_the_value():
    # blocked simplifies its difference; SymPy's simplify of a condition holding sqrt(-1.5) recursed without
    # end (a LimitError "nests too deeply"; differential fuzzer, seed 113). JAX: [0, 0, 0]
    program = ("v: R^3\nz: R\nf(u) = (dot(v, v))^(0.5)\n"
               "blocked(where((((-1.5))^(0.5) * dot(v, v)) <= where(dot(v, v) >= atan(2.0), z, (v)[2]), "
               "sg(dot(v, v)), (f(1))^(-1)), v) at z = -1.0, v = [2.0, 2.0, -400.0]")
    assert [float(e) for e in Session().eval(program)] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "statement",
    [
        "((7 - v) ^ ((g(x, y) / 0.0) - (2 * 2.5))) at x = nan",
        "explain ((7 - v) ^ ((g(x, y) / 0.0) - (2 * 2.5))) at x = nan",
        "explain (((g(x, y) / 0.0) - log(7, W)) ^ ((g(x, y) / 0.0) - log(7, W))) at x = nan",
    ],
)
def test_a_power_whose_exponent_sympy_cannot_order_is_built_unevaluated(statement):
    # Pow's evaluation factored an exponent holding nan and compared it (an InternalError: "Invalid NaN
    # comparison"; grammar fuzzer, typed seed 409); unevaluated, NumPy computes it as IEEE says
    session = Session()
    session.run("v: R^3\nW: R^(2,2)\nx: R\ny: R\ng(a, b) = max(a, b) * sg(b)")
    assert session.run(statement)[-1].text
    value = session.eval("((7 - v) ^ ((g(x, y) / 0.0) - (2 * 2.5))) at x = nan, y = 1.0, v = [6.0, 2.0, 8.0]")
    assert [float(e) for e in value][0] == 1.0  # IEEE: 1^nan is 1
    assert all(np.isnan(float(e)) for e in list(value)[1:])


@pytest.mark.parametrize("statement", ["linspace(1, 1e308, 0) at x = [0.5, 1]", "linspace(0, 1, 0)"])
def test_linspace_of_no_points_is_a_placed_value_error(statement):
    # an empty vector at a list of points was an InternalError (np.stack of nothing; grammar fuzzer, typed
    # seed 411), and empty vectors broke max and the printers: no value is empty, as no declaration is
    from gradlang.errors import ValueError as GradlangValueError

    with pytest.raises(GradlangValueError, match="at least 1") as caught:
        Session().run(f"x: R\n{statement}")
    assert (caught.value.line, caught.value.column) == (2, statement.index("0)") + 1)


@pytest.mark.parametrize("a, b, n", [(-1e308, 1e308, 3), (1.7e308, -1.7e308, 5), (-np.inf, 1.0, 4),
                                     (1.0, np.inf, 3), (np.nan, 1.0, 3), (-3.0, 3.0, 7)])
def test_linspace_is_jaxs_where_the_width_overflows(a, b, n, capfd):
    # NumPy's step (b - a)/(n - 1) overflowed: linspace(-1e308, 1e308, 3) was [nan, inf, 1e308], with NumPy's
    # RuntimeWarnings and their file paths on the user's terminal
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    expected = np.asarray(jax.numpy.linspace(a, b, n))
    got = values(f"linspace({a}, {b}, {n})")
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)
    assert capfd.readouterr().err == ""


def test_a_scalar_whose_power_overflows_in_a_compiled_value_is_inf():
    """fuzz.py seed 5001: `(v * y)^3` is compiled as v**3 * y**3, and y**3 of the Python float 1e300 raised
    OverflowError (an InternalError); a float goes in as NumPy's float64, so it is inf, as JAX's y**3 is."""
    session = Session()
    session.run("v: R^3\ny: R")
    got = np.asarray(session.eval("(v * y)^3 at v = [625.0, 2.0, -1.0], y = 1e300"), dtype=float)
    assert got.tolist() == [np.inf, np.inf, -np.inf]
    assert float(session.eval("y^3 * sum(v) at v = [1.0, 2.0, 3.0], y = 1e300")) == np.inf
