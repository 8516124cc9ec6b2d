"""Builtins of LANGUAGE.md sections 4-6 as (program, expected plain text) rows."""

import numpy as np
import pytest

from gradlang import Session
from gradlang.core import builtins

ROWS = [
    # stop_gradient, section 4
    ("diff(x*stop_gradient(x), x)", "stop_gradient(x)"),
    ("diff(x*stop_gradient(x), x, 2)", "0"),
    ("diff(x*sg(x), x)", "stop_gradient(x)"),
    ("stop_gradient(3)", "3"),
    ("sg(pi)", "pi"),
    ("sg(sg(x))", "stop_gradient(x)"),
    ("sg([x, 2])", "[stop_gradient(x), 2]"),
    ("sg(x) at x = 2", "2"),
    ("unstopped(x*sg(x) + sg(sg(y)))", "x^2 + y"),
    ("blocked(x*sg(x), x)", "x"),
    ("v: R^3\nblocked(log(softmax(v)[0]), v)", "[0, 0, 0]"),
    ("v: R^2\nblocked(v * sg(v), v)", "diag(v)"),  # the tensor formula, as at a symbolic size (next row)
    ("n: size\nu: R^n\nblocked(u * sg(u), u)", "diag(u)"),  # diag(2 u) - diag(u), collected
    ("v: R^2\nblocked(v[0] * sg(v[1]), v)", "[0, v[0]]"),
    # derivatives, section 5
    ("diff(x^3, x, 2)", "6*x"),
    ("diff(x^2*y^3, x, y)", "6*x*y^2"),
    ("diff(x^2*y^3, x, y, 2)", "12*x*y"),
    ("diff(x^3, x, 0)", "x^3"),
    ("diff([x^2, x], x)", "[2*x, 1]"),
    ("grad(x*y, x)", "y"),
    ("v: R^2\ngrad(v[0]*v[1], v)", "[v[1], v[0]]"),
    ("v: R^2\ngrad(v[0]*y, [y, v[0]])", "[v[0], y]"),
    ("W: R^(1,2)\ngrad(sum(W), W)", "[[1, 1]]"),
    ("v: R^2\njacobian([v[0]*v[1], v[0]], v)", "[[v[1], v[0]], [1, 0]]"),
    ("v: R^2\nhessian(v[0]^2*v[1], v)", "[[2*v[1], 2*v[0]], [2*v[0], 0]]"),
    # the conventions at kinks, section 5
    ("diff(abs(x), x) at x = 0", "0"),
    ("diff(abs(x), x)", "sign(x)"),
    ("diff(relu(x), x) at x = 0", "0"),
    ("diff(relu(x), x) at x = 2", "1"),
    ("diff(sign(x) + floor(x) + ceil(x) + round(x), x)", "0"),
    ("v: R^3\ngrad(max(v), v) at v = [1, 3, 3]", "[0, 1/2, 1/2]"),
    ("v: R^3\ngrad(max(v), v) at v = [2, 2, 2]", "[1/3, 1/3, 1/3]"),
    ("v: R^3\ngrad(max(v[0], v[1], v[2]), v) at v = [2, 2, 2]", "[1/3, 1/3, 1/3]"),
    ("v: R^3\ngrad(min(v), v) at v = [1, 1, 3]", "[1/2, 1/2, 0]"),
    ("diff(max(x, 0), x) at x = 0", "1/2"),
    ("diff(max(x, 0), x) at x = -1", "0"),
    ("diff(where(x > 0, x^2, 3*x), x)", "where(x > 0, 2*x, 3)"),
    ("diff(where(x > 0, sqrt(x), 0), x) at x = 0.0", "0.0"),
    ("v: R^3\ngrad(max(v), v) at v = [1.0, 3.0, 3.0]", "[0.0, 0.5, 0.5]"),
    # elementwise, section 6
    ("exp(0) + log(1) + sqrt(4)", "3"),
    ("log(8, 2)", "3"),
    ("sin(pi/2) + cos(0) + tan(0)", "2"),
    ("asin(1)", "pi/2"),
    ("atan(1) + acos(1)", "pi/4"),
    ("sinh(0) + cosh(0) + tanh(0)", "1"),
    ("sigmoid(0)", "1/2"),
    ("relu([-1, 2])", "[0, 2]"),
    ("softplus(0)", "log(2)"),
    ("abs(-3) + sign(-2)", "2"),
    ("[floor(7/2), ceil(7/2), round(5/2), round(7/2), round(-5/2)]", "[3, 4, 2, 4, -2]"),
    ("round(2.5)", "2.0"),
    ("[sign(1.5), floor(2.5), ceil(1.5), abs(-2.0)]", "[1.0, 2.0, 2.0, 2.0]"),
    ("exp([0, 1])", "[1, exp(1)]"),
    # reductions
    ("sum([1, 2, 3]) + reduce_sum([[1, 1], [1, 1]])", "10"),
    ("mean([1, 2, 6]) + reduce_mean([2])", "5"),
    ("prod([2, 3, 4])", "24"),
    ("norm([3, 4])", "5"),
    ("logsumexp([0, 0])", "log(2)"),
    ("dot([1, 2], [3, 4])", "11"),
    ("len([1, 2, 3]) + len([[1, 2]])", "4"),
    ("max([1, 5, 2]) + reduce_max([1, 5, 2]) + min(3, 1, 2) + reduce_min([4, 3])", "14"),
    ("max([-1, 2], 0)", "[0, 2]"),
    ("max_share(1, 1, 3, 3)", "1/2"),
    ("min_share(2, 1, 3, 3)", "0"),
    # vectors
    ("softmax([0, 0])", "[1/2, 1/2]"),
    ("softmax([[0, 0], [1, 1]])", "[[1/2, 1/2], [1/2, 1/2]]"),
    ("transpose([[1, 2], [3, 4]])", "[[1, 3], [2, 4]]"),
    ("transpose([1, 2])", "[1, 2]"),
    ("where([1, -1] > 0, [10, 20], 0)", "[10, 0]"),
    ("linspace(0, 1, 3)", "[0.0, 0.5, 1.0]"),
    ("linspace(-1e308, 1e308, 3)", "[-1e+308, 0.0, 1e+308]"),
    ("linspace(-inf, 1, 4)", "[-inf, -inf, -inf, 1.0]"),
    # algebra
    ("simplify(sin(x)^2 + cos(x)^2)", "1"),
    ("expand((x + 1)^2)", "x^2 + 2*x + 1"),
    ("factor(x^2 - 1)", "(x - 1)*(x + 1)"),
    ("N(1/4)", "0.25"),
    ("N(pi)", "3.141592653589793"),
    # arithmetic on shapes
    ("[1, 2] + 1", "[2, 3]"),
    ("[1, 2] * [3, 4]", "[3, 8]"),
    ("[[1, 2], [3, 4]] @ [1, 1]", "[3, 7]"),
    ("[1, 1] @ [[1, 2], [3, 4]]", "[4, 6]"),
    ("[1, 2] @ [3, 4]", "11"),
    ("[[1, 0], [0, 1]] @ [[1, 2], [3, 4]]", "[[1, 2], [3, 4]]"),
    ("[[1, 2], [3, 4]][1]", "[3, 4]"),
    ("[[1, 2], [3, 4]][1, 0]", "3"),
    ("[1, 2, 3][-1]", "3"),
    ("-x^2", "-x^2"),
    ("2^3^2", "512"),
    ("2**-1", "1/2"),
    # at, section 7
    ("x^2 + y at x = 3", "y + 9"),
    ("v: R^2\nsum(v) at v = [1, 2]", "3"),
    ("v: R^2\nv[0] * v[1] at v[0] = 3", "3*v[1]"),
    ("t^2 at t = [1, 2, 3]", "[1.0, 4.0, 9.0]"),
    ("t * u at t = [1, 2, 3], u = [10]", "[10.0, 20.0, 30.0]"),
    ("sigmoid(t) at t = linspace(-1, 1, 3)", "[0.2689414213699951, 0.5, 0.7310585786300049]"),
    ("[t, 1] at t = [1, 2]", "[[1.0, 1.0], [2.0, 1.0]]"),
    ("1/x at x = 0.0", "inf"),
    ("log(x) at x = 0.0", "-inf"),
    ("x/y at x = 0.0, y = 0.0", "nan"),
    ("sqrt(x) at x = -1.0", "nan"),
    ("inf - 1", "inf"),
]


