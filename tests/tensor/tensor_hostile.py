"""Hostile programs for the tensor engine: wrong shapes, huge or bad sizes, deep nesting, names used twice.

Each is judged only by the rules every input obeys (LANGUAGE.md section 9): a
GradlangError with a kind, a line and a column, or a result that prints in
plain text and LaTeX; never an InternalError, a Python exception, or a stop by
the time limit. `draw(rng)` picks one template and fills its holes.
"""

from __future__ import annotations

import random

from tests.tensor.tensor_programs import DECLARATIONS

WRONG_SHAPES = [
    "W @ u", "x + u", "dot(x, u)", "A @ W", "outer(x, A)", "trace(W)", "det(W)", "inv(W)", "softmax(W)",
    "W[0, 0, 0]", "x[0, 1]", "a[0]", "jacobian(W @ x, W)", "hessian(x, x)", "grad(x, x)", "diff(x, x)",
    "diff(sum(x), x[0])", "grad(sum(x), n)", "jacobian(x, a)", "grad(sum(x), x[0])", "hessian(sum(W), W)",
    "where(x > u, x, x)", "max(x, u)", "sum(W, 2)", "softmax(x, 1)", "sum(W, k)", "x @ W", "diag(W)",
    "blocked(W, x)", "blocked(sum(x), W @ x)", "components(x)", "jacobian(sum(x), x)", "len(a)",
    "concat([x, W])", "concat([W, A], 1)", "concat([x, u], 1)", "stack([W, W])", "stack([x, u])", "concat(x)",
    "concat([x, y], k)", "stack([x, y], 2)", "x[k:n]", "x[2:1]", "W[:, 0:x]", "concat([x, [x, y]])",
    "jacobian(stack([x, y]), x)", "concat([grad(sum(x), [x, y]), x])",
]
BAD_POINTS = [
    "sum(x) at n = {big}", "sum(W) at m = {big}, n = {big}", "components(sum(x) at n = {big})",
    "eye(n) at n = {big}", "sum(x) at n = {bad}", "sum(x) at m = {bad}", "softmax(x) at x = {array}",
    "sum(x) at n = 3, x = [1.0, 2.0]", "sum(x) at x = [[1.0]]", "sum(x) at x = 3", "W @ x at W = [[1.0, 2.0]], x = [1.0]",
    "x[{index}] at x = [1.0, 2.0]", "x[k] at k = {index}, x = [1.0, 2.0]", "onehot(k, n) at k = {index}, n = 2",
    "x[argmax(u)] at x = [1.0, 2.0], u = [0.0, 1.0, 5.0]", "x[n] at n = 2, x = [1.0, 2.0]",
    "grad(logsumexp(x), x) at x = {array}", "norm(x) at x = {array}", "inv(A) at A = [[{number}, 1.0], [1.0, 1.0]]",
    "grad(det(A), A) at A = [[{number}, 1.0], [1.0, 1.0]]", "sum(x) at x = load(\"missing.npy\")",
    "softmax(x) at x = [{number}, {number}]", "hessian(logsumexp(x), x) at x = [{number}, 1.0, {number}]",
    "x at x = [1.0, 2.0], n = 3", "grad(sum(x^2), x) at x = [1, 2], y = [1.0, 2.0, 3.0]",
    "x[0:{index}] at x = [1.0, 2.0]", "grad(sum(x[1:3]), x) at x = [1.0, 2.0]", "concat([x, u])[n:m + n] at n = {big}",
    "sum(concat([x, u], 0)) at x = [1.0, 2.0], u = [{number}]",
]
NAMES = [
    "n = {bad}\nz: R^n", "diff(n * a, n)", "grad(n * sum(x), n)", "n + 1", "n = 4", "k: size\nv: R^k\nv[k]",
    "q: R^q", "n(t) = t\nsum(x)", "x: R^m\nsum(x) at x = [1.0, 2.0]", "f = sum(x)\nx: R^(n,n)\nf at x = [1.0, 2.0]",
    "g = grad(sum(x^2), x)\nx: R^m\ng at x = [1.0, 2.0], n = 2", "m: size\nsum(u) at u = [1.0]", "a: R^n\ngrad(sum(a), a)",
    "sg = 1", "size = 3\nz: R^size", "n, n: size", "eye({bad})", "ones({bad})", "onehot(3, 2)", "zeros(n, {bad})",
]
NUMBERS = ["nan", "inf", "-inf", "1e308", "-1e308", "0.0", "1e-320"]


def draw(rng: random.Random) -> str:
    """A hostile program: the declarations, then one filled template or a deep nesting."""
    kind = rng.randrange(4)
    if kind == 0:
        body = rng.choice(WRONG_SHAPES)
    elif kind == 1:
        body = rng.choice(BAD_POINTS)
    elif kind == 2:
        body = rng.choice(NAMES)
    else:
        body = _deep(rng)
    return DECLARATIONS + "\n" + _filled(rng, body)


def _filled(rng: random.Random, template: str) -> str:
    return template.format(
        big=rng.choice(["10^9", "100001", "1000", "10^30"]), bad=rng.choice(["0", "-1", "2.5", "1e3", "x", "[1, 2]"]),
        index=rng.choice(["2", "-1", "2.5", "10^30", "a", "n"]), number=rng.choice(NUMBERS),
        array=rng.choice(["[nan, 1.0]", "[inf, 1.0]", "[-inf, -inf]", "[1e308, 1e308]", "[inf, -inf, nan]"]))


def _deep(rng: random.Random) -> str:
    """A long chain of one operation: deep enough to test the recursion and size limits."""
    depth = rng.choice([30, 100, 250, 500])
    wrap = rng.choice(["tanh({})", "softmax({})", "sg({})", "({} + x)", "(W @ {} - u) @ W", "exp({})"])
    body = "x"
    for _ in range(depth):
        body = wrap.format(body)
    statement = rng.choice(["sum({})", "grad(sum({}), x)", "jacobian({}, x)", "sum({}) at x = [1.0, 2.0]"])
    return statement.format(body)
