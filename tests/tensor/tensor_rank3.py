"""Random rank-3 programs with NumPy broadcasting and axes (section 3b), written twice: gradlang text and JAX.

Declarations `X: R^(b,t,d)`, `M: R^(t,d)`, `v: R^d` and a scalar `a` (at literal sizes `b`, `t`, `d` are
bound to the numbers, so ranges `X[:, 1:t]` read at both spellings); a tree
of tuples `(op, *children)` of shape "X", "M", "v" or "S" (a scalar) is drawn
from a seeded `random.Random`. Each program is run at symbolic sizes and at
literal ones, at one float point: the loss and its gradient by X, M and v must
be JAX's (float64, to 1e-9 relative), and the same at both spellings of the
sizes. tests/tensor/test_rank3_fuzz.py runs a fixed slice; the long run is
`benchmarks/tensor_fuzz.py --rank3 N`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from gradlang import GradlangError, Session

jax.config.update("jax_enable_x64", True)
sg = jax.lax.stop_gradient
lse = jax.nn.logsumexp

UNARY = {"tanh": jnp.tanh, "sin": jnp.sin, "sigmoid": jax.nn.sigmoid, "sg": sg, "softplus": jax.nn.softplus,
         "exp": lambda u: jnp.exp(u / 4), "sqrt": lambda u: jnp.sqrt(1 + u**2)}
UNARY_TEXT = {"exp": "exp(({})/4)", "sqrt": "sqrt(1 + ({})^2)"}
LEAVES = {"X": "X", "M": "M", "v": "v", "S": "a"}
# op: (result shape, argument shapes, gradlang template, JAX function)
OPS = {
    "add": ("X", "XM", "({0} + {1})", jnp.add), "mulv": ("X", "Xv", "({0} * {1})", jnp.multiply),
    "subS": ("X", "XS", "({0} - {1})", jnp.subtract), "maxM": ("X", "XM", "max({0}, {1})", jnp.maximum),
    "whereM": ("X", "XM", "where({0} > 0, {0}, {1})", lambda p, q: jnp.where(p > 0, p, q)),
    "centre": ("X", "X", "({0} - mean({0}, -1, keepdims=true))", lambda p: p - jnp.mean(p, -1, keepdims=True)),
    "shift": ("X", "X", "({0} - sg(max({0}, axis=-1, keepdims=true)))", lambda p: p - sg(jnp.max(p, -1, keepdims=True))),
    "softmax": ("X", "X", "softmax({0}, -1)", lambda p: jax.nn.softmax(p, -1)),
    "logsm1": ("X", "X", "log_softmax({0}, axis=1)", lambda p: jax.nn.log_softmax(p, axis=1)),
    "keep2": ("X", "X", "({0} * sum({0}, axis=2, keepdims=true))", lambda p: p * jnp.sum(p, 2, keepdims=True)),
    "expand": ("X", "MX", "(expand_dims({0}, 0) * {1})", lambda q, p: jnp.expand_dims(q, 0) * p),
    "perm": ("X", "X", "transpose(transpose({0}, (1, 0, 2)), (1, 0, 2))", lambda p: p),
    "sum0": ("M", "X", "sum({0}, 0)", lambda p: jnp.sum(p, 0)), "mean0": ("M", "X", "mean({0}, axis=0)",
                                                                     lambda p: jnp.mean(p, 0)),
    "max0": ("M", "X", "max({0}, axis=0)", lambda p: jnp.max(p, 0)), "lse0": ("M", "X", "logsumexp({0}, 0)",
                                                                         lambda p: lse(p, 0)),
    "first": ("M", "X", "({0})[0]", lambda p: p[0]), "last": ("M", "X", "({0})[-1]", lambda p: p[-1]),
    "addMv": ("M", "Mv", "({0} + {1})", jnp.add), "centreM": ("M", "M", "({0} - mean({0}, 0))",
                                                                lambda p: p - jnp.mean(p, 0)),
    "sum01": ("v", "X", "sum({0}, axis=(0, 1))", lambda p: jnp.sum(p, (0, 1))),
    "max01": ("v", "X", "max({0}, axis=(0, 1))", lambda p: jnp.max(p, (0, 1))),
    "norm01": ("v", "X", "norm({0}, axis=(0, 1))", lambda p: jnp.sqrt(jnp.sum(p**2, (0, 1)))),
    "pick": ("v", "X", "({0})[-1, 0]", lambda p: p[-1, 0]), "sumM": ("v", "M", "sum({0}, 0)", lambda p: jnp.sum(p, 0)),
    "col": ("v", "X", "sum(({0})[..., 0]) * mean({0}, axis=(0, 1))",
            lambda p: jnp.sum(p[..., 0]) * jnp.mean(p, (0, 1))),
}
# ranges on every axis (bounds sizes or size expressions), stack and concat of any rank on any axis (section 3b)
OPS.update({
    "rollT": ("X", "X", "concat([({0})[:, 1:t], ({0})[:, 0:1]], 1)",
              lambda p: jnp.concatenate([p[:, 1:], p[:, 0:1]], 1)),
    "rollD": ("X", "X", "concat([({0})[..., 1:d], ({0})[..., 0:1]], -1)",
              lambda p: jnp.concatenate([p[..., 1:], p[..., 0:1]], -1)),
    "revB": ("X", "X", "concat([({0})[b - 1:b], ({0})[0:b - 1]], 0)",
             lambda p: jnp.concatenate([p[-1:], p[:-1]], 0)),
    "cut2": ("X", "XX", "(concat([{0}, {1}], 2)[..., 0:d] * concat([{1}, {0}], -1)[:, :, d:2*d])",
             lambda p, q: jnp.concatenate([p, q], 2)[..., :p.shape[2]] * jnp.concatenate([q, p], -1)[:, :, p.shape[2]:]),
    "stackW": ("X", "XX", "sum(stack([{0}, {1}], -1) * [0.5, -1.5], axis=-1)",
               lambda p, q: jnp.sum(jnp.stack([p, q], -1) * jnp.array([0.5, -1.5]), -1)),
    "stackP": ("X", "XM", "(stack([{0}, {0} * {1}], 1)[:, 1] + stack([{1}, {1}], 0)[-1])",
               lambda p, q: jnp.stack([p, p * q], 1)[:, 1] + jnp.stack([q, q], 0)[-1]),
    "rollM": ("M", "M", "concat([({0})[1:t], ({0})[0:1]], 0)", lambda p: jnp.concatenate([p[1:], p[0:1]], 0)),
    "stackM": ("M", "MM", "sum(stack([{0}, 2*{1}], 0), axis=0)", lambda p, q: jnp.sum(jnp.stack([p, 2 * q], 0), 0)),
    "headv": ("v", "v", "concat([({0})[0:d - 1] * 2, ({0})[d - 1:d]])", lambda p: jnp.concatenate([p[:-1] * 2, p[-1:]])),
})
# the rest of section 3b: einsum (contractions, several operands, `...`), batched `@`, reshape that moves entries,
# transpose with a permutation or none, broadcast_to, squeeze, take and scatter_add at data-dependent indices
# (argmax: repeated indices, so the adjoints add), a condition that broadcasts, keepdims reductions of every kind
OPS.update({
    "einTD": ("M", "XX", 'einsum("btd,btd->td", {0}, {1})', lambda p, q: jnp.einsum("btd,btd->td", p, q)),
    "einMix": ("X", "XM", 'einsum("btd,se,sd->bte", {0}, {1}, {1})',
               lambda p, q: jnp.einsum("btd,se,sd->bte", p, q, q)),
    "einEll": ("X", "Xv", 'einsum("...d,d->...d", {0}, {1})', lambda p, q: jnp.einsum("...d,d->...d", p, q)),
    "einV": ("v", "XM", 'einsum("btd,td->d", {0}, {1})', lambda p, q: jnp.einsum("btd,td->d", p, q)),
    "einTr": ("v", "M", 'einsum("td->d", {0})', lambda p: jnp.einsum("td->d", p)),
    "bmm": ("X", "XX", "(({0} @ transpose({1}, (0, 2, 1))) @ {1})", lambda p, q: (p @ jnp.transpose(q, (0, 2, 1))) @ q),
    "mmM": ("X", "XM", "({0} @ (transpose({1}) @ {1}))", lambda p, q: p @ (q.T @ q)),
    "reshBT": ("X", "X", "reshape(softmax(reshape({0}, (b*t, d)), -1), (b, t, d))",
               lambda p: jax.nn.softmax(p.reshape(-1, p.shape[2]), -1).reshape(p.shape)),
    "reshMove": ("X", "X", "transpose(reshape({0}, (b, d, t)), (0, 2, 1))",
                 lambda p: jnp.transpose(p.reshape(p.shape[0], p.shape[2], p.shape[1]), (0, 2, 1))),
    "reshV": ("v", "M", "sum(reshape({0}, (t, d, 1)), axis=(0, 2))", lambda p: jnp.sum(p.reshape(*p.shape, 1), (0, 2))),
    "permM": ("X", "XM", "transpose(transpose({0}, (1, 0, 2)) * expand_dims({1}, 1), (1, 0, 2))",
              lambda p, q: jnp.transpose(jnp.transpose(p, (1, 0, 2)) * q[:, None], (1, 0, 2))),
    "permRev": ("X", "XM", "transpose(transpose({0}) * expand_dims(transpose({1}), -1))",
                lambda p, q: jnp.transpose(jnp.transpose(p) * q.T[..., None])),
    "perm201": ("X", "X", "transpose(exp(transpose({0}, (2, 0, 1)) / 4), (1, 2, 0))",
                lambda p: jnp.transpose(jnp.exp(jnp.transpose(p, (2, 0, 1)) / 4), (1, 2, 0))),
    "bcastV": ("X", "Xv", "({0} * broadcast_to({1}, (b, t, d)))", lambda p, q: p * jnp.broadcast_to(q, p.shape)),
    "bcastM": ("X", "XM", "({0} + broadcast_to(expand_dims({1}, 0), (b, t, d)))",
               lambda p, q: p + jnp.broadcast_to(q[None], p.shape)),
    "bcastS": ("M", "MS", "({0} + broadcast_to({1}, (t, d)))", lambda p, q: p + jnp.broadcast_to(q, p.shape)),
    "squeeze": ("X", "X", "squeeze(expand_dims({0}, 1), 1)", lambda p: p),
    "takeV": ("X", "Xv", "({0} * expand_dims(take({1}, argmax({0}, axis=-1), 0), -1))",
              lambda p, q: p * jnp.take(q, jnp.argmax(p, -1), 0)[..., None]),
    "take0": ("X", "X", "({0} * sum(take({0}, [0, 0, 0], -1), -1, keepdims=true))",
              lambda p: p * jnp.sum(jnp.take(p, jnp.array([0, 0, 0]), -1), -1, keepdims=True)),
    "takeM": ("M", "M", "({0} @ take({0}, argmax({0}, axis=0), 0))", lambda p: p @ jnp.take(p, jnp.argmax(p, 0), 0)),
    "scatV": ("M", "Mv", "({0} * expand_dims(scatter_add({1}, argmax({0}, axis=0), 0, t), -1))",
              lambda p, q: p * jnp.zeros(p.shape[0]).at[jnp.argmax(p, 0)].add(q)[:, None]),
    "scatM": ("M", "M", "({0} @ scatter_add({0}, argmax({0}, axis=-1), 0, d))",
              lambda p: p @ jnp.zeros((p.shape[1], p.shape[1])).at[jnp.argmax(p, -1)].add(p)),
    "whereV": ("X", "Xv", "where({1} > 0, {0}, -{0})", lambda p, q: jnp.where(q > 0, p, -p)),
    "lseK": ("X", "X", "({0} - logsumexp({0}, axis=(0, 1), keepdims=true))",
             lambda p: p - lse(p, (0, 1), keepdims=True)),
    "normK": ("X", "X", "({0} / norm({0}, axis=-1, keepdims=true))",
              lambda p: p / jnp.sqrt(jnp.sum(p**2, -1, keepdims=True))),
    "minK": ("X", "X", "({0} * min({0}, axis=0, keepdims=true))", lambda p: p * jnp.min(p, 0, keepdims=True)),
    "meanK": ("X", "X", "({0} - mean({0}, axis=(0, 2), keepdims=true))", lambda p: p - jnp.mean(p, (0, 2), keepdims=True)),
})
REDUCE = {"sum": ("sum({0})", jnp.sum), "mean": ("mean({0})", jnp.mean), "lse": ("logsumexp({0})", lse),
          "max": ("max({0})", jnp.max), "norm": ("norm({0})", lambda p: jnp.sqrt(jnp.sum(p**2)))}
SIZES = [(2, 3, 4), (1, 2, 3), (3, 1, 2), (2, 2, 2), (2, 3, 1)]


def draw(rng: random.Random, shape: str, depth: int):
    """A random tree of this shape, at most `depth` operations deep."""
    if shape == "S":
        inner = rng.choice("XMv")
        return ("reduce", rng.choice(sorted(REDUCE)), draw(rng, inner, depth - 1))
    if depth <= 0 or rng.random() < 0.2:
        return ("leaf", LEAVES[shape])
    if rng.random() < 0.3:
        return ("un", rng.choice(sorted(UNARY)), draw(rng, shape, depth - 1))
    op = rng.choice([name for name, (out, *_) in OPS.items() if out == shape])
    return (op, *[draw(rng, s, depth - 1) if s != "S" else ("leaf", "a") for s in OPS[op][1]])


def text(tree) -> str:
    op, *children = tree
    if op == "leaf":
        return children[0]
    if op == "un":
        return UNARY_TEXT.get(children[0], children[0] + "({})").format(text(children[1]))
    if op == "reduce":
        return REDUCE[children[0]][0].format(text(children[1]))
    return OPS[op][2].format(*[text(c) for c in children])


def jax_of(tree, env: dict):
    op, *children = tree
    if op == "leaf":
        return env[children[0]]
    if op == "un":
        return UNARY[children[0]](jax_of(children[1], env))
    if op == "reduce":
        return REDUCE[children[0]][1](jax_of(children[1], env))
    return OPS[op][3](*[jax_of(c, env) for c in children])


@dataclass
class Finding:
    verdict: str  # ok, bug
    text: str

    def __str__(self) -> str:
        return f"[{self.verdict}] {self.text}"


def run(seed: int, depth: int = 3) -> Finding:
    """One program from its seed: the loss and its gradients at both spellings of the sizes, against JAX."""
    rng = random.Random(seed)
    tree = ("reduce", "sum", ("un", "tanh", draw(rng, "X", depth))) if rng.random() < 0.5 else draw(rng, "S", depth + 1)
    b, t, d = rng.choice(SIZES)
    np_rng = np.random.default_rng(seed)
    point = {"X": np_rng.normal(size=(b, t, d)), "M": np_rng.normal(size=(t, d)), "v": np_rng.normal(size=d),
             "a": float(np_rng.normal())}
    source = text(tree)
    loss = lambda X, M, v: jax_of(tree, {"X": X, "M": M, "v": v, "a": point["a"]})  # noqa: E731
    want = [loss(point["X"], point["M"], point["v"])] + list(jax.grad(loss, (0, 1, 2))(point["X"], point["M"], point["v"]))
    literal = f"b = {b}\nt = {t}\nd = {d}\nX: R^({b},{t},{d})\nM: R^({t},{d})\nv: R^{d}"
    for declared in ("X: R^(b,t,d)\nM: R^(t,d)\nv: R^d", literal):
        found = _judged(declared, source, point, want)
        if found is not None:
            return Finding("bug", f"seed {seed}: {source}\n  {declared.splitlines()[-3]} (b, t, d = {b}, {t}, {d}): {found}")
    return Finding("ok", source)


def _judged(declared: str, source: str, point: dict, want: list) -> str | None:
    session = Session()
    for name in ("X", "M", "v"):
        session.bind(f"{name}0", point[name])
    at = f" at X = X0, M = M0, v = v0, a = {point['a']!r}"
    try:
        session.run(f"{declared}\nL = {source}")
        got = [session.eval(f"L{at}")] + [session.eval(f"grad(L, {name}){at}") for name in ("X", "M", "v")]
    except GradlangError as error:
        return f"{error.kind}: {error.message}"
    for name, g, w in zip(("L", "X", "M", "v"), got, want):
        g, w = np.asarray(g, dtype=float), np.asarray(w, dtype=float)
        if g.shape != w.shape or not np.all((np.abs(g - w) <= 1e-9 * (1 + np.abs(w))) | (np.isnan(g) & np.isnan(w))):
            return f"{name}: got {g.tolist()}, JAX {w.tolist()}"
    return None


# --- fixed programs: whole models as section 3b writes them, judged as the random ones -----------------------

_VQ_SOURCE = """Z = transpose(X, (0, 2, 3, 1)) @ W
d = sum((expand_dims(Z, -2) - E)^2, axis=-1)
q = onehot(argmin(d, axis=-1), K) @ E
L = sum((Z - sg(q))^2) + 0.25*sum((sg(Z) - q)^2)"""


def _vq_loss(X, W, E):
    """The VQ-VAE quantiser over PyTorch's (b,c,h,w) with a 1×1 encoder W, in JAX."""
    Z = jnp.transpose(X, (0, 2, 3, 1)) @ W
    d = jnp.sum((Z[..., None, :] - E) ** 2, axis=-1)
    q = jax.nn.one_hot(jnp.argmin(d, axis=-1), E.shape[0], dtype=jnp.float64) @ E
    return jnp.sum((Z - sg(q)) ** 2) + 0.25 * jnp.sum((sg(Z) - q) ** 2)


