"""The benchmark families of issue 6, as SymPy expressions built the way gradlang's evaluator builds them.

Each family returns a `Family`: the scalar function, the variables of the
gradient, and the data symbols that vary from point to point in the compiled
evaluation (empty when the variables themselves are the points).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.expr.functions import Maximum
from gradlang.expr.stopgrad import StopGradient


@dataclass(frozen=True)
class Family:
    name: str
    size: int
    expr: sp.Expr
    variables: tuple
    data: tuple = ()


def symbols(name: str, n: int) -> list:
    return [sp.Symbol(f"{name}[{i}]", real=True) for i in range(n)]


def nested_sin(depth: int) -> Family:
    x = sp.Symbol("x", real=True)
    expr = x
    for _ in range(depth):
        expr = sp.sin(expr)
    return Family("nested sin", depth, expr, (x,))


def product_of_sines(n: int) -> Family:
    xs = symbols("x", n)
    return Family("prod sin(x_i)", n, sp.Mul(*[sp.sin(x) for x in xs]), tuple(xs))


def _layer(weights, bias, inputs):
    return [sp.tanh(sp.Add(*[w * v for w, v in zip(row, inputs)], b)) for row, b in zip(weights, bias)]


def mlp(layers: int, inputs: int, hidden: int) -> Family:
    """Squared error of a tanh MLP on one data point (x, t); gradient by all parameters."""
    x, t = symbols("x", inputs), sp.Symbol("t", real=True)
    params, activations, width = [], x, inputs
    for k in range(layers):
        weights = [symbols(f"W{k}_{j}", width) for j in range(hidden)]
        bias = symbols(f"b{k}", hidden)
        params += [w for row in weights for w in row] + bias
        activations, width = _layer(weights, bias, activations), hidden
    v, c = symbols("v", hidden), sp.Symbol("c", real=True)
    params += v + [c]
    out = sp.Add(*[a * b for a, b in zip(v, activations)], c)
    name = f"{layers}-layer tanh MLP"
    return Family(name, len(params), (out - t) ** 2, tuple(params), tuple(x) + (t,))


def softmax_cross_entropy(n: int) -> Family:
    """-log(stable_softmax(z)[0]) with the maximum stopped, as in the tf.stop_gradient docs."""
    z = symbols("z", n)
    m = StopGradient(Maximum(*z))
    shifted = [sp.exp(zi - m) for zi in z]
    return Family("softmax CE, sg(max)", n, -sp.log(shifted[0] / sp.Add(*shifted)), tuple(z))


def iterated_map(depth: int) -> Family:
    """a_0 = x, a_(k+1) = a_k^2 + a_k*y: tiny as a DAG, enormous as a tree."""
    x, y = sp.symbols("x y", real=True)
    a = x
    for _ in range(depth):
        # Evaluated, (a_k)**2 asks SymPy's assumptions about a_k, a walk of its
        # tree: building the depth-32 map would never finish.
        a = sp.Pow(a, 2, evaluate=False) + a * y
    return Family("iterated map", depth, a, (x, y))


def all_families(quick: bool = False) -> list[Family]:
    if quick:
        return [nested_sin(16), product_of_sines(16), mlp(1, 4, 8), mlp(2, 2, 4),
                softmax_cross_entropy(16), iterated_map(8)]
    return [nested_sin(64), product_of_sines(64), mlp(1, 4, 8), mlp(1, 16, 16), mlp(2, 2, 8),
            mlp(2, 2, 16), softmax_cross_entropy(16), softmax_cross_entropy(64),
            softmax_cross_entropy(256), iterated_map(16), iterated_map(32)]
