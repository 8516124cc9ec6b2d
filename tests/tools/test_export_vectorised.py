"""Vectorised export at ties, kinks and stops, at two lengths, against gradlang's values and gradients.

Each function below is exported once (from a program that declares x: R^3) and
called with vectors of length 3 and 5 chosen on gradlang's conventions: tied
maxima and minima (the tie shares the gradient equally), zeros of abs and
relu (derivative 0), where at its boundary, stop_gradient. gradlang's numbers
come from the same program with the argument declared at that length.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.export import TARGETS, export_program
from tests.conftest import as_floats
from tests.tools.test_export import load
from tests.tools.test_export_examples import SAMPLE, framework, literal, to_framework, to_numpy

PROGRAM = """x: R^3
W: R^(2,3)
top(v) = max(v) + min(v)
ties(u, v) = sum(max(u, v) * u + min(u, 2 * v))
kinks(v) = sum(abs(v) + relu(v) + sign(v) * v)
stops(v) = sum(v * sg(v)) + mean(sg(exp(v)) * v)
select(v) = sum(where(v > 0, v^2, -v / 2))
soft(v) = log(softmax(v)[0]) + logsumexp(v) + norm(v)
first(v) = v[0] * v[-1] + dot(v, v)
through(v) = sum(transpose(W) @ (W @ v))
listed(v) = sum([v[0], v[1], max(v)] * [1, 2, 3])
plain(v) = dot(unstopped(v * sg(v)), v) + sum(N(v))
safe(v) = sum(where(v > 0, sqrt(v), 0) + where(v <= 0, 0, log(v)))
spread(v) = sum(where(v > 0, sum(v) * v, -v))
inner(v) = dot(grad(sum(relu(v) + abs(v) + v * sg(v)) + max(v) + norm(W @ v) + logsumexp(v), v), v)
byw(v) = sum(grad(sum(tanh(W @ v)) + mean(W @ v) + W[1, 0] * v[-1], W) * W) + dot(grad(v[0] * W[0] @ v, v), v)
pairs(u, v) = sum(grad(sum(max(u, v) * u + min(u, 2 * v) + where(u > v, u^3, sg(v) / u)), u) * v)
"""

# (function, arguments at length 3, the same at length 5), at ties, kinks and boundaries
POINTS = [
    ("top", [[1.0, 3.0, 3.0]], [[1.0, 3.0, 3.0, -2.0, -2.0]]),
    ("ties", [[1.0, 2.0, 2.0], [1.0, 0.5, 2.0]], [[1.0, 2.0, 2.0, 0.0, 4.0], [1.0, 0.5, 2.0, 0.0, 1.0]]),
    ("kinks", [[0.0, -1.5, 2.0]], [[0.0, -1.5, 2.0, 0.0, 0.25]]),
    ("stops", [[0.5, -1.0, 2.0]], [[0.5, -1.0, 2.0, 0.0, 1.5]]),
    ("select", [[0.0, -1.0, 2.0]], [[0.0, -1.0, 2.0, 0.0, 3.0]]),
    ("soft", [[1.0, 3.0, 3.0]], [[1.0, 3.0, 3.0, 3.0, -1.0]]),
    ("first", [[1.0, -2.0, 3.0]], [[1.0, -2.0, 3.0, 0.5, 4.0]]),
    ("through", [[1.0, -2.0, 3.0]], [[1.0, -2.0, 3.0, 0.5, 4.0]]),
    ("listed", [[1.0, 3.0, 3.0]], [[1.0, 3.0, 3.0, 3.0, 0.0]]),
    ("plain", [[1.0, -2.0, 3.0]], [[1.0, -2.0, 3.0, 0.5, 4.0]]),
    # the untaken branch's sqrt and log are nan at v <= 0: the mask drops them (masks.py)
    ("safe", [[0.5, -1.0, 2.0]], [[0.5, -1.0, 2.0, -0.25, 0.0]]),
    # v also reaches the branch through sum(v): that use must not be masked (every component counts)
    ("spread", [[0.5, -1.0, 2.0]], [[0.5, -1.0, 2.0, -0.25, 1.0]]),
    # grad inside a function (adjoint.py): kinks at 0, a tie of the max, a stop, W @ v
    ("inner", [[0.0, 3.0, 3.0]], [[0.0, 3.0, 3.0, -1.0, 2.0]]),
    ("byw", [[1.0, -2.0, 3.0]], [[1.0, -2.0, 3.0, 0.5, 4.0]]),  # grad by the matrix W: outer products
    ("pairs", [[1.0, 2.0, 2.0], [1.0, 0.5, 2.0]], [[1.0, 2.0, 2.0, 0.0, 4.0], [1.0, 0.5, 2.0, 0.0, 1.0]]),
]
W_AT = {3: [[1.0, 0.0, 2.0], [0.5, 1.0, -1.0]], 5: [[1.0, 0.0, 2.0, 1.0, -1.0], [0.5, 1.0, -1.0, 0.0, 2.0]]}


def _module(target: str, folder):
    return _exported(PROGRAM, target, folder, f"vectorised_{target}")[1]


def _exported(source: str, target: str, folder, name: str):
    """(session, module): the program run by gradlang, and its export for the target, imported."""
    session = Session()
    session.run(source)
    return session, load(export_program(session, target, source), folder, name)


def _gradlang(name: str, args: list, n: int):
    """gradlang's value and gradient by each argument, with x and W declared for length n."""
    session = Session()
    session.run(PROGRAM.replace("x: R^3", f"x: R^{n}").replace("W: R^(2,3)", f"W: R^(2,{n})"))
    names = [f"gl_a{k}" for k in range(len(args))]
    for arg in names:
        session.run(f"{arg}: R^{n}")
    at = ", ".join(f"{a} = {literal(np.array(v))}" for a, v in zip(names, args)) + f", W = {literal(np.array(W_AT[n]))}"
    call = f"{name}({', '.join(names)})"
    value = as_floats(session.eval(f"{call} at {at}"))
    return value, [as_floats(session.eval(f"grad({call}, {a}) at {at}")) for a in names]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("vectorised")