_HEADS_SOURCE = """Q = X @ Wq
K = sg(X @ Wk)
V = X @ Wv
h1 = softmax(Q[..., 0:m] @ transpose(K[..., 0:m], (0, 2, 1)) / sqrt(m), -1) @ V[..., 0:m]
h2 = softmax(Q[..., m:e] @ transpose(K[..., m:e], (0, 2, 1)), -1) @ V[..., m:e]
H = concat([h1, h2], -1)
L = sum(tanh(H @ Wo)) + sum(stack([h1, 2*h1], 1)[:, 1] * X[:, :, 0:m]) + sum(H[:, 1:t]^2)"""


def _heads_loss(X, Wq, Wk, Wv, Wo):
    """Two attention heads cut from one projection by ranges, a stopped key, joined by concat, in JAX."""
    Q, K, V = X @ Wq, sg(X @ Wk), X @ Wv
    m = Wq.shape[1] // 2
    h1 = jax.nn.softmax(Q[..., :m] @ jnp.transpose(K[..., :m], (0, 2, 1)) / jnp.sqrt(m), -1) @ V[..., :m]
    h2 = jax.nn.softmax(Q[..., m:] @ jnp.transpose(K[..., m:], (0, 2, 1)), -1) @ V[..., m:]
    H = jnp.concatenate([h1, h2], -1)
    return jnp.sum(jnp.tanh(H @ Wo)) + jnp.sum(jnp.stack([h1, 2 * h1], 1)[:, 1] * X[:, :, :m]) + jnp.sum(H[:, 1:] ** 2)


