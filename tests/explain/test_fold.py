"""The vector-level tape of explain backward (explain/backward/fold.py): shorter, and the scalar tape when expanded.

A folded row stands for several scalar rows; tape_notation.component writes
its k-th component back in the scalar tape's symbols. These tests evaluate
both at random points: every component of every folded forward and backward
row must have the value of the scalar row it stands for.
"""

from __future__ import annotations

import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import sympy as sp

from gradlang import Session
from gradlang.expr.tensor.lower import lowered
from gradlang.derive.dag.tape import adjoint_symbol, value_symbol
from gradlang.explain.backward.notation import component
from gradlang.expr.stopgrad import unstopped
from gradlang.render import to_json, to_plain

ROOT = Path(__file__).resolve().parents[2]
STABLE = "stable_softmax(v) = exp(v - stop_gradient(max(v))) / sum(exp(v - stop_gradient(max(v))))\n"
SOFTMAX = "x: R^3\n" + STABLE + "explain backward(log(stable_softmax(x)[0]), x)"
VQ = ("W: R^(3,2)\nx: R^2\nz_e = W @ x\ne: R^3\nbeta = 1/4\n"
      "explain backward(sum((z_e - sg(e))^2) + beta * sum((sg(z_e) - e)^2), W)")
TD = ("W: R^(2,2)\nq(s) = W @ s\ns1 = [1, 0]; s2 = [0, 1]; r = 1; gamma = 9/10\n"
      "explain backward(1/2 * (r + gamma * sg(max(q(s2))) - q(s1)[0])^2, W)")
PROGRAMS = {
    "stable_softmax": SOFTMAX,
    "vq_vae": VQ,
    "td_target": TD,
    "norm_unfolded": "x: R^3\nexplain[unfold] backward(norm(x), x)",
    "builtin_softmax": "x: R^3\nexplain backward(log(softmax(x - sg(max(x)))[0]), x)",
    "logsumexp_unfolded": "x: R^4\nexplain[unfold] backward(logsumexp(x) * sg(x[1]), x)",
    "irrelevant": "W: R^(2,2)\ne: R^2\nexplain backward(sum((W @ [1, 2] - sg(e))^2), W)",
    "straight_through": "x: R^3\nexplain backward(sum(x + sg(round(x) - x)), x)",
    "not_folded": "x: R^3\nexplain backward(x[0]*x[1] + x[2], x)",
    "vector_builtins": "x: R^3\nexplain backward(logsumexp(x) + norm(x)*sg(x[0]), x)",
    # the tape computes x[0], x[10], x[11], x[1], … (SymPy's argument order): components go by index
    "out_of_order": "x: R^12\nexplain backward(sum(exp(x)*x) + x[0]*x[1], x)",
}


def _view(program: str):
    """The tape of components of the program's explain backward (by a declared tensor, explain shows the
    tensor pass; the tape is built from the same request)."""
    from explain_helpers import tape_view

    return tape_view(program)


def _values(scalar, point) -> dict:
    """The number of every scalar value v_j and adjoint v̄_j at the point."""
    def number(expr):
        value = unstopped(sp.sympify(expr)).xreplace(point)
        return sp.N(value, 30) if isinstance(value, sp.Expr) else value  # a condition (x > 0) is true or false

    values = {value_symbol(r.index): number(r.expr) for r in scalar.tape.forward}
    values.update({adjoint_symbol(r.index): number(r.adjoint) for r in scalar.tape.backward + scalar.toward})
    return values


def _scalar_sums(scalar, values) -> dict:
    """Each scalar adjoint symbol v̄_j → its row's sum of contributions at the values (a row is what a fold stands for)."""
    return {adjoint_symbol(r.index): r.local.xreplace(values) for r in scalar.tape.backward + scalar.toward}


