"""Programs that only the wall-clock limit stopped (issue 29, row 19): each meets a size bound instead.

The bounds are sizes, never seconds, so each program ends in the same
LimitError (or the same kept value and note) on every machine; these tests
assert the bound named, not how long it took.
"""

from __future__ import annotations

import math

import pytest
from sympy.core.cache import clear_cache

from gradlang import GradlangError, Session, limits
from gradlang.render.plain import to_plain
from tests.safety import SAFETY_NET

# f_{k+1} = f_k*f_k + f_k: 60 distinct subexpressions, 2^30 as a tree
DOUBLING = "f0 = x\n" + "".join(f"f{k + 1} = f{k}*f{k} + f{k}\n" for k in range(30))


def _limit_error(program: str) -> GradlangError:
    with pytest.raises(GradlangError) as caught:
        Session(time_limit=SAFETY_NET).run(program)
    assert caught.value.kind == "LimitError", caught.value.format()
    assert caught.value.line is not None
    return caught.value


def test_a_derivative_that_grows_with_each_order_meets_the_derivative_size_bound():
    # the 100th derivative of x^x: each order multiplies the DAG by about 1.8
    error = _limit_error("diff(x^x, x, 100)")
    assert f"only up to {limits.MAX_DERIVATIVE_NODES} more than the expression had" in error.message


def test_derivatives_of_every_order_below_the_bound_are_unchanged():
    assert to_plain(Session().eval("diff(x^5*y^2, x, 3, y, 2)")) == "120*x^2"
    assert to_plain(Session().eval("diff(sin(x), x, 4)")) == "sin(x)"


def test_a_comparison_of_a_doubling_chain_waits_for_numbers():
    # SymPy decided `f30 > 0` by asking the sign of a 2^30-node tree, path by path
    session = Session(time_limit=SAFETY_NET)
    session.run(DOUBLING)
    assert session.run("f30 > 0")[-1].text.rstrip().endswith(" > 0")  # text names the shared parts
    assert session.eval("where(f30 > 0, f30, 0) at x = 0.5") == math.inf
    assert session.eval("where(f2 > 0, 1, 2) at x = 1") == 1


def test_a_small_comparison_is_still_decided():
    assert to_plain(Session().eval("x^2 + 1 > 0")) == "true"


@pytest.mark.parametrize("name", ["expand", "factor", "simplify"])
def test_a_power_that_would_multiply_out_to_too_many_terms_is_kept_with_a_note(name):
    result = Session(time_limit=SAFETY_NET).run(f"{name}((x + y + z + w + 1)^60)")[-1]
    assert to_plain(result.value) == "(w + x + y + z + 1)^60"
    assert result.warnings == (f"{name} kept 1 component as it was: multiplied out it would have more than "
                               f"{limits.MAX_EXPANDED_TERMS} terms",)


def test_a_power_within_the_term_bound_is_expanded():
    assert to_plain(Session().eval("expand((x + y)^3)")) == "x^3 + 3*x^2*y + 3*x*y^2 + y^3"


def test_a_product_of_large_symbolic_matrices_meets_the_product_bound():
    error = _limit_error("A: R^(60,60)\nB: R^(60,60)\ncomponents(A @ B)")  # A @ B is a formula
    assert error.message.startswith(f"this matrix product would build 216000 products of entries, above the "
                                    f"limit of {limits.MAX_MATMUL_PRODUCTS}")


def test_softmax_of_a_long_vector_meets_the_row_bound():
    # each of softmax's n components holds the whole row: n² arguments (700 MB for n = 100 000)
    error = _limit_error("x: R^3000\ncomponents(softmax(x))")  # softmax(x) is a formula
    assert error.message == (f"its 3000 components would hold 9000000 arguments together (each holds its whole "
                             f"row), above the limit of {limits.MAX_ROW_ARGUMENTS}")


def test_explain_refuses_a_derivative_too_large_to_print_before_deriving_it():
    # by components (unfold asks for them), softmax of 500 components writes out 250 000 nodes: refused
    error = _limit_error("x: R^500\nexplain[unfold] grad(log(softmax(x)[0]), x)")
    assert f"even with its shared parts named, above the limit of {limits.MAX_PRINTED_NODES}" in error.message
    assert (error.line, error.column) == (2, 17)  # the grad it refuses


