"""--export jax|torch|tf|numpy of tensor formulas at symbolic sizes: the formula in the framework's own operations.

Each program is declared with size names (`x: R^n`), exported for every
target, and each exported binding is run at random sizes and points: its
numbers must be gradlang's own (`g at …`) and those of the same loss written
by hand in JAX, differentiated by jax.grad / jax.hessian in float64. The
framework's own gradient of an exported loss (`grad_loss`) must be gradlang's
gradient too, stops and ties included. The same program declared at literal
sizes exports code that gives the same numbers. A framework that is not
installed is skipped, unless GRADLANG_REQUIRE_FRAMEWORKS=1 (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.errors import GradlangError
from gradlang.export import TARGETS, export_program
from tests.tools.test_export import load
from tests.tools.test_export_examples import framework, to_framework, to_numpy

TOLERANCE = 1e-9

MLP = """x: R^{n}
y: R^{m}
W1: R^({h},{n})
b1: R^{h}
W2: R^({m},{h})
z = tanh(W1 @ x + b1)
loss = 0.5 * sum((W2 @ z - y)^2) + 0.1 * dot(stop_gradient(z), z)
g1 = grad(loss, W1)
g2 = grad(loss, W2)
"""
CROSS_ENTROPY = """x: R^{n}
W: R^({m},{n})
k: R
ce = logsumexp(W @ x) - dot(onehot(k, {m}), W @ x)
g = grad(ce, W)
H = hessian(ce, x)
"""
LOGDET = """A: R^({n},{n})
lam: R
ld = logdet(transpose(A) @ A + lam * eye({n}))
g = grad(ld, A)
"""
STABLE_SOFTMAX = """x: R^{n}
y: R^{n}
p = exp(x - stop_gradient(max(x))) / sum(exp(x - stop_gradient(max(x))))
f = dot(p, y)
g = grad(f, x)
J = jacobian(p, x)
"""
TIES = """x: R^{n}
W: R^({m},{n})
f = max(x) + sum(max(W, axis=1)) + sum(max(W @ x, 0))
g = grad(f, x)
gW = grad(f, W)
"""
DIFF = """x: R^{n}
a: R
e = sum(x) * a^2 + sum(exp(a * x))
D = diff(e, a)
"""


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _mlp_reference(p):
    jax, jnp = _jax()

    def loss(W1, W2):
        z = jnp.tanh(W1 @ p["x"] + p["b1"])
        return 0.5 * jnp.sum((W2 @ z - p["y"]) ** 2) + 0.1 * jnp.dot(jax.lax.stop_gradient(z), z)

    return {"loss": loss(p["W1"], p["W2"]), "g1": jax.grad(loss, 0)(p["W1"], p["W2"]),
            "g2": jax.grad(loss, 1)(p["W1"], p["W2"])}


def _ce_reference(p):
    jax, jnp = _jax()

    def ce(x, W):
        return jax.nn.logsumexp(W @ x) - (W @ x)[int(p["k"])]

    return {"ce": ce(p["x"], p["W"]), "g": jax.grad(ce, 1)(p["x"], p["W"]), "H": jax.hessian(ce, 0)(p["x"], p["W"])}


def _logdet_reference(p):
    jax, jnp = _jax()

    def ld(A):
        return jnp.linalg.slogdet(A.T @ A + p["lam"] * jnp.eye(A.shape[0]))[1]

    return {"ld": ld(p["A"]), "g": jax.grad(ld)(p["A"])}


def _stable_reference(p):
    jax, jnp = _jax()

    def probabilities(x):
        e = jnp.exp(x - jax.lax.stop_gradient(jnp.max(x)))
        return e / jnp.sum(e)

    def f(x):
        return jnp.dot(probabilities(x), p["y"])

    return {"p": probabilities(p["x"]), "f": f(p["x"]), "g": jax.grad(f)(p["x"]),
            "J": jax.jacobian(probabilities)(p["x"])}


def _ties_reference(p):
    jax, jnp = _jax()

    def f(x, W):  # JAX's max and maximum share a tie's gradient equally, as gradlang does (section 5)
        return jnp.max(x) + jnp.sum(jnp.max(W, axis=1)) + jnp.sum(jnp.maximum(W @ x, 0.0))

    return {"f": f(p["x"], p["W"]), "g": jax.grad(f, 0)(p["x"], p["W"]), "gW": jax.grad(f, 1)(p["x"], p["W"])}


def _diff_reference(p):
    jax, jnp = _jax()

    def e(a):
        return jnp.sum(p["x"]) * a ** 2 + jnp.sum(jnp.exp(a * p["x"]))

    return {"e": e(p["a"]), "D": jax.grad(e)(p["a"])}


def _normal(rng, sizes):
    return lambda *shape: rng.normal(size=tuple(sizes[s] for s in shape))


def _mlp_point(rng, sizes):
    draw = _normal(rng, sizes)
    return {"x": draw("n"), "y": draw("m"), "W1": draw("h", "n") / 2, "b1": draw("h"), "W2": draw("m", "h") / 2}


def _ce_point(rng, sizes):
    draw = _normal(rng, sizes)
    return {"x": draw("n"), "W": draw("m", "n"), "k": int(rng.integers(sizes["m"]))}  # an index: gradlang takes a whole number


def _logdet_point(rng, sizes):
    return {"A": _normal(rng, sizes)("n", "n"), "lam": 0.5}


def _stable_point(rng, sizes):
    draw = _normal(rng, sizes)
    return {"x": draw("n") * 3, "y": draw("n")}


def _ties_point(rng, sizes):
    """Small integers: the maximum of x, of each row of W and W @ x = 0 are often attained more than once."""
    x = rng.integers(-1, 2, size=sizes["n"]).astype(float)
    x[:2] = x.max() + 1  # a tie for max(x), always
    return {"x": x, "W": rng.integers(-1, 2, size=(sizes["m"], sizes["n"])).astype(float)}


def _diff_point(rng, sizes):
    return {"x": _normal(rng, sizes)("n"), "a": 0.7}


# name -> (program, the point's arguments in declaration order, a point, JAX's numbers, {exported loss: its gradients})
PROGRAMS = {
    "mlp_with_a_stop": (MLP, ("x", "y", "W1", "b1", "W2"), _mlp_point, _mlp_reference, {"loss": {"W1": "g1", "W2": "g2"}}),
    "softmax_cross_entropy": (CROSS_ENTROPY, ("x", "W", "k"), _ce_point, _ce_reference, {"ce": {"W": "g"}}),
    "logdet": (LOGDET, ("A", "lam"), _logdet_point, _logdet_reference, {"ld": {"A": "g"}}),
    "stable_softmax": (STABLE_SOFTMAX, ("x", "y"), _stable_point, _stable_reference, {"f": {"x": "g"}}),
    "max_with_ties": (TIES, ("x", "W"), _ties_point, _ties_reference, {"f": {"x": "g", "W": "gW"}}),
    "diff": (DIFF, ("x", "a"), _diff_point, _diff_reference, {"e": {"a": "D"}}),
}
SIZES = ({"n": 3, "m": 2, "h": 4}, {"n": 6, "m": 5, "h": 3})
SYMBOLIC = {"n": "n", "m": "m", "h": "h"}


def _module(program: str, target: str, tmp_path, name: str):
    session = Session()
    session.run(program)
    return load(export_program(session, target, program), tmp_path, name), session


def _at(session, name: str, point: dict) -> np.ndarray:
    given = ", ".join(f"{k} = {np.asarray(v).tolist()}" for k, v in point.items())
    return np.asarray(session.eval(f"{name} at {given}"), dtype=float)


def _close(got, want) -> bool:
    return np.allclose(to_numpy(got), np.asarray(want, dtype=float), rtol=TOLERANCE, atol=TOLERANCE)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_formula_at_symbolic_sizes_exports_in_the_frameworks_operations(name, target, tmp_path):
    framework(target)
    program, order, draw, reference, losses = PROGRAMS[name]
    module, session = _module(program.format(**SYMBOLIC), target, tmp_path, f"{name}_{target}")
    rng = np.random.default_rng(11)
    for sizes in SIZES:
        point = draw(rng, sizes)
        args = [to_framework(target, point[k]) for k in order]
        want = {k: np.asarray(v) for k, v in reference({k: np.asarray(v) for k, v in point.items()}).items()}
        for binding, value in want.items():
            got = getattr(module, binding)(*[a for k, a in zip(order, args) if k in _parameters(session, binding)])
            assert _close(got, value), (binding, sizes)
            assert _close(got, _at(session, binding, point)), (binding, sizes)
        if target != "numpy":  # the framework's own gradient of the exported loss is gradlang's gradient
            for loss, gradients in losses.items():
                _framework_gradients_agree(module, session, loss, gradients, order, args, want)


def _parameters(session, binding: str) -> set:
    """The declared names a binding's value uses: its exported function's parameters."""
    return {s.name for s in session.env[binding].free_symbols}


def _framework_gradients_agree(module, session, loss, gradients, order, args, want):
    used = [k for k in order if k in _parameters(session, loss)]
    computed = getattr(module, f"grad_{loss}")(*[a for k, a in zip(order, args) if k in used])
    computed = computed if isinstance(computed, tuple) else (computed,)
    for by, gradient in gradients.items():
        assert _close(computed[used.index(by)], want[gradient]), (loss, by)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_exports_at_literal_and_at_symbolic_sizes_give_the_same_numbers(name, target, tmp_path):
    framework(target)
    program, order, draw, _, _ = PROGRAMS[name]
    sizes = SIZES[0]
    symbolic, session = _module(program.format(**SYMBOLIC), target, tmp_path, f"{name}_{target}_n")
    literal, _ = _module(program.format(**{k: str(v) for k, v in sizes.items()}), target, tmp_path, f"{name}_{target}_3")
    point = draw(np.random.default_rng(5), sizes)
    args = [to_framework(target, point[k]) for k in order]
    for binding in PROGRAMS[name][3]({k: np.asarray(v) for k, v in point.items()}):
        used = [a for k, a in zip(order, args) if k in _parameters(session, binding)]
        want = to_numpy(getattr(literal, binding)(*used))
        assert np.allclose(to_numpy(getattr(symbolic, binding)(*used)), want, rtol=1e-12, atol=1e-12), binding


def test_a_size_no_argument_holds_is_refused_in_gradlangs_words():
    """ones(m) * sum(x) has the size m, which no parameter of the exported function (x) has: a placed ShapeError."""
    program = "x: R^n\ny: R^m\nz = ones(m) * sum(x)\n"
    session = Session()
    session.run(program)
    for target in TARGETS:
        with pytest.raises(GradlangError) as caught:
            export_program(session, target, program)
        assert "cannot export z: ones(m)*sum(x) has the size m, which no argument's shape holds" in str(caught.value)
        assert caught.value.span is not None and caught.value.span.line == 3


def test_tensorflows_entry_keeps_a_python_float_in_float64():
    """The TF module's `_t(0.1)` is 0.1 in float64, not the float32 0.1 (off by 1.5e-9) that tf.cast makes of a
    Python float first: the array reader's `0.1 * dot(sg(z), z)` gradient at R^3 was 7.5e-10 off the formula's."""
    framework("tf")
    from gradlang.export.prelude import HEADS

    namespace: dict = {}
    exec(HEADS["tf"], namespace)  # the module's own head, as an exported module runs it
    for value in (0.1, [0.1, 1 / 3], np.float32(0.5)):
        assert np.array_equal(namespace["_t"](value).numpy(), np.asarray(value, dtype=float))


WHERE = """x: R^n
f = sum(where(x > 0, sqrt(x), 0)) + sum(where(x > 0, 0, log(-x))) + where(sum(x) > 0, 0, sqrt(-sum(x)))
g = grad(f, x)
"""


@pytest.mark.parametrize("target", ["jax", "torch", "tf"])
def test_an_untaken_branch_passes_no_nan_to_the_frameworks_gradient(target, tmp_path):
    """where(x > 0, sqrt(x), 0) at x < 0: gradlang's gradient there is 0, and the framework's gradient of the exported
    formula too (its branches masked, masks.py), not 0 * sqrt'(x) = nan; under an array and a scalar condition."""
    framework(target)
    module, session = _module(WHERE, target, tmp_path, f"where_{target}")
    x = np.array([1.0, -1.0, 4.0, -0.25])
    want = _at(session, "g", {"x": x})
    assert np.all(np.isfinite(want))
    assert _close(module.grad_f(to_framework(target, x)), want)
    assert _close(module.g(to_framework(target, x)), want)


@pytest.mark.parametrize("target", TARGETS)
def test_every_tensor_node_exports_in_every_framework(target, tmp_path):
    """The program through every tensor node (tests/tensor/test_primitive_records.py), at x: R^n, exported: its
    value and its gradients by x and by A, run by the framework, are gradlang's numbers at the point."""
    from tests.tensor.test_primitive_records import EVERY_NODE

    framework(target)
    lines = [line for line in EVERY_NODE.splitlines() if line != "f" and not line.startswith("grad")]
    program = "\n".join(lines + ["gx = grad(f, x)", "gA = grad(f, A)"]) + "\n"
    module, session = _module(program, target, tmp_path, f"every_node_{target}")
    point = {"x": np.array([0.5, -1.0, 2.0]), "A": np.array([[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.1, 0.4, 3.0]])}
    args = [to_framework(target, point[k]) for k in ("x", "A")]
    for binding in ("f", "gx", "gA"):
        assert _close(getattr(module, binding)(*args), _at(session, binding, point)), binding
    if target != "numpy":
        gx, gA = module.grad_f(*args)
        assert _close(gx, _at(session, "gx", point)) and _close(gA, _at(session, "gA", point))