def _point(view, seed: int) -> dict:
    symbols = set()
    for row in view.scalar.tape.forward:
        symbols |= {s for s in unstopped(row.expr).free_symbols}
    rng = random.Random(seed)
    return {s: sp.Rational(rng.randint(-30, 30), 17) for s in sorted(symbols, key=str)}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_folded_row_expanded_is_the_scalar_rows_it_stands_for(name):
    view = _view(PROGRAMS[name])
    members = view.members
    for seed in range(2):
        point = _point(view, seed)
        values = _values(view.scalar, point)
        for row in view.tape.forward:
            local = row.expr if row.operation == "input" else row.local  # an input row's local names it: x, W[:, 0]
            for k, j in enumerate(row.members):
                got = sp.N(component(local, k, members).xreplace(values).xreplace(point), 30)
                assert abs(got - values[value_symbol(j)]) < 1e-20, (name, row.index, k)
        sums = _scalar_sums(view.scalar, values)
        for row in view.tape.backward + view.toward:
            for k, symbol in enumerate(members[adjoint_symbol(row.index)]):
                want = sp.N(sums.get(symbol, 0), 30)  # a component the output does not reach has no scalar row: 0
                got = sp.N(component(row.local, k, members).xreplace(values), 30)
                assert abs(got - want) < 1e-20, (name, row.index, k, row.local)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_folded_gradient_lines_are_grad(name):
    """d/dx[k] = v̄n[k] = …: the row it names holds grad(e, x)'s component, and the value is grad's."""
    program = PROGRAMS[name]
    view = _view(program)
    body, _, call = program.rpartition("\n")
    expected = lowered(Session().run(body + "\n" + call.replace("explain[unfold] ", "").replace("explain ", "")
                                     .replace("backward(", "grad(", 1))[-1].value)  # grad's components, as explain shows them
    grad = [e for e in sp.Array(expected).reshape(len(view.tape.gradient))] if hasattr(expected, "shape") else [expected]
    values = _values(view.scalar, _point(view, 5))
    point = _point(view, 5)
    for (symbol, ref), value, want in zip(view.tape.variables, view.tape.gradient, grad):
        assert abs(sp.N(unstopped(value - want).xreplace(point), 30)) < 1e-20, (name, symbol)
        if ref is not None:
            components = view.members[adjoint_symbol(ref.index)]
            scalar = components[ref.component or 0]
            assert abs(values.get(scalar, 0) - sp.N(unstopped(want).xreplace(point), 30)) < 1e-20, (name, symbol)