def test_explain_at_a_large_literal_size_shows_the_tensor_pass():
    # issue #36: the same request as a formula is the reverse pass, as at x: R^n, with nothing to refuse
    result = Session(time_limit=SAFETY_NET).run("x: R^500\nexplain grad(log(softmax(x)[0]), x)")[-1]
    (explanation,) = result.steps
    assert explanation.summary == "tensor reverse pass" and explanation.check.agrees
    assert str(result.value) == "onehot(0, 500) - softmax(x)"


def test_max_of_a_doubling_chain_is_built_without_asking_its_sign():
    # issue 29, row 28: max/min asked SymPy whether each argument is comparable, and its assumptions
    # walked the shared chain once per path; blocked of a where holding a max took 14.7 s of CPU
    # SymPy's cache keeps the chain's nodes shared (equal ones are one object); nodes left in it by earlier
    # tests, equal but built apart, are compared as trees. The user's case is a fresh process: start as one.
    clear_cache()
    session = Session(time_limit=SAFETY_NET)
    session.run(DOUBLING)
    assert session.eval("diff(max(f30, x), x) at x = 0.5") == math.inf
    blocked = session.run("blocked(where(b != 0, max(f30, sg(f30)), f30), x)")[-1]
    assert blocked.text.endswith("- max_share(0, t29, t29)*where(b != 0, 1, 0)\n") or \
        blocked.text.rstrip().endswith("- max_share(0, t29, t29)*where(b != 0, 1, 0)")
    assert session.eval("max(f2, 3) at x = 1") == 6


@pytest.mark.parametrize("statement", ["explain diff(f30, x)", "explain blocked(f30*sg(x), x)",
                                       "explain backward(f30*sg(x), x)"])
def test_explain_refuses_an_expression_too_large_as_a_tree(statement):
    error = _limit_error(DOUBLING + statement)
    assert error.message.startswith(f"explain derives step by step an expression of at most "
                                    f"{limits.MAX_EXPLAINED_TREE_NODES} nodes written out as a tree")


def test_explain_of_a_short_doubling_chain_still_derives_it():
    session = Session()
    result = session.run("f0 = x\nf1 = f0*f0 + f0\nf2 = f1*f1 + f1\nexplain diff(f2, x)")[-1]
    assert result.steps
    assert result.value == session.eval("diff(f2, x)")


# f_k(y) = f_{k-1}(f_{k-1}(y)): each level doubles the calls (2^59 for f60), each squaring a power whose
# exponent grows by a bit; only the integer-size bound ended it, after 2^17 calls and minutes of CPU.
CALL_DOUBLING = "f1(y) = y*y\n" + "".join(f"f{k}(y) = f{k - 1}(f{k - 1}(y))\n" for k in range(2, 61))


@pytest.mark.parametrize("statement", ["f60(x)", "diff(f60(x), x)", "explain diff(f60(x), x)"])
def test_definitions_that_double_their_calls_meet_the_call_bound(statement):
    error = _limit_error(CALL_DOUBLING + "x: R\n" + statement)
    assert error.message.startswith(f"this statement calls user functions more than {limits.MAX_USER_CALLS} times")


def test_a_chain_of_calls_below_the_call_bound_is_unchanged():
    session = Session(time_limit=SAFETY_NET)
    session.run(CALL_DOUBLING + "x: R")
    assert to_plain(session.eval("f4(x)")) == "x^256"  # 2^3 calls of f1
    assert session.eval("f4(2)") == 2 ** 256


def test_the_calls_are_counted_per_statement(monkeypatch):
    monkeypatch.setattr(limits, "MAX_USER_CALLS", 7)
    session = Session(time_limit=SAFETY_NET)
    session.run(CALL_DOUBLING + "x: R")
    assert to_plain(session.eval("f3(x)")) == "x^16"  # 7 calls: f3, 2 × f2, 4 × f1
    assert to_plain(session.eval("f3(x)")) == "x^16"  # a new statement, a new count
    with pytest.raises(GradlangError, match="more than 7 times"):
        session.run("f3(f1(x))")


def test_a_formula_is_simplified_once_however_often_the_ledger_asks():
    # explain blocked(where(b != 0, max(W @ sg(x)), 0), x) asked for 40 formulas 84 times (9.5 s of CPU)
    import sympy as sp

    from gradlang.expr.bounded import tidy

    asked = []

    def counting(expr):
        asked.append(expr)
        return sp.simplify(expr)

    a, b = sp.symbols("a b", real=True)
    assert tidy(a * b / b + a, counting) == tidy(a * b / b + a, counting) == 2 * a
    assert asked == [2 * a]  # a*b/b + a is 2*a as SymPy builds it: simplified once
