"""--export of a binding whose value is a tensor formula reads that value, at literal and symbolic sizes.

The session evaluated `g = grad(loss, W1)` once, into a tensor formula; the
export takes its parameters from that formula (its declared tensors) and
prints it as array operations, so an MLP's gradient exports at x: R^48 and
at x: R^n alike, without taking 48 x 48 components. Each module is run and
compared with JAX in float64 (and with gradlang's own numbers at the point).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.errors import GradlangError
from gradlang.export import TARGETS, export_program
from tests.tools.test_export import load
from tests.tools.test_export_examples import framework, to_framework, to_numpy

MLP = """x: R^{n}
W1: R^({n},{n})
b1: R^{n}
W2: R^(1,{n})
loss = sum((W2 @ tanh(W1 @ x + b1))^2)
g = grad(loss, W1)
"""


def _point(size: int) -> dict:
    rng = np.random.default_rng(7)
    return {"x": rng.normal(size=size), "W1": rng.normal(size=(size, size)) / size, "b1": rng.normal(size=size),
            "W2": rng.normal(size=(1, size))}


def _jax(point: dict) -> tuple:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss(x, W1, b1, W2):
        return jnp.sum((W2 @ jnp.tanh(W1 @ x + b1)) ** 2)

    args = [jnp.asarray(point[k], dtype=jnp.float64) for k in ("x", "W1", "b1", "W2")]
    return float(loss(*args)), np.asarray(jax.grad(loss, argnums=1)(*args))


def _module(program: str, target: str, tmp_path, name: str):
    session = Session()
    session.run(program)
    return load(export_program(session, target, program), tmp_path, name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("declared", ["48", "n"])
def test_mlp_gradient_round_trips(declared, target, tmp_path):
    framework(target)
    module = _module(MLP.format(n=declared), target, tmp_path, f"mlp_{target}_{declared}")
    for size in (48, 5):  # a function of the formula takes any length where the program leaves it open
        point = _point(size)
        args = [to_framework(target, point[k]) for k in ("x", "W1", "b1", "W2")]
        want_loss, want_grad = _jax(point)
        assert np.allclose(to_numpy(module.loss(*args)), want_loss, rtol=1e-12, atol=1e-12)
        assert np.allclose(to_numpy(module.g(*args)), want_grad, rtol=1e-12, atol=1e-12)


def test_exported_gradient_has_gradlangs_numbers(tmp_path):
    point = _point(4)
    program = MLP.format(n=4)
    module = _module(program, "numpy", tmp_path, "mlp_numbers")
    session = Session()
    session.run(program)
    given = ", ".join(f"{k} = {np.asarray(v).tolist()}" for k, v in point.items())
    want = np.asarray(session.eval(f"g at {given}"), dtype=float)
    assert np.allclose(module.g(*(point[k] for k in ("x", "W1", "b1", "W2"))), want, rtol=1e-12, atol=1e-12)


FORMULAS = """x: R^n
W: R^(m,n)
J = jacobian(softmax(W @ x), x)
H = hessian(sum(x^3) * a, x)
D = diff(sum(x) * a^2, a)
L = jacobian(logsumexp(W, 1), x) + outer(max_shares(W @ x), x)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_formula_the_array_reader_cannot_read_exports_at_a_symbolic_size(target, tmp_path):
    """jacobian, hessian and diff at x: R^n are printed from the session's formula (formula.py), in the target's
    own operations, and their numbers at two lengths are gradlang's at the same point with the sizes given."""
    framework(target)
    module = _module(FORMULAS, target, tmp_path, f"formulas_{target}")
    session = Session()
    session.run(FORMULAS)
    rng = np.random.default_rng(3)
    for m, n in ((2, 3), (4, 5)):
        x, W, a = rng.normal(size=n), rng.normal(size=(m, n)), 0.7
        at = f"x = {x.tolist()}, W = {W.tolist()}, a = {a}"
        for name, args in (("J", (x, W)), ("H", (x, a)), ("D", (x, a)), ("L", (x, W))):
            want = np.asarray(session.eval(f"{name} at {at}"), dtype=float)
            got = to_numpy(getattr(module, name)(*[to_framework(target, v) for v in args]))
            assert np.allclose(got, want, rtol=1e-12, atol=1e-12), name


