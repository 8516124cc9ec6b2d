"""Random gradlang programs, and the same programs as JAX functions (issue 12).

A program is an abstract syntax tree of tuples drawn by hypothesis. It is
rendered twice, independently: as gradlang source (`source`), and as a JAX
function (`jax_value`), never by translating gradlang's output. The symbols are
fixed: scalars `y` and `z`, a vector `v: R^3` and a matrix `W: R^(2,3)`; a program
may define a scalar function `f(u)` and call it anywhere, nested in itself.

Two JAX readings of every program:
- raw: the plain JAX functions (`jnp.abs`, nested `jnp.maximum` pairs, `jax.grad`);
- doc: gradlang's documented conventions (LANGUAGE.md section 5): abs' = sign
  (written `sign(u)*u`), max/min of several arguments one reduction whose ties
  share equally (`jnp.max` of the stacked arguments), relu'(0) = 0.
A difference from raw JAX that the doc reading explains is a convention, not a bug.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from hypothesis import strategies as st

jax.config.update("jax_enable_x64", True)

SCALAR, VEC3, VEC2, MAT = "s", ("v", 3), ("v", 2), ("m", 2, 3)
UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "atan", "sigmoid", "softplus", "relu", "abs",
         "sign", "floor", "round", "log1p", "expm1", "asin", "acos")
REDUCTIONS = ("sum", "mean", "max", "min", "norm", "logsumexp", "prod")
CONSTANTS = ("0.5", "2.0", "-1.5", "3", "1e-3", "0.0", "1")
COMPARISONS = (">", "<", ">=", "<=")
AXIS_REDUCTIONS = ("sum", "mean", "max", "logsumexp")  # along axis 1 of the 2x3 matrix: a vector of length 2
HUBER_DELTAS = ("0.5", "1", "2.0")


# ---- strategies ---------------------------------------------------------------------------------


def _leaves(shape, params=()):
    if shape == SCALAR:
        options = [("sym", "y"), ("sym", "z"), ("comp", "v", 0), ("comp", "v", 2), ("comp2", "W", 1, 2)]
        options += [("sym", p) for p in params] * 3
        return st.one_of(st.sampled_from(options), st.sampled_from(CONSTANTS).map(lambda c: ("num", c)))
    if shape == VEC3:
        return st.just(("var", "v"))
    if shape == MAT:
        return st.just(("var", "W"))
    return st.just(("matvec", ("var", "W"), ("var", "v")))  # a vector of length 2


@functools.cache  # built once: building the strategy tree anew for every draw cost 11 s a program
def exprs(shape, depth: int, params=(), calls: bool = False):
    """Expressions of the given shape, nested at most `depth` deep."""
    if depth <= 0:
        return _leaves(shape, params)
    same = functools.partial(exprs, shape, depth - 1, params, calls)
    scalar = functools.partial(exprs, SCALAR, depth - 1, params, calls)
    options = [
        _leaves(shape, params),
        st.tuples(st.just("un"), st.sampled_from(UNARY), same()),
        st.tuples(st.just("bin"), st.sampled_from("+-*/"), same(), same()),
        st.tuples(st.just("bin"), st.sampled_from("+-*/"), same(), scalar()),
        st.tuples(st.just("pow"), same(), st.sampled_from(["2", "3", "-1", "0.5", "2.0"])),
        st.tuples(st.just("sg"), same()),
        st.tuples(st.just("ext"), st.sampled_from(["max", "min"]), st.lists(same(), min_size=2, max_size=3)),
    ]
    if shape == SCALAR:
        options += _scalar_options(depth, params, calls)
    if shape == VEC3:
        options += [
            st.tuples(st.just("softmaxv"), same()),
            st.tuples(st.just("list"), st.lists(scalar(), min_size=3, max_size=3)),
            st.tuples(st.just("tmatvec"), exprs(MAT, depth - 1, params, calls), exprs(VEC2, depth - 1, params, calls)),
            st.tuples(st.just("normalize"), same()),
            st.tuples(st.just("diagouter"), same(), same()),
            st.tuples(st.just("row"), exprs(MAT, depth - 1, params, calls), st.integers(0, 1)),
        ]
    if shape == VEC2:
        matrix = exprs(MAT, depth - 1, params, calls)
        options += [st.tuples(st.just("matvec"), matrix, exprs(VEC3, depth - 1, params, calls)),
                    st.tuples(st.just("axis"), st.sampled_from(AXIS_REDUCTIONS), matrix),
                    st.tuples(st.just("column"), matrix, st.integers(0, 2))]
    return st.one_of(options)


def _scalar_options(depth, params, calls):
    scalar = functools.partial(exprs, SCALAR, depth - 1, params, calls)
    vec = functools.partial(exprs, VEC3, depth - 1, params, calls)
    options = [
        st.tuples(st.just("red"), st.sampled_from(REDUCTIONS), st.one_of(vec(), exprs(MAT, depth - 1, params, calls))),
        st.tuples(st.just("dot"), vec(), vec()),
        st.tuples(st.just("softmax"), vec(), st.integers(0, 2)),
        st.tuples(st.just("idx"), vec(), st.integers(0, 2)),
        st.tuples(st.just("where"), st.sampled_from(COMPARISONS), scalar(), scalar(), scalar(), scalar()),
        st.tuples(st.just("cosine"), vec(), vec()),
        st.tuples(st.just("log_softmax"), vec(), st.integers(0, 2)),
        st.tuples(st.just("huber"), scalar(), st.sampled_from(HUBER_DELTAS)),
        st.tuples(st.just("traceouter"), vec(), vec()),
        st.tuples(st.just("detgram"), exprs(MAT, depth - 1, params, calls)),
    ]
    if calls:
        options.append(st.tuples(st.just("call"), scalar()))
    return options


def _number():
    normal = st.floats(-3, 3, allow_nan=False).map(lambda x: round(x, 2))
    kinks = st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0])
    large = st.floats(-1000, 1000, allow_nan=False).map(lambda x: float(round(x)))
    huge = st.sampled_from([1e300, -1e300, 1e-300, -1e-300, 3e299, 1e150])
    return st.one_of(normal, normal, kinks, kinks, large, huge)


def points():
    """Values for y, z, v and W: mostly ordinary, often at kinks and ties, sometimes huge."""
    return st.fixed_dictionaries({
        "y": _number(), "z": _number(),
        "v": st.lists(_number(), min_size=3, max_size=3),
        "W": st.lists(st.lists(_number(), min_size=3, max_size=3), min_size=2, max_size=2),
    })


@st.composite
def programs(draw, depth: int = 3):
    """(function body or None, scalar expression, vector expression, point)."""
    body = draw(st.one_of(st.none(), exprs(SCALAR, 2, params=("u",))))
    scalar = draw(exprs(SCALAR, depth, calls=body is not None))
    vector = draw(exprs(VEC3, depth - 1, calls=body is not None))
    return body, scalar, vector, draw(points())


# ---- gradlang source ----------------------------------------------------------------------------


def source(t) -> str:
    kind = t[0]
    if kind in ("sym", "var"):
        return t[1]
    if kind == "num":
        return f"({t[1]})" if t[1].startswith("-") else t[1]
    if kind == "comp":
        return f"{t[1]}[{t[2]}]"
    if kind == "comp2":
        return f"{t[1]}[{t[2]}, {t[3]}]"
    if kind == "un":
        return f"{t[1]}({source(t[2])})"
    if kind == "bin":
        return f"({source(t[2])} {t[1]} {source(t[3])})"
    if kind == "pow":
        return f"({source(t[1])})^({t[2]})"
    if kind == "sg":
        return f"sg({source(t[1])})"
    if kind == "ext":
        return f"{t[1]}({', '.join(source(a) for a in t[2])})"
    if kind == "red":
        return f"{t[1]}({source(t[2])})"
    if kind == "dot":
        return f"dot({source(t[1])}, {source(t[2])})"
    if kind == "softmax":
        return f"softmax({source(t[1])})[{t[2]}]"
    if kind == "softmaxv":
        return f"softmax({source(t[1])})"
    if kind == "idx":
        return f"({source(t[1])})[{t[2]}]"
    if kind == "where":
        return f"where({source(t[2])} {t[1]} {source(t[3])}, {source(t[4])}, {source(t[5])})"
    if kind == "list":
        return "[" + ", ".join(source(a) for a in t[1]) + "]"
    if kind == "matvec":
        return f"({source(t[1])} @ {source(t[2])})"
    if kind == "tmatvec":
        return f"(transpose({source(t[1])}) @ {source(t[2])})"
    if kind == "call":
        return f"f({source(t[1])})"
    return _source_of_new_builtins(t)


def _source_of_new_builtins(t) -> str:
    """Section 6's compositions (outer, diag, normalize, cosine, huber, log_softmax, trace, det, axes, slices)."""
    kind = t[0]
    if kind in ("normalize", "cosine"):
        return f"{kind}({', '.join(source(a) for a in t[1:])})"
    if kind == "diagouter":
        return f"diag(outer({source(t[1])}, {source(t[2])}))"
    if kind == "traceouter":
        return f"trace(outer({source(t[1])}, {source(t[2])}))"
    if kind == "row":
        return f"({source(t[1])})[{t[2]}, :]"
    if kind == "column":
        return f"({source(t[1])})[:, {t[2]}]"
    if kind == "axis":
        return f"{t[1]}({source(t[2])}, 1)"
    if kind == "log_softmax":
        return f"log_softmax({source(t[1])})[{t[2]}]"
    if kind == "huber":
        return f"huber({source(t[1])}, {t[2]})"
    if kind == "detgram":
        return f"det({source(t[1])} @ transpose({source(t[1])}))"
    raise AssertionError(kind)


