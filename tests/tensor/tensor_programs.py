"""Random programs at symbolic size for the tensor-engine fuzzer, written twice: gradlang text and JAX.

A program is a tree of tuples `(op, *children)` over fixed declarations:

    m, n: size;  x, y: R^n;  u: R^m;  W: R^(m,n);  A: R^(n,n);  a, b scalars;  k an index

Each node has one of five shapes: "S" (scalar), "n", "m" (vectors), "mn",
"nn" (matrices). `draw(rng, shape, depth)` draws a tree of that shape from a
seeded `random.Random`, so a program is reproducible from its seed alone.
`text(tree)` writes it as gradlang source; `jax_of(tree, env)` computes it
with jax.numpy, independently (never by translating gradlang's output), so a
program the component engine cannot run (argmax, onehot, rows, axis forms)
still has an oracle.
"""

from __future__ import annotations

import random

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient

DECLARATIONS = "m, n: size\nx, y: R^n\nu: R^m\nW: R^(m,n)\nA: R^(n,n)"
LITERAL = "x, y: R^{n}\nu: R^{m}\nW: R^({m},{n})\nA: R^({n},{n})"  # the same at literal sizes

UNARY = {
    "tanh": jnp.tanh, "sigmoid": jax.nn.sigmoid, "sin": jnp.sin, "cos": jnp.cos, "softplus": jax.nn.softplus,
    "relu": jax.nn.relu, "abs": jnp.abs, "sg": sg, "unstopped": lambda v: v,
    "exp": lambda v: jnp.exp(v / 4), "log": lambda v: jnp.log(1 + v ** 2), "sqrt": lambda v: jnp.sqrt(1 + v ** 2),
}
UNARY_TEXT = {"exp": "exp({}/4)", "log": "log(1 + ({})^2)", "sqrt": "sqrt(1 + ({})^2)"}
LEAVES = {"S": ["a", "b"], "n": ["x", "y"], "m": ["u"], "mn": ["W"], "nn": ["A"]}

# Operations by result shape: (op, argument shapes). Elementwise ones are added for every shape.
OPS = {
    "S": [("sum", "n"), ("sum", "mn"), ("mean", "n"), ("mean", "nn"), ("norm", "n"), ("norm", "mn"),
          ("logsumexp", "n"), ("max1", "n"), ("min1", "n"), ("dot", "n", "n"), ("matmul", "n", "n"),
          ("idx_k", "n"), ("idx0", "n"), ("idx00", "mn"), ("idx_argmax", "n", "n"), ("trace", "nn"),
          ("det", "nn"), ("cosine", "n", "n"), ("sum", "m"), ("concat_lse", "m", "n"), ("stack_lse", "n", "n", "n"),
          ("ein_bilinear", "m", "mn", "n"), ("ein_trace", "nn"), ("take_lse", "n"), ("reshape_dot", "mn", "mn")],
    "n": [("softmax", "n"), ("log_softmax", "n"), ("tmatvec", "mn", "m"), ("matmul", "nn", "n"),
          ("matmul", "n", "nn"), ("normalize", "n"), ("row_k", "nn"), ("row0", "mn"), ("sum_ax0", "mn"),
          ("mean_ax0", "mn"), ("lse_ax0", "mn"), ("min_ax0", "mn"), ("onehot", "S"), ("ones", "S"),
          ("concat_tail", "m", "n"), ("stack_sum", "n", "n"), ("stack_row", "n", "n"), ("ein_tmv", "mn", "m"),
          ("ein_diag", "nn")],
    "m": [("matmul", "mn", "n"), ("sum_ax1", "mn"), ("lse_ax1", "mn"), ("max_ax1", "mn"), ("softmax", "m"),
          ("concat_head", "m", "n"), ("take_cols", "mn"), ("ein_rowsum", "mn")],
    "mn": [("outer", "m", "n"), ("softmax_ax1", "mn"), ("softmax_ax0", "mn"), ("log_softmax_ax1", "mn"),
           ("matmul", "mn", "nn"), ("concat_cols", "mn", "mn"), ("concat_rows", "mn", "mn"), ("ein_outer", "m", "n"),
           ("reshape_t", "mn")],
    "nn": [("transpose", "nn"), ("matmul", "nn", "nn"), ("outer", "n", "n"), ("diag", "n"), ("eye", "S"),
           ("inv_shifted", "nn"), ("ein_mm", "nn", "nn")],
}