def test_the_stable_softmax_fits_in_25_lines_of_100_columns():
    """The CLI shows the tensor reverse pass at R^3 as at R^n; the tape of the same request fits too."""
    output = subprocess.run([sys.executable, "-m", "gradlang", "--plain", "-e", SOFTMAX],
                            capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "tensor reverse pass" in output and "│" not in output
    for text in (output, to_plain(_view(SOFTMAX))):
        lines = text.rstrip("\n").split("\n")
        widths = [sum(not unicodedata.combining(c) for c in line) for line in lines]
        assert len(lines) <= 25 and max(widths) <= 100, (len(lines), max(widths))
    tape = to_plain(_view(SOFTMAX))
    assert "  v5 = v1 + v4·1  ℝ³   │ v̄5 = v6*v̄6" in tape
    assert "  v6 = exp(v5)    ℝ³   │ v̄6 = v8*v̄9*e₀ + v̄7·1  # from v7, v9" in tape
    assert "  v7 = Σ v6" in tape and "v9 = v8*v6[0]" in tape


def test_folding_shortens_the_tapes_it_should():
    for name, scalar_rows, folded_rows in (("stable_softmax", 16, 10), ("vq_vae", 48, 18), ("norm_unfolded", 8, 4)):
        view = _view(PROGRAMS[name])
        assert (len(view.scalar.tape.forward), len(view.tape.forward)) == (scalar_rows, folded_rows), name


def test_components_computed_out_of_order_fold_by_their_index():
    view = _view(PROGRAMS["out_of_order"])
    assert len(view.scalar.tape.forward) == 38 and len(view.tape.forward) == 5
    text = to_plain(view)
    assert "v1 = x            ℝ¹²" in text and "v4 = v1*v3        ℝ¹²" in text and "v5 = v2 + Σ v4" in text
    assert "d/dx[10] = v̄1[10] = (x[10] + 1)*exp(x[10])" in text


def test_scalar_work_is_not_folded():
    """x[0]*x[1] + x[2]: x[0] and x[1] could make an input row, but nothing reads it whole, so nothing folds."""
    view = _view(PROGRAMS["not_folded"])
    assert len(view.tape.forward) == len(view.scalar.tape.forward) == 5
    assert all(row.size == 1 for row in view.tape.forward + view.tape.backward)
    text = to_plain(view)
    assert "ℝ" not in text and "e₀" not in text and "d/dx[0] = v̄2 = x[1]" in text


def test_a_vector_of_stops_keeps_one_cut_per_component_under_one_head():
    view = _view(PROGRAMS["vq_vae"])
    text = to_plain(view)
    assert "v2 = sg(v1)" in text and "v4 = W[:, 0]" in text and "v18 = Σ v11 + Σ v17" in text
    # plain text heads the stops of one vector row once; JSON keeps one cut per component
    assert "v2 = sg(v1) ℝ³, one stop per component" in text
    assert text.count("irrelevant: the stopped value does not depend on W") == 1
    # each component's stop removes its own term, shown as a formula
    assert "arriving: v̄14[1] = v̄15[1] = -e[1]/2 + v14[1]/2" in text and text.count("blocking: removes [[") == 3
    cuts = to_json(view)["cuts"]
    assert [(c["row"], c.get("component"), c["verdict"]) for c in cuts] == (
        [(2, k, "irrelevant") for k in range(3)] + [(14, k, "blocking") for k in range(3)])


def test_json_carries_the_vector_rows():
    data = to_json(_view(SOFTMAX))
    forward = {row["index"]: row for row in data["forward"]}
    assert (forward[1]["local"], forward[1]["size"], forward[1]["expr"]) == ("x", 3, "[x[0], x[1], x[2]]")
    assert (forward[7]["operation"], forward[7]["local"], forward[7]["size"]) == ("sum", "Σ v6", 1)
    backward = {row["index"]: row for row in data["backward"]}
    assert backward[6]["size"] == 3 and backward[6]["adjoint"].startswith("[")
    assert [c["from"] for c in backward[6]["contributions"]] == [7, 9]
    assert [(g["row"], g["component"]) for g in data["gradient"]] == [(1, 0), (1, 1), (1, 2)]


def test_a_builtin_of_a_vector_reads_the_vector_row_whole():
    """softmax, logsumexp and norm of a whole vector row are written of it, and ∇logsumexp's adjoint is softmax."""
    text = to_plain(_view(PROGRAMS["vector_builtins"]))
    assert "v2 = norm(v1)" in text and "v5 = logsumexp(v1)" in text
    assert "v̄1 = v1*v̄2/v2 + v̄5*softmax(v1)" in text
    text = to_plain(_view(PROGRAMS["builtin_softmax"]))
    assert "v5 = v1 + v4·1" in text and "v6 = softmax(v5)[0]" in text


# --- random programs: the same expression of each component, a stopped max, a pick --------------

from hypothesis import HealthCheck, given, settings  # noqa: E402

from explain_strategies import X, Y, expressions  # noqa: E402

XS = [sp.Symbol(f"x[{i}]", real=True) for i in range(3)]


def _random_view(body, pick):
    """backward(Σₖ body(x[k], m) + pick(x[0], m), x) with m = sg(max(x)): its folded view."""
    from gradlang.derive import derivatives as derive
    from gradlang.derive.derivatives import DerivativeRequest
    from gradlang.explain.backward.view import backward_view
    from gradlang.expr.functions import Maximum
    from gradlang.expr.stopgrad import StopGradient

    m = StopGradient(Maximum(*XS))
    expr = sum(body.xreplace({X: x, Y: m}) for x in XS) + pick.xreplace({X: XS[0], Y: m})
    wrt = sp.ImmutableDenseNDimArray(XS, (3,))
    with derive.readable():
        request = DerivativeRequest("backward", expr, wrt, (), derive.grad(expr, wrt), None)
    return backward_view(request)


def _close(a, b) -> bool:
    if not isinstance(a, sp.Expr) or not isinstance(b, sp.Expr):
        return a == b  # conditions
    a, b = sp.N(a, 30), sp.N(b, 30)
    if not (a.is_number and b.is_number) or a.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or b.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return True  # a log of a negative number, a pole: nothing to compare
    return abs(a - b) < 1e-15 * (1 + abs(b))


@settings(max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(expressions(), expressions())
def test_random_folds_expand_to_their_scalar_rows(body, pick):
    if not (body.free_symbols | pick.free_symbols) & {X, Y}:
        return
    view = _random_view(body, pick)
    point = {x: sp.Rational(3 * i + 1, 7) for i, x in enumerate(XS)}
    values = _values(view.scalar, point)
    for row in view.tape.forward:
        local = row.expr if row.operation == "input" else row.local
        for k, j in enumerate(row.members):
            assert _close(component(local, k, view.members).xreplace(values).xreplace(point), values[value_symbol(j)])
    sums = _scalar_sums(view.scalar, values)
    for row in view.tape.backward + view.toward:
        for k, symbol in enumerate(view.members[adjoint_symbol(row.index)]):
            assert _close(component(row.local, k, view.members).xreplace(values), sums.get(symbol, 0)), row.local