def literal(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(float(value)).replace("e+", "e")


def at(point: dict) -> str:
    return ", ".join(f"{name} = {literal(value)}" for name, value in point.items())


# ---- JAX ----------------------------------------------------------------------------------------


def _section5_abs(u):
    return jnp.sign(u) * u


def _extremum(name: str, doc: bool):
    pick, pair = (jnp.max, jnp.maximum) if name == "max" else (jnp.min, jnp.minimum)
    if doc:
        return lambda *args: pick(jnp.stack(jnp.broadcast_arrays(*args)), axis=0)
    return lambda *args: functools.reduce(pair, args)


JAX_UNARY = {
    "exp": jnp.exp, "log": jnp.log, "sqrt": jnp.sqrt, "sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh,
    "atan": jnp.arctan, "sigmoid": jax.nn.sigmoid, "softplus": jax.nn.softplus, "relu": jax.nn.relu,
    "abs": jnp.abs, "sign": jnp.sign, "floor": jnp.floor, "round": jnp.round,
    "log1p": jnp.log1p, "expm1": jnp.expm1, "asin": jnp.arcsin, "acos": jnp.arccos,
}
JAX_REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "min": jnp.min, "prod": jnp.prod,
                  "norm": lambda a: jnp.sqrt(jnp.sum(a * a)), "logsumexp": jax.nn.logsumexp}
