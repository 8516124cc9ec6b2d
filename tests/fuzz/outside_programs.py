"""An outside differential fuzzer's programs: gradlang text and a JAX float64 twin, drawn together.

Written apart from tests/tensor/tensor_programs.py (other shapes of programs): one
to three sizes `p, q, r` with literal sizes mixed into the declarations, a rank-three
tensor, index symbols `i, j`, user functions (some shadowing builtins, `softmax(v)`,
`sigmoid(t)`, `norm(v)`, some with a parameter that shadows a global), every section 6
builtin that acts on tensors, stops at random nodes, and gradients inside larger
formulas (`sum(grad(L, x) * x)`, `diff(L, a) * a`). Each node is drawn as a pair
(gradlang text, function of a JAX environment); the environment holds the arrays, the
sizes and indices as ints, and the stop in force (`sg` is JAX's stop_gradient, the
identity under `unstopped`). Nothing of gradlang's output is translated: JAX reads the
tree the generator drew.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

ELEMENTWISE = {  # name: (gradlang form, JAX form): arguments kept inside each function's domain
    "exp": ("exp(tanh({}))", lambda u: jnp.exp(jnp.tanh(u))), "log": ("log(1 + ({})^2)", lambda u: jnp.log(1 + u ** 2)),
    "log2": ("log(2 + ({})^2, 3)", lambda u: jnp.log(2 + u ** 2) / jnp.log(3.0)),
    "sqrt": ("sqrt(1 + ({})^2)", lambda u: jnp.sqrt(1 + u ** 2)), "sin": ("sin({})", jnp.sin), "cos": ("cos({})", jnp.cos),
    "tan": ("tan(tanh({}))", lambda u: jnp.tan(jnp.tanh(u))), "asin": ("asin(tanh({})/2)", lambda u: jnp.arcsin(jnp.tanh(u) / 2)),
    "acos": ("acos(tanh({})/2)", lambda u: jnp.arccos(jnp.tanh(u) / 2)), "atan": ("atan({})", jnp.arctan),
    "sinh": ("sinh(tanh({}))", lambda u: jnp.sinh(jnp.tanh(u))), "cosh": ("cosh(tanh({}))", lambda u: jnp.cosh(jnp.tanh(u))),
    "tanh": ("tanh({})", jnp.tanh), "sigmoid": ("sigmoid({})", jax.nn.sigmoid), "relu": ("relu({})", jax.nn.relu),
    "softplus": ("softplus({})", jax.nn.softplus), "abs": ("abs({})", jnp.abs), "sign": ("sign({})", jnp.sign),
    "floor": ("floor({})", jnp.floor), "ceil": ("ceil({})", jnp.ceil), "round": ("round({})", jnp.round),
    "neg": ("(-{})", lambda u: -u), "square": ("({})^2", lambda u: u ** 2), "cube": ("({})**3", lambda u: u ** 3),
    "huber": ("huber({}, 0.5)", lambda u: jnp.where(jnp.abs(u) <= 0.5, u ** 2 / 2, 0.5 * (jnp.abs(u) - 0.25))),
    "min0": ("min({}, 0.0)", lambda u: jnp.minimum(u, 0.0)), "max0": ("max({}, 0)", lambda u: jnp.maximum(u, 0.0)),
}


def _softmax_tf(env, v):
    e = jnp.exp(v - env["sg"](jnp.max(v)))
    return e / jnp.sum(e)


# User functions: (definition, arity, kind, JAX form taking (env, *args)). kind: "elementwise" (any shape,
# arguments of one shape), "scalar" (a scalar of one tensor), "same" (the shape of its argument, not elementwise).
USER = {
    "softmax": ("softmax(v) = exp(v - sg(max(v))) / sum(exp(v - sg(max(v))))", 1, "same",
                lambda env, v: _softmax_tf(env, v)),
    "sigmoid": ("sigmoid(t) = 1 / (1 + exp(-t))", 1, "elementwise", lambda env, t: 1 / (1 + jnp.exp(-t))),
    "norm": ("norm(v) = sqrt(sum(v * v) + 1)", 1, "scalar", lambda env, v: jnp.sqrt(jnp.sum(v * v) + 1)),
    "h": ("h(x) = sum(x * sg(x)) + a", 1, "scalar", lambda env, x: jnp.sum(x * env["sg"](x)) + env["a"]),
    "f": ("f(u, w) = u * sigmoid(w) + sg(w)^2", 2, "elementwise",
          lambda env, u, w: u * jax.nn.sigmoid(w) + env["sg"](w) ** 2),
    "mse": ("mse(W, y) = mean((W - y)^2)", 2, "scalar2", lambda env, W, y: jnp.mean((W - y) ** 2)),
    "relu": ("relu(t) = max(t, 0.0)", 1, "elementwise", lambda env, t: jnp.maximum(t, 0.0)),
}


def _identity(v):
    return v


@dataclass
class Program:
    """One drawn program: declarations, definitions, statements (text, JAX) and a point."""
    seed: int
    sizes: dict  # size name -> its number at the point
    shapes: dict  # variable -> shape tuple of size names and ints
    definitions: list
    statements: list = field(default_factory=list)  # (gradlang text, JAX function of an env)
    point: dict = field(default_factory=dict)  # variable -> nested floats; i, j -> ints
    indices: dict = field(default_factory=dict)
    given_sizes: bool = False  # the sizes written in the at of the symbolic program


class Drawer:
    """Draws nodes of a given shape; each node is (text, JAX function of env)."""

    def __init__(self, rng: random.Random, shapes: dict, user: list):
        self.rng, self.shapes, self.user = rng, shapes, user
        self.vectors = sorted({s for s in shapes.values() if len(s) == 1}, key=str)
        self.kinds = sorted(set(shapes.values()), key=str)

    def leaf(self, shape):
        names = [n for n, s in self.shapes.items() if s == shape]
        if not names:
            return None
        name = self.rng.choice(names)
        return name, lambda env: env[name]

    def draw(self, shape, depth: int):
        if depth <= 0 or self.rng.random() < 0.18:
            found = self.leaf(shape)
            if found is not None:
                return found
        for _ in range(30):
            node = self._op(shape, depth)
            if node is not None:
                return node
        return self.leaf(shape) or self._fallback(shape, depth)

    def _fallback(self, shape, depth):
        """A shape no declaration has: a stop-free broadcast of a scalar."""
        return self._broadcast_to(shape, depth)

    def _op(self, shape, depth):
        roll = self.rng.random()
        if roll < 0.32:
            return self._elementwise(shape, depth)
        if roll < 0.42:
            return self._stop(shape, depth)
        if roll < 0.5 and self.user:
            return self._user(shape, depth)
        if roll < 0.58:
            return self._gradient(shape, depth)
        from tests.fuzz import outside_ops
        return outside_ops.structural(self, shape, depth)

    def _elementwise(self, shape, depth):
        kind = self.rng.random()
        if kind < 0.45:
            name = self.rng.choice(sorted(ELEMENTWISE))
            form, fn = ELEMENTWISE[name]
            t, g = self.draw(shape, depth - 1)
            return form.format(t), lambda env: fn(g(env))
        (t1, g1), (t2, g2) = self.draw(shape, depth - 1), self._partner(shape, depth - 1)
        if kind < 0.8:
            op = self.rng.choice(["+", "-", "*", "/", "max", "min"])
            if op == "/":
                return f"({t1} / (1 + ({t2})^2))", lambda env: g1(env) / (1 + g2(env) ** 2)
            if op in ("max", "min"):
                fn = jnp.maximum if op == "max" else jnp.minimum
                return f"{op}({t1}, {t2})", lambda env: fn(g1(env), g2(env))
            fn = {"+": jnp.add, "-": jnp.subtract, "*": jnp.multiply}[op]
            return f"({t1} {op} {t2})", lambda env: fn(g1(env), g2(env))
        (t3, g3), (t4, g4) = self.draw(shape, depth - 1), self._partner(shape, depth - 1)
        return (f"where({t1} > {t2}, {t3}, {t4})",
                lambda env: jnp.where(g1(env) > g2(env), g3(env), g4(env)))

    def _partner(self, shape, depth):
        """The other operand of an elementwise operation: the same shape or a scalar broadcast over it."""
        if shape != () and self.rng.random() < 0.3:
            return self.draw((), depth)
        return self.draw(shape, depth)

    def _stop(self, shape, depth):
        t, g = self.draw(shape, depth - 1)
        if self.rng.random() < 0.7 or has_derivative(t):  # unstopped(grad(…)): its stops act inside first
            name = self.rng.choice(["sg", "sg", "stop_gradient"])
            return f"{name}({t})", lambda env: env["sg"](g(env))
        return f"unstopped({t})", lambda env: g({**env, "sg": _identity})

    def _user(self, shape, depth):
        name = self.rng.choice(self.user)
        _, arity, kind, fn = USER[name]
        if kind == "elementwise":
            args = [self.draw(shape, depth - 1) for _ in range(arity)]
        elif kind == "same" and len(shape) == 1:
            args = [self.draw(shape, depth - 1)]
        elif kind in ("scalar", "scalar2") and shape == ():
            inner = self.rng.choice(self.kinds)
            args = [self.draw(inner, depth - 1) for _ in range(arity)]
        else:
            return None
        text = f"{name}({', '.join(t for t, _ in args)})"
        return text, lambda env: fn(env, *[g(env) for _, g in args])

    def _gradient(self, shape, depth):
        """A derivative inside the formula: grad(L, var) of a declared var of this shape, or diff by a scalar."""
        var = self.leaf(shape)
        if var is None or depth < 2:
            return None
        name = var[0]
        inner_text, inner = self.draw((), depth - 1)
        word = "diff" if shape == () and self.rng.random() < 0.5 else "grad"

        def compute(env):
            return jax.grad(lambda value: inner({**env, name: value}))(env[name])
        return f"{word}({inner_text}, {name})", compute

    def _broadcast_to(self, shape, depth):
        t, g = self.draw((), depth - 1)
        dims = f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(str(d) for d in shape) + ")"
        return (f"broadcast_to({t}, {dims})", lambda env: jnp.broadcast_to(g(env), dim_values(shape, env)))


def dim_values(shape, env) -> tuple:
    return tuple(env[d] if isinstance(d, str) else d for d in shape)


DERIVATIVES = ("grad(", "diff(", "hessian(", "jacobian(", "blocked(")


def has_derivative(text: str) -> bool:
    """Does the text take a derivative? unstopped(grad(L, b)) is grad's value (its stops acted inside it,
    derivatives are taken first), which JAX's identity-for-stop would not reproduce: no oracle there."""
    return any(word in text for word in DERIVATIVES)