def test_the_written_helpers_are_numbers_helpers():
    """formula.py writes NumPy's missing operations into the module: each computes what numbers.py's does."""
    from gradlang.expr import numeric
    from gradlang.export.formula import helpers

    namespace = {"np": np}
    exec(helpers(), namespace)  # the module's own text, as an exported module runs it
    v, M = np.array([1.0, 3.0, 3.0, -2.0]), np.array([[1.0, 2.0, 2.0], [0.5, -1.0, 4.0]])
    calls = {"_gl_softmax_vector": (v,), "_gl_logsumexp_vector": (v,), "_gl_softmax_axis": (M, 1),
             "_gl_logsumexp_axis": (M, 0), "_gl_onehot_vector": (2, 4), "_gl_max_shares_vector": (v,),
             "_gl_max_shares_axis": (M, 1), "_gl_cofactor": (np.array([[1.0, 2.0], [2.0, 4.0]]),),
             "_gl_max_shares_along": (np.array([[[1.0, 3.0], [3.0, 0.0]], [[2.0, 2.0], [-1.0, 5.0]]]), (0, 2)),
             "_gl_softmax_along": (np.array([[[1.0, 3.0], [3.0, 0.0]], [[2.0, 2.0], [-1.0, 5.0]]]), (2,)),
             "_gl_logsumexp_along": (np.array([[[1.0, 3.0], [3.0, 0.0]], [[2.0, 2.0], [-1.0, 5.0]]]), (1, 2))}
    assert set(calls) == {k for k in namespace if k.startswith("_gl_")}
    for name, args in calls.items():
        assert np.array_equal(namespace[name](*args), numeric.HELPERS[name](*args)), name


@pytest.mark.parametrize("target", TARGETS)
def test_a_hessian_at_a_symbolic_size_is_written_in_the_frameworks_operations(target, tmp_path):
    """hessian(sum(x^3), x) at x: R^n, refused for jax, torch and tf before, is `3 diag(2 x)` in the framework's
    own diag (jnp.diag, torch.diag, tf.linalg.diag), and takes any length; no SymPy class name is written."""
    framework(target)
    program = "x: R^n\nh = hessian(sum(x^3), x)\n"
    session = Session()
    session.run(program)
    text = export_program(session, target, program)
    assert {"numpy": "np.diag(", "jax": "jnp.diag(", "torch": "torch.diag(", "tf": "_gl_diag("}[target] in text
    module = load(text, tmp_path, f"hessian_{target}")
    for x in (np.array([0.5, -1.0, 2.0]), np.arange(1.0, 6.0)):
        assert np.allclose(to_numpy(module.h(to_framework(target, x))), 6 * np.diag(x), rtol=1e-15, atol=0)
    for name in ("Total", "Var", "TensorOp", "Diag("):
        assert name not in text


def test_a_formula_holding_a_component_beside_its_tensor_is_read_as_components(tmp_path):
    """`sum(x) + components(x)[0] * sum(x)` holds the symbol x[0] beside x: its unit is its components (read
    as a formula, x[0] would have been a parameter named 'x[0]', and the module would not parse)."""
    program = "x: R^3\nc = components(x)\nh = sum(x) + c[0]*sum(x)\n"
    module = _module(program, "numpy", tmp_path, "mixed")
    x = np.array([0.5, -1.0, 2.0])
    assert module.h(x) == pytest.approx(x[0] * x.sum() + x.sum(), rel=1e-15)