_HEADS_DECLARED = "X: R^(b,t,d)\nWq: R^(d,e)\nWk: R^(d,e)\nWv: R^(d,e)\nWo: R^(e,d)"

FIXED = {  # name: (declarations at symbolic and at literal sizes, source defining L, JAX's L, the point's shapes,
    #        then any size no array gives)
    "vq-vae": (("X: R^(b,m,h,w)\nW: R^(m,c)\nE: R^(k,c)\nK = k", "X: R^(2,3,2,3)\nW: R^(3,4)\nE: R^(5,4)\nK = 5"),
               _VQ_SOURCE, _vq_loss, {"X": (2, 3, 2, 3), "W": (3, 4), "E": (5, 4)}),
    "two heads by ranges and concat": (
        ("m: size\n" + _HEADS_DECLARED, "m = 2\nt = 3\ne = 4\n" + _HEADS_DECLARED.replace("(b,t,d)", "(2,3,5)")
         .replace("(d,e)", "(5,4)").replace("(e,d)", "(4,5)")),
        _HEADS_SOURCE, _heads_loss, {"X": (2, 3, 5), "Wq": (5, 4), "Wk": (5, 4), "Wv": (5, 4), "Wo": (4, 5)}, "m = 2"),
}


def run_fixed(name: str) -> Finding:
    """A fixed program: its loss and its gradient by every input at both spellings of the sizes, against JAX."""
    declared, source, reference, shapes, *sizes = FIXED[name]  # sizes: those no array gives, as `m = 2`
    rng = np.random.default_rng(39)
    point = {var: rng.normal(size=shape) for var, shape in shapes.items()}
    args = list(point.values())
    want = [reference(*args)] + list(jax.grad(reference, tuple(range(len(args))))(*args))
    for declarations in declared:
        session = Session()
        for var, array in point.items():
            session.bind(f"{var}0", array)
        at = " at " + ", ".join([f"{var} = {var}0" for var in point] + (sizes if declarations == declared[0] else []))
        try:
            session.run(f"{declarations}\n{source}")
            got = [session.eval(f"L{at}")] + [session.eval(f"grad(L, {var}){at}") for var in point]
        except GradlangError as error:
            return Finding("bug", f"{name}: {error.kind}: {error.message}")
        for var, g, w in zip(["L", *point], got, want):
            g, w = np.asarray(g, dtype=float), np.asarray(w, dtype=float)
            if g.shape != w.shape or not np.all((np.abs(g - w) <= 1e-9 * (1 + np.abs(w))) | (np.isnan(g) & np.isnan(w))):
                return Finding("bug", f"{name} at {declarations.splitlines()[0]}: {var}: got {g.tolist()}, JAX {w.tolist()}")
    return Finding("ok", name)