TEXT = {
    "sum": "sum({0})", "mean": "mean({0})", "norm": "norm({0})", "logsumexp": "logsumexp({0})", "max1": "max({0})",
    "min1": "min({0})", "dot": "dot({0}, {1})", "matmul": "({0} @ {1})", "idx_k": "({0})[k]", "idx0": "({0})[0]",
    "idx00": "({0})[0, 0]", "idx_argmax": "({0})[argmax({1})]", "trace": "trace({0})", "det": "det({0})",
    "cosine": "cosine({0}, {1})", "softmax": "softmax({0})", "log_softmax": "log_softmax({0})",
    "tmatvec": "(transpose({0}) @ {1})", "normalize": "normalize({0})", "row_k": "({0})[k]", "row0": "({0})[0]",
    "sum_ax0": "sum({0}, 0)", "mean_ax0": "mean({0}, 0)", "lse_ax0": "logsumexp({0}, 0)",
    "onehot": "(({0}) * onehot(k, n))", "ones": "(({0}) * ones(n))", "sum_ax1": "sum({0}, 1)",
    "lse_ax1": "logsumexp({0}, 1)", "max_ax1": "max({0}, axis=1)", "min_ax0": "min({0}, axis=0)", "outer": "outer({0}, {1})", "softmax_ax1": "softmax({0}, 1)",
    "softmax_ax0": "softmax({0}, 0)", "log_softmax_ax1": "log_softmax({0}, 1)", "transpose": "transpose({0})",
    "diag": "diag({0})", "eye": "(({0}) * eye(n))", "inv_shifted": "inv({0} + 4 * eye(n))",
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / (1 + exp({1})))",
    # min0: a number in the second place is an argument, never an axis (section 6); 0.0 reads as JAX's
    "scale": "({1} * {0})", "square": "({0})^2", "max2": "max({0}, {1})", "min0": "min({0}, 0.0)",
    "where": "where({0} > {1}, {2}, {3})", "where0": "where({0} > 0, {1}, {2})", "min2": "min({0}, {1})",
    # forms SymPy's algebra makes scalars: the tensor's shape must survive (sum(sg(x)/x) is n, not 1)
    "self_ratio": "(sg({0}) / {0})", "self_where": "where({0} > {0}, {1}, {2})",
    # joins and ranges (section 3b): [p, q] of vectors is stack([p, q]); a range may straddle two entries
    "concat_lse": "logsumexp(concat([{0}, {1}]))", "stack_lse": "logsumexp([{0}, {1}] @ {2})",
    "concat_tail": "concat([{0}, {1}])[m:m + n]", "concat_head": "concat([{0}, {1}], -1)[0:m]",
    "stack_sum": "sum(stack([{0}, {1}], 1), 1)", "stack_row": "stack([{0}, {1}])[1]",
    "concat_cols": "concat([{0}, {1}], axis=1)[:, n:2*n]", "concat_rows": "concat([{0}, {1}])[m - 1:2*m - 1]",
    # products and shapes (section 3b): einsum, reshape, take (index 0 twice: scatter-add adds)
    "ein_bilinear": 'einsum("i,ij,j->", {0}, {1}, {2})', "ein_trace": 'einsum("ii", {0})',
    "take_lse": "logsumexp(take({0}, [0, 0], 0))", "reshape_dot": "dot(reshape({0}, (m*n,)), reshape({1}, (m*n,)))",
    "ein_tmv": 'einsum("ij,i->j", {0}, {1})', "ein_diag": 'einsum("ii->i", {0})',
    "take_cols": "sum(take({0}, [0, 0], 1), 1)", "ein_rowsum": 'einsum("ij->i", {0})',
    "ein_outer": 'einsum("i,j", {0}, {1})', "reshape_t": "reshape(transpose({0}), (m, n))",
    "ein_mm": 'einsum("ij,kj->ik", {0}, {1})',
}

# A reduction of a tensor beside a broadcast scalar, `grad(reduce(T ⊕ s), s)`'s loss: (op, tensor shapes).
BROADCAST_REDUCTIONS = [("sum", ("n", "m", "mn", "nn")), ("mean", ("n", "mn", "nn")), ("norm", ("n", "mn")),
                        ("logsumexp", ("n", "m")), ("max1", ("n", "mn")), ("min1", ("n", "nn"))]
BROADCASTS = ("add", "sub", "mul", "div", "max2", "min2", "where", "where0", "self_where")