LIST_OF_MATRICES = """x: R^2
f(c) = sum(c[0] @ x) + sum(c[1][:, 1] * x)
L = f([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_parameter_given_a_list_of_matrices_exports_and_round_trips(target, tmp_path):
    """f(c) called with a list of matrices (rank 3): c's components were built as a matrix, an InternalError."""
    framework(target)
    module = _module(LIST_OF_MATRICES, target, tmp_path, f"list_of_matrices_{target}")
    c = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    x = np.array([0.5, -1.5])
    assert "2x2x2 array" in module.f.__doc__
    want = float(np.sum(c[0] @ x) + np.sum(c[1][:, 1] * x))
    assert np.allclose(to_numpy(module.f(to_framework(target, c), x=to_framework(target, x))), want, rtol=1e-12)
    if target == "numpy":  # NumPy has no gradients of its own
        return
    session = Session()
    session.run(LIST_OF_MATRICES)
    given = np.asarray(session.eval(f"grad(L, x) at x = {x.tolist()}"), dtype=float)
    assert np.allclose(to_numpy(module.grad_L(to_framework(target, x))), given, rtol=1e-12)


RANK3_RANGES = """X: R^(2,3,4)
A: R^(3,4)
L = sum(tanh(X[:, 0:2]) * X[:, 1:3]) + sum(X[..., 1:3]^3) + sum(X[:, :, 0:1] * X[0:1]) + sum(stack([A, 2*A], 0) * X) + sum(concat([X, X], -1)^2)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_ranges_stacks_and_concats_at_rank_3_export_and_round_trip(target, tmp_path):
    framework(target)
    module = _module(RANK3_RANGES, target, tmp_path, f"rank3_ranges_{target}")
    rng = np.random.default_rng(7)
    X, A = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4))
    session = Session()
    session.run(RANK3_RANGES)
    at = f"at X = {X.tolist()}, A = {A.tolist()}"
    want = float(session.eval(f"L {at}"))
    assert np.allclose(to_numpy(module.L(to_framework(target, X), to_framework(target, A))), want, rtol=1e-12)
    if target == "numpy":
        return
    grads = module.grad_L(to_framework(target, X), to_framework(target, A))
    for got, name in zip(grads, ("X", "A")):
        given = np.asarray(session.eval(f"grad(L, {name}) {at}"), dtype=float)
        assert np.allclose(to_numpy(got), given, rtol=1e-12, atol=1e-12)


NANSUM = """W: R^(4,3)
x: R^(5,4)
t = log(softmax(x @ W, axis=1))
c = t != t
L = sum(sum(where(c, 0.0 * outer(ones(5), ones(3)), t), 1) * [1.0, 2.0, 3.0, 4.0, 5.0])
"""


def test_a_literal_size_formula_is_printed_as_its_formula_and_a_condition_is_left_out(tmp_path):
    """jnp.nansum's where(t != t, 0, t) at literal sizes, which the array reader cannot read: printed as the
    session's formula (formula.py), as at R^n, not unrolled into components (A2C's took over a minute of CPU to
    mask and print, BYOL's four); `c`, a condition, is left out and named in the header (it refused the whole
    export before). The gradient is JAX's of the same loss; a shape the program fixes is checked."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    text = export_program(_session(NANSUM), "jax", NANSUM)
    assert "Left out: c (a condition" in text and "_gl_t" not in text
    module = load(text, tmp_path, "nansum_jax")
    rng = np.random.default_rng(5)
    W, x = rng.normal(size=(4, 3)), rng.normal(size=(5, 4))

    def loss(W, x):
        t = jnp.log(jax.nn.softmax(x @ W, axis=1))
        return jnp.sum(jnp.nansum(t, 1) * jnp.arange(1.0, 6.0))

    assert np.allclose(float(module.L(W, x)), float(loss(W, x)), rtol=1e-12, atol=1e-12)
    for got, want in zip(module.grad_L(W, x), jax.grad(loss, argnums=(0, 1))(W, x)):
        assert np.allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="W must have shape"):
        module.L(rng.normal(size=(3, 3)), x)


def _session(program: str) -> Session:
    session = Session()
    session.run(program)
    return session