@pytest.mark.parametrize("length", [3, 5])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name, short, long", POINTS, ids=[p[0] for p in POINTS])
def test_ties_kinks_and_stops_agree_at_two_lengths(name, short, long, target, length, folder):
    framework(target)
    module = _module(target, folder)
    args = short if length == 3 else long
    function = getattr(module, name)
    keywords = {"W": to_framework(target, np.array(W_AT[length]))} if "W" in function.__code__.co_varnames else {}
    positional = [to_framework(target, np.array(a)) for a in args]
    value, gradient = _gradlang(name, args, length)
    np.testing.assert_allclose(to_numpy(function(*positional, **keywords)), value, rtol=1e-9, atol=1e-12)
    grad = getattr(module, f"grad_{name}", None)
    if target == "numpy":
        return
    got = grad(*positional, **keywords)
    got = list(got) if isinstance(got, tuple) else [got]
    for g, w in zip(got, gradient):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-9, atol=1e-12, err_msg=f"grad_{name} at length {length}")


def test_every_function_here_is_vectorised(folder):
    """The docstring says which arguments take any length: all of them here, a length the program
    does not fix (W's second dimension follows v's)."""
    module = _module("numpy", folder)
    for name, _, _ in POINTS:
        assert "any length n0" in getattr(module, name).__doc__, name


def test_a_binding_reads_names_as_they_were_when_it_ran(tmp_path):
    """L was computed with a = 2; a = 5 later must not leak into L's export (it stays unrolled), while a
    function reads the session's last a, as gradlang's late binding does."""
    source = "x: R^3\na = 2\nL = sum(a * x)\nf(v) = a * sum(v)\na = 5\n"
    session, module = _exported(source, "numpy", tmp_path, "late")
    assert module.L(np.array([1.0, 2.0, 3.0])) == float(session.eval("L at x = [1, 2, 3]")) == 12.0
    assert module.f(np.array([1.0, 2.0, 3.0, 4.0])) == float(session.eval("f([1, 2, 3, 4])")) == 50.0


@pytest.mark.parametrize("target", TARGETS)
def test_a_symbol_simplify_cancelled_is_still_a_keyword(target, tmp_path):
    """SymPy reads `where(u > u - pi, u, x - u)` as u, but a call at u = inf takes the other branch
    (inf > nan is false, as in JAX), so the function must still take x (export fuzzer, 3,000 programs)."""
    framework(target)
    source = "x: R\nf(u) = where(u > u - pi, u, x - u)\n"
    session, module = _exported(source, target, tmp_path, f"cancelled_{target}")
    for u in (2.0, float("inf")):
        wanted = as_floats(session.eval(f"f({literal(np.array(u))}) at x = 5"))
        got = to_numpy(module.f(to_framework(target, np.array(u)), x=to_framework(target, np.array(5.0))))
        np.testing.assert_array_equal(got, wanted)
    assert float(wanted) == -np.inf