def draw(rng: random.Random, shape: str, depth: int):
    """A random tree of the given shape, at most `depth` operations deep."""
    if depth <= 0 or rng.random() < 0.2:
        return ("leaf", rng.choice(LEAVES[shape]))
    if shape == "S" and depth >= 2 and rng.random() < 0.2:
        return broadcast_reduction(rng, depth)
    if rng.random() < 0.45:
        return _elementwise(rng, shape, depth)
    op, *shapes = rng.choice(OPS[shape])
    return (op, *[draw(rng, s, depth - 1) for s in shapes])


def broadcast_reduction(rng: random.Random, depth: int):
    """reduce(T ⊕ s): a vector or matrix T and a scalar s broadcast over it, then reduced to a scalar."""
    reduce, tensor_shapes = rng.choice(BROADCAST_REDUCTIONS)
    shape = rng.choice(tensor_shapes)
    tensor, scalar = draw(rng, shape, depth - 2), draw(rng, "S", depth - 2)
    return (reduce, _broadcast(rng, rng.choice(BROADCASTS), tensor, scalar))


def _broadcast(rng: random.Random, op: str, tensor, scalar):
    """The tensor and the scalar combined by op, the scalar on either side (or in either branch of a where)."""
    if op == "where0":
        return (op, tensor, *rng.choice([(tensor, scalar), (scalar, tensor), (scalar, ("mul", scalar, scalar))]))
    if op in ("where", "self_where"):
        branches = rng.choice([(tensor, scalar), (scalar, tensor), (scalar, ("sub", scalar, scalar))])
        return (op, tensor, *branches) if op == "self_where" else (op, tensor, scalar, *branches)
    return (op, *((tensor, scalar) if rng.random() < 0.5 else (scalar, tensor)))


def _elementwise(rng: random.Random, shape: str, depth: int):
    choice = rng.randrange(12)
    same = lambda: draw(rng, shape, depth - 1)  # noqa: E731
    if choice == 10:  # a stop more often than any one function: the engine's reason to exist
        return ("un", "sg", same())
    if choice == 11:  # a form SymPy's algebra makes a scalar: sg(T)/T, T − T, where(T > T, …), unstopped of them
        tensor = same()
        form = rng.choice([("self_ratio", tensor), ("sub", tensor, tensor), ("self_where", tensor, same(), same())])
        return ("un", "unstopped", form) if rng.random() < 0.5 else form
    if choice < 4:
        return ("un", rng.choice(sorted(UNARY)), same())
    if choice < 6:
        if shape != "S" and rng.random() < 0.4:  # a scalar beside the tensor, broadcast
            return _broadcast(rng, rng.choice(["add", "sub", "mul", "div"]), same(), draw(rng, "S", depth - 1))
        return (rng.choice(["add", "sub", "mul", "div"]), same(), same())
    if choice == 6:
        return ("scale", same(), draw(rng, "S", depth - 1))
    if choice == 7:
        return (rng.choice(["square", "min0"]), same())
    if choice == 8:
        return ("max2", same(), rng.choice([same(), draw(rng, "S", depth - 1)]))
    return rng.choice([("where", same(), same(), same(), same()), ("where0", same(), same(), same())])


def text(tree) -> str:
    """The tree as gradlang source."""
    op, *children = tree
    if op == "leaf":
        return children[0]
    if op == "un":
        inner = text(children[1])
        return UNARY_TEXT.get(children[0], children[0] + "({})").format(inner)
    return TEXT[op].format(*[text(c) for c in children])


