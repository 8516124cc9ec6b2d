"""The benchmark families of issue 13 as gradlang programs, the way a user writes them.

Each program is a list of statements: `build` statements that make the
function, one `grad` statement (the derivative), and one `at` statement that
evaluates it at a point. `jax_case` gives the same function for
jax.jit(jax.grad(...)) in float64, with its point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Program:
    family: str
    size: int
    declare: list
    build: list
    grad: str
    at: str

    def source(self) -> str:
        return "\n".join(self.declare + self.build + [self.grad, self.at]) + "\n"


def _vector(values) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in values) + "]"


def _matrix(rows) -> str:
    return "[" + ", ".join(_vector(r) for r in rows) + "]"


def mlp_point(width: int):
    rng = np.random.default_rng(width)
    arrays = (rng.uniform(-1, 1, width), rng.uniform(-0.5, 0.5, (width, width)), rng.uniform(-0.5, 0.5, width),
              rng.uniform(-0.5, 0.5, width))
    return tuple(np.round(a, 3) for a in arrays)


def mlp(width: int) -> Program:
    """The program of issue 13: a tanh layer and a tanh output, squared error, grad by W1."""
    x0, W1, b1, w2 = mlp_point(width)
    c = 0.1
    return Program(
        "2-layer tanh MLP", width,
        [f"W1: R^({width},{width})", f"b1: R^{width}", f"w2: R^{width}", "c: R"],
        [f"x0 = {_vector(x0)}", "h = tanh(W1 @ x0 + b1)", "loss = (tanh(dot(w2, h) + c) - 0.3)^2"],
        "g = grad(loss, W1)",
        f"g at W1 = {_matrix(W1)}, b1 = {_vector(b1)}, w2 = {_vector(w2)}, c = {c}",
    )


def wide_point(width: int):
    """Inputs of the wide MLP, scaled by 1/sqrt(width) as a network is initialised (unrounded floats).

    mlp_point's weights in (-0.5, 0.5) saturate tanh at large widths, and then
    1 - tanh² is a cancellation that no two float64 programs round alike."""
    rng = np.random.default_rng(width)
    scale = 1 / np.sqrt(width)
    return (rng.uniform(-1, 1, width), rng.uniform(-1, 1, (width, width)) * scale, rng.uniform(-0.5, 0.5, width),
            rng.uniform(-1, 1, width) * scale)


def mlp_files(width: int, folder) -> Program:
    """The same MLP with every input a declared tensor given from .npy files in `folder` (written here).

    Nobody types a million numbers: W1, b1, w2 and x0 are read by load(), so the
    numbers come by whole-array NumPy, as every float point does (core/at.py)."""
    x0, W1, b1, w2 = wide_point(width)
    names = {"x0": x0, "W1": W1, "b1": b1, "w2": w2}
    for name, array in names.items():
        np.save(f"{folder}/{name}_{width}.npy", array)
    given = ", ".join(f'{name} = load("{folder}/{name}_{width}.npy")' for name in ("W1", "b1", "w2", "x0"))
    return Program(
        "2-layer tanh MLP, .npy inputs", width,
        [f"W1: R^({width},{width})", f"b1: R^{width}", f"w2: R^{width}", f"x0: R^{width}", "c: R"],
        ["h = tanh(W1 @ x0 + b1)", "loss = (tanh(dot(w2, h) + c) - 0.3)^2"],
        "g = grad(loss, W1)",
        f"g at {given}, c = 0.1",
    )


def mlp_by_hand(x0, W1, b1, w2, c=0.1):
    """The gradient of the MLP's loss by W1, written by hand in NumPy (the backward pass)."""
    h = np.tanh(W1 @ x0 + b1)
    out = np.tanh(w2 @ h + c)
    return np.outer(2 * (out - 0.3) * (1 - out**2) * w2 * (1 - h**2), x0)


JAX_MLP = """
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
folder, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
x0, W1, b1, w2 = (jnp.asarray(np.load(f"{folder}/{k}_{n}.npy")) for k in ("x0", "W1", "b1", "w2"))
def loss(W):
    return (jnp.tanh(w2 @ jnp.tanh(W @ x0 + b1) + 0.1) - 0.3) ** 2
np.save(out, np.asarray(jax.jit(jax.grad(loss))(W1)))
"""


def softmax_point(n: int):
    return np.round(np.random.default_rng(n).uniform(-2, 2, n), 3)


def softmax(n: int) -> Program:
    """-log of the stable softmax's first entry, with the max stopped (the tf.stop_gradient docs)."""
    return Program(
        "softmax CE, sg(max)", n, [f"z: R^{n}"],
        ["m = stop_gradient(max(z))", "loss = -log(exp(z[0] - m) / sum(exp(z - m)))"],
        "g = grad(loss, z)", f"g at z = {_vector(softmax_point(n))}",
    )


def iterated_map(depth: int) -> Program:
    """a_0 = x, a_(k+1) = a_k^2 + a_k*y: tiny as a DAG, enormous as a tree."""
    return Program(
        "iterated map", depth, ["x: R", "y: R"], ["a = x"] + ["a = a^2 + a*y"] * depth,
        "g = grad(a, [x, y])", "g at x = 0.1, y = 0.2",
    )


def hessian_point(n: int):
    return np.round(np.random.default_rng(n).uniform(-1, 1, n), 3)


def hessian(n: int) -> Program:
    """hessian of log-sum-exp plus a coupling term, n variables."""
    return Program(
        "hessian, log(sum(exp(x))) + tanh(dot(x, x))", n, [f"x: R^{n}"],
        ["f = log(sum(exp(x))) + tanh(dot(x, x))"],
        "g = hessian(f, x)", f"g at x = {_vector(hessian_point(n))}",
    )


def all_programs(quick: bool = False) -> list[Program]:
    if quick:
        return [mlp(8), mlp(16), softmax(16), softmax(64), iterated_map(8), iterated_map(16), hessian(8), hessian(16)]
    return ([mlp(w) for w in (8, 16, 32, 64)] + [softmax(n) for n in (16, 64, 256, 1024)]
            + [iterated_map(d) for d in (8, 16, 32, 64)] + [hessian(n) for n in (8, 16, 32)])


def jax_case(program: Program):
    """(function of one parameter vector, point) for jax.jit(jax.grad) or jax.hessian, in float64."""
    import jax
    import jax.numpy as jnp

    n = program.size
    if program.family.startswith("2-layer"):
        x0, W1, b1, w2 = mlp_point(n)

        def f(w):
            h = jnp.tanh(w.reshape(n, n) @ x0 + b1)
            return (jnp.tanh(w2 @ h + 0.1) - 0.3) ** 2
        return f, jnp.asarray(W1.ravel())
    if program.family.startswith("softmax"):
        def f(z):
            s = z - jax.lax.stop_gradient(jnp.max(z))
            return -(s[0] - jnp.log(jnp.sum(jnp.exp(s))))
        return f, jnp.asarray(softmax_point(n))
    if program.family.startswith("iterated"):
        def f(p):
            a = p[0]
            for _ in range(n):
                a = a * a + a * p[1]
            return a
        return f, jnp.asarray([0.1, 0.2])

    def f(x):
        return jnp.log(jnp.sum(jnp.exp(x))) + jnp.tanh(x @ x)
    return f, jnp.asarray(hessian_point(n))