def test_grad_in_a_binding_takes_any_length_unless_a_node_has_no_vector_rule(tmp_path):
    """k = x + grad(…, x), indices included, is differentiated over the graph (adjoint.py) and takes any length, in NumPy too;
    prod has no vector rule (its gradient divides by zeros), so h stays unrolled for length 3 and refuses 4."""
    source = "x: R^3\nh = grad(prod(x), x)\nk = x + grad(sum(tanh(x)) + max(x) + x[0] * x[-1], x)\n"
    session, module = _exported(source, "numpy", tmp_path, "grads")
    point = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(module.h(point), as_floats(session.eval("h at x = [1.0, 2.0, 3.0]")))
    with pytest.raises(ValueError, match="shape|length"):
        module.h(np.array([1.0, 2.0, 3.0, 4.0]))
    assert "any length n0" in module.k.__doc__
    longer = Session()
    longer.run(source.replace("R^3", "R^5"))
    expected = as_floats(longer.eval("k at x = [0.5, -1.0, 2.0, 2.0, 0.0]"))  # a tie of the max: 1/2 each
    np.testing.assert_allclose(module.k(np.array([0.5, -1.0, 2.0, 2.0, 0.0])), expected, rtol=1e-12)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "numpy"])
def test_an_unrolled_where_masks_its_branches_too(target, tmp_path):
    """L reads c, bound again after it, so L is unrolled (component by component); its wheres are masked
    like the vectorised ones (masks.py), so the untaken sqrt and log give 0, not nan, as in gradlang."""
    framework(target)
    source = "x: R^3\nc = 1\nL = c * sum(where(x > 0, sqrt(x), 0) + where(x < -1, log(-x), x))\nc = 2\n"
    session, module = _exported(source, target, tmp_path, f"unrolled_{target}")
    assert "any length" not in module.L.__doc__
    point = [0.5, -2.0, -0.5]
    wanted = as_floats(session.eval(f"grad(L, x) at x = {literal(np.array(point))}"))
    got = to_numpy(module.grad_L(to_framework(target, np.array(point))))
    np.testing.assert_allclose(got, wanted, rtol=1e-12)


# Pieces of random grads (seeded): vectors over x and W, and scalars made from them.
VECTORS = ["x", "sg(x)", "tanh(x)", "exp(x / 3)", "relu(x)", "abs(x)", "x^2", "max(x, 0.5)", "min(x, 2 * sg(x))",
           "softmax(x)", "where(x > 0, sqrt(x), x)", "tanh(W @ x)", "transpose(W) @ sin(x)", "W[1] * x", "x[0] * x"]
SCALARS = ["sum({})", "norm({})", "logsumexp({})", "max({})", "mean({})", "({})[1]", "dot({}, x)"]


def _random_vector(rng, depth: int) -> str:
    if depth == 0:
        return str(rng.choice(VECTORS))
    a, b = _random_vector(rng, depth - 1), _random_vector(rng, depth - 1)
    return str(rng.choice([f"({a}) + ({b})", f"({a}) * ({b})", f"({a}) / (1 + ({b})^2)", f"softplus({a} / 4)",
                           f"({a}) * {str(rng.choice(SCALARS)).format(b)}"]))


@pytest.mark.parametrize("seed", range(12))
def test_random_grads_agree_with_gradlang_at_two_lengths(seed, tmp_path):
    """k = grad(e, x) for random e (seeded) is vectorised, and its NumPy value is gradlang's at x: R^3 and R^5."""
    import inspect

    rng = np.random.default_rng(seed)
    expression = str(rng.choice(SCALARS)).format(_random_vector(rng, 2))
    source = f"x: R^3\nW: R^(3,3)\nk = grad({expression}, x)\n"
    session, module = _exported(source, "numpy", tmp_path, "random_grad")
    assert "any length" in module.k.__doc__, expression
    for n in (3, 5):
        longer = Session()
        longer.run(source.replace("R^3", f"R^{n}").replace("R^(3,3)", f"R^({n},{n})"))
        point = {"x": np.array(SAMPLE[:n]), "W": np.array([[((i * n + j) % 7) / 3 - 1 for j in range(n)] for i in range(n)])}
        wanted = as_floats(longer.eval(f"k at x = {literal(point['x'])}, W = {literal(point['W'])}"))
        got = module.k(*[point[p] for p in inspect.signature(module.k).parameters])
        np.testing.assert_allclose(got, wanted, rtol=1e-9, atol=1e-12, err_msg=f"{expression} at length {n}")