JAX = {
    "sum": jnp.sum, "mean": jnp.mean, "norm": lambda v: jnp.sqrt(jnp.sum(v * v)), "logsumexp": jax.nn.logsumexp,
    "max1": jnp.max, "min1": jnp.min, "dot": jnp.dot, "matmul": jnp.matmul, "trace": jnp.trace, "det": jnp.linalg.det,
    "cosine": lambda p, q: jnp.dot(p, q) / (jnp.linalg.norm(p) * jnp.linalg.norm(q)),
    "softmax": jax.nn.softmax, "log_softmax": jax.nn.log_softmax, "tmatvec": lambda M, v: M.T @ v,
    "normalize": lambda v: v / jnp.linalg.norm(v), "row0": lambda M: M[0], "idx0": lambda v: v[0],
    "idx00": lambda M: M[0, 0], "idx_argmax": lambda v, w: v[jnp.argmax(w)],
    "sum_ax0": lambda M: jnp.sum(M, 0), "mean_ax0": lambda M: jnp.mean(M, 0),
    "lse_ax0": lambda M: jax.nn.logsumexp(M, 0), "sum_ax1": lambda M: jnp.sum(M, 1),
    "lse_ax1": lambda M: jax.nn.logsumexp(M, 1), "outer": jnp.outer,
    "max_ax1": lambda M: jnp.max(M, 1), "min_ax0": lambda M: jnp.min(M, 0),
    "softmax_ax1": lambda M: jax.nn.softmax(M, 1), "softmax_ax0": lambda M: jax.nn.softmax(M, 0),
    "log_softmax_ax1": lambda M: jax.nn.log_softmax(M, 1), "transpose": lambda M: M.T, "diag": jnp.diag,
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": lambda p, q: p / (1 + jnp.exp(q)),
    "scale": lambda p, c: c * p, "square": lambda p: p ** 2, "max2": jnp.maximum,
    "min0": lambda p: jnp.minimum(p, 0.0), "where": lambda p, q, r, s: jnp.where(p > q, r, s),
    "where0": lambda p, r, s: jnp.where(p > 0, r, s), "min2": jnp.minimum,
    "self_where": lambda p, r, s: jnp.where(p > p, r, s),
    "ein_bilinear": lambda u, W, x: jnp.einsum("i,ij,j->", u, W, x), "ein_trace": lambda A: jnp.einsum("ii", A),
    "take_lse": lambda v: jax.nn.logsumexp(jnp.take(v, jnp.array([0, 0]), 0)),
    "reshape_dot": lambda P, Q: jnp.dot(P.reshape(-1), Q.reshape(-1)), "ein_tmv": lambda W, u: jnp.einsum("ij,i->j", W, u),
    "ein_diag": lambda A: jnp.einsum("ii->i", A), "take_cols": lambda W: jnp.sum(jnp.take(W, jnp.array([0, 0]), 1), 1),
    "ein_rowsum": lambda W: jnp.einsum("ij->i", W), "ein_outer": lambda u, x: jnp.einsum("i,j", u, x),
    "reshape_t": lambda W: W.T.reshape(W.shape), "ein_mm": lambda P, Q: jnp.einsum("ij,kj->ik", P, Q),
}


def jax_of(tree, env: dict):
    """The tree computed by JAX over `env` (x, y, u, W, A, a, b as arrays; k, m, n as Python ints)."""
    op, *children = tree
    if op == "leaf":
        return env[children[0]]
    if op == "un" and children[0] == "unstopped":
        return jax_of(children[1], {**env, "sg": lambda v: v})
    if op == "un":
        function = env.get("sg", sg) if children[0] == "sg" else UNARY[children[0]]
        return function(jax_of(children[1], env))
    if op == "self_ratio":
        tensor = jax_of(children[0], env)
        return env.get("sg", sg)(tensor) / tensor
    args = [jax_of(c, env) for c in children]
    if op in JAX:
        return JAX[op](*args)
    n, k = env["n"], env["k"]
    return {
        "idx_k": lambda: args[0][k], "row_k": lambda: args[0][k],
        "onehot": lambda: args[0] * jax.nn.one_hot(k, n, dtype=jnp.float64),
        "ones": lambda: args[0] * jnp.ones(n), "eye": lambda: args[0] * jnp.eye(n),
        "inv_shifted": lambda: jnp.linalg.inv(args[0] + 4 * jnp.eye(n)),
        **_joins(args, env["m"], n),
    }[op]()


def _joins(args, m: int, n: int) -> dict:
    """concat, stack and ranges by jnp.concatenate and jnp.stack, as the TEXT spells them."""
    cat, stk = jnp.concatenate, jnp.stack
    return {
        "concat_lse": lambda: jax.nn.logsumexp(cat(args[:2])),
        "stack_lse": lambda: jax.nn.logsumexp(stk(args[:2]) @ args[2]),
        "concat_tail": lambda: cat(args)[m:m + n], "concat_head": lambda: cat(args, -1)[0:m],
        "stack_sum": lambda: jnp.sum(stk(args, 1), 1), "stack_row": lambda: stk(args)[1],
        "concat_cols": lambda: cat(args, 1)[:, n:2 * n], "concat_rows": lambda: cat(args)[m - 1:2 * m - 1],
    }


def uses(tree, names: set) -> bool:
    """Does the tree use one of these operations (or leaves)?"""
    op, *children = tree
    if op == "leaf":
        return children[0] in names
    return op in names or (op == "un" and children[0] in names) or any(
        uses(c, names) for c in children if isinstance(c, tuple))