JAX_BINARY = {"+": jnp.add, "-": jnp.subtract, "*": jnp.multiply, "/": jnp.divide}
JAX_COMPARE = {">": jnp.greater, "<": jnp.less, ">=": jnp.greater_equal, "<=": jnp.less_equal}


class Reading:
    """One JAX reading of a program: which stop and which conventions."""

    def __init__(self, doc: bool, stops: bool = True, body=None):
        self.doc, self.body = doc, body
        self.stop = jax.lax.stop_gradient if stops else (lambda u: u)

    def value(self, t, env):
        kind = t[0]
        method = getattr(self, "_" + kind, None)
        if method is not None:
            return method(t, env)
        if kind in ("sym", "var"):
            return env[t[1]]
        if kind == "num":
            return jnp.float64(float(t[1]))
        if kind == "comp":
            return env[t[1]][t[2]]
        if kind == "comp2":
            return env[t[1]][t[2], t[3]]
        if kind == "sg":
            return self.stop(self.value(t[1], env))
        if kind == "red":
            return JAX_REDUCTIONS[t[1]](self.value(t[2], env))
        if kind == "dot":
            return jnp.dot(self.value(t[1], env), self.value(t[2], env))
        if kind == "softmax":
            return jax.nn.softmax(self.value(t[1], env))[t[2]]
        if kind == "softmaxv":
            return jax.nn.softmax(self.value(t[1], env))
        if kind == "idx":
            return self.value(t[1], env)[t[2]]
        if kind == "list":
            return jnp.stack([self.value(a, env) for a in t[1]])
        if kind == "matvec":
            return self.value(t[1], env) @ self.value(t[2], env)
        if kind == "tmatvec":
            return self.value(t[1], env).T @ self.value(t[2], env)
        raise AssertionError(kind)

    def _norm(self, a):
        return jnp.sqrt(jnp.sum(a * a))  # as `norm` above: no epsilon (LANGUAGE.md section 6)

    def _normalize(self, t, env):
        a = self.value(t[1], env)
        return a / self._norm(a)

    def _cosine(self, t, env):
        a, b = self.value(t[1], env), self.value(t[2], env)
        return jnp.dot(a, b) / (self._norm(a) * self._norm(b))

    def _diagouter(self, t, env):
        return jnp.diag(jnp.outer(self.value(t[1], env), self.value(t[2], env)))

    def _traceouter(self, t, env):
        return jnp.trace(jnp.outer(self.value(t[1], env), self.value(t[2], env)))

    def _row(self, t, env):
        return self.value(t[1], env)[t[2], :]

    def _column(self, t, env):
        return self.value(t[1], env)[:, t[2]]

    def _axis(self, t, env):
        reduce = {"sum": jnp.sum, "mean": jnp.mean, "logsumexp": jax.nn.logsumexp}.get(t[1])
        if reduce is None:  # max: the doc reading shares a tie equally, as jnp.max's own gradient does
            reduce = jnp.max
        return reduce(self.value(t[2], env), axis=1)

    def _log_softmax(self, t, env):
        return jax.nn.log_softmax(self.value(t[1], env))[t[2]]

    def _huber(self, t, env):
        """optax.huber_loss raw; the doc reading is gradlang's `where` (docs/decisions.md, huber is a where)."""
        u, delta = self.value(t[1], env), float(t[2])
        size = jnp.abs(u)
        if self.doc:
            return jnp.where(size <= delta, u * u / 2, delta * (size - delta / 2))
        clipped = jnp.minimum(size, delta)
        return 0.5 * clipped * clipped + delta * (size - clipped)

    def _detgram(self, t, env):
        m = self.value(t[1], env)
        return jnp.linalg.det(m @ m.T)

    def _un(self, t, env):
        function = _section5_abs if (self.doc and t[1] == "abs") else JAX_UNARY[t[1]]
        return function(self.value(t[2], env))

    def _bin(self, t, env):
        return JAX_BINARY[t[1]](self.value(t[2], env), self.value(t[3], env))

    def _pow(self, t, env):
        base = self.value(t[1], env)
        return base ** int(t[2]) if "." not in t[2] else jnp.power(base, float(t[2]))

    def _ext(self, t, env):
        return _extremum(t[1], self.doc)(*[self.value(a, env) for a in t[2]])

    def _where(self, t, env):
        condition = JAX_COMPARE[t[1]](self.value(t[2], env), self.value(t[3], env))
        return jnp.where(condition, self.value(t[4], env), self.value(t[5], env))

    def _call(self, t, env):
        argument = self.value(t[1], env)
        return self.value(self.body, {**env, "u": argument})

    def function(self, t):
        """The expression as a function of (y, z, v, W)."""
        return lambda y, z, v, W: self.value(t, {"y": y, "z": z, "v": v, "W": W})