@pytest.mark.parametrize("program, expected", ROWS)
def test_builtin(program, expected):
    assert Session().run(program)[-1].text == expected


def test_every_builtin_of_the_reference_exists_with_help():
    named = (
        "stop_gradient sg unstopped blocked diff grad jacobian hessian exp log sqrt sin cos tan asin acos atan "
        "sinh cosh tanh sigmoid relu softplus abs sign floor ceil round sum mean prod norm logsumexp dot len "
        "max min softmax transpose where linspace simplify expand factor N reduce_sum reduce_mean reduce_max reduce_min "
        "log_softmax outer diag eye onehot argmax argmin normalize cosine huber trace det logdet inv load"
    ).split()
    for name in named:
        entry = builtins.lookup(name)
        assert entry is not None, name
        assert entry.doc and entry.example, name


@pytest.mark.parametrize("name", sorted(builtins.TABLE))
def test_every_builtin_example_runs(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("weights.npy", np.array([[0.5, -1.0], [2.0, 0.25]]))  # the file load's example reads
    Session().run(builtins.TABLE[name].example)


def test_stable_softmax_at_large_logits_is_finite():
    values = Session().eval("softmax([1000.0, 1001.0, -1000.0])")
    assert all(0 <= float(v) <= 1 for v in values)
    assert abs(sum(float(v) for v in values) - 1) < 1e-12


def test_a_builtin_can_take_the_at_point_itself(monkeypatch):
    """`at` on a builtin's record (as gradcheck has) hands it the point; the evaluator names no builtin."""
    seen = []

    def at(call, pairs, batch):
        seen.append((call.name, [str(a) for a in call.args], [(str(s), str(v)) for s, v in pairs], batch))
        return call.args[0]

    entry = builtins.Builtin("probe", lambda call: 0, 1, 1, "test only", "probe(x)", "tools", at=at)
    monkeypatch.setitem(builtins.TABLE, "probe", entry)
    assert Session().eval("probe(x^2) at x = 3") == Session().eval("x^2")
    assert seen == [("probe", ["x**2"], [("x", "3")], [])]
    assert Session().eval("probe(x)") == 0  # without at, the ordinary function
    assert Session().run("probe = 5\nprobe")[-1].text == "5"


def test_builtins_inside_a_function_body_record_nothing_for_explain():
    """Services of a call inside a user function: no derivations, no source (explain shows the statement's own)."""
    result = Session().run("f(u) = diff(u^2, u)\nexplain f(x) + diff(x^3, x)")[-1]
    assert [d.operation for d in result.derivations] == ["diff"]
