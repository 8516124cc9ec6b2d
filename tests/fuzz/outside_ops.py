"""The outside fuzzer's structural operations: reductions, products, indexing, shapes, per result shape.

Each builder takes (drawer, depth) and returns (gradlang text, JAX function of env) or None
when the program's declarations give it no operand. The dims are the program's own:
x is (d0,), v is (d1,), W is (d1, d0), A is (d0, d0), T is (d2, d1, d0), c is (3,).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tests.fuzz.outside_programs import ELEMENTWISE, dim_values  # noqa: F401


def dims(d):
    return d.shapes["x"][0], d.shapes["v"][0], None


def _one(d, shape, depth):
    return d.draw(shape, depth - 1)


def scalar_ops(d, depth):
    d0, d1, d2 = dims(d)
    any_shape = d.rng.choice(d.kinds[1:] or [(d0,)]) if len(d.kinds) > 1 else (d0,)
    vec = d.rng.choice(d.vectors)
    pick = d.rng.randrange(16)
    if pick < 5:
        name = d.rng.choice(["sum", "mean", "norm", "logsumexp", "max", "min", "prod", "reduce_sum", "reduce_mean",
                             "reduce_max", "reduce_min"])
        if name == "norm" and "norm" in d.user:
            name = "sum"
        t, g = _one(d, any_shape, depth)
        fn = {"sum": jnp.sum, "mean": jnp.mean, "norm": lambda u: jnp.sqrt(jnp.sum(u * u)),
              "logsumexp": jax.scipy.special.logsumexp, "max": jnp.max, "min": jnp.min,
              "prod": lambda u: jnp.prod(jnp.tanh(u) + 1.5), "reduce_sum": jnp.sum, "reduce_mean": jnp.mean,
              "reduce_max": jnp.max, "reduce_min": jnp.min}[name]
        text = f"prod(tanh({t}) + 1.5)" if name == "prod" else f"{name}({t})"
        return text, lambda env: fn(g(env))
    if pick == 5:
        (t1, g1), (t2, g2) = _one(d, vec, depth), _one(d, vec, depth)
        form = d.rng.choice(["dot({}, {})", "({} @ {})", "cosine({}, {})"])
        if form.startswith("cosine"):
            return (f"cosine(1.5 + tanh({t1}), {t2})",
                    lambda env: jnp.dot(1.5 + jnp.tanh(g1(env)), g2(env))
                    / (jnp.linalg.norm(1.5 + jnp.tanh(g1(env))) * jnp.linalg.norm(g2(env))))
        return form.format(t1, t2), lambda env: jnp.dot(g1(env), g2(env))
    if pick == 6:
        t, g = _one(d, vec, depth)
        where = d.rng.choice(["0", "-1", "i", "j", "argmax(y)", "argmin(x)"])
        if where in ("argmax(y)", "argmin(x)") and vec != d.shapes["x"]:
            where = "0"
        return f"({t})[{where}]", lambda env: g(env)[_index(where, env)]
    if pick == 7:
        t, g = _one(d, (d1, d0), depth)
        r, c = d.rng.choice([("i", "j"), ("0", "-1"), ("-1", "i"), ("j", "0")])
        return f"({t})[{r}, {c}]", lambda env: g(env)[_index(r, env), _index(c, env)]
    if pick == 8:
        t, g = _one(d, (d0, d0), depth)
        form = d.rng.choice(["trace", "det", "logdet"])
        if form == "logdet":
            return (f"logdet(eye({d0}) + ({t}) @ transpose({t}))",
                    lambda env: jnp.linalg.slogdet(jnp.eye(env_dim(d0, env)) + g(env) @ g(env).T)[1])
        return f"{form}({t})", lambda env: (jnp.trace if form == "trace" else jnp.linalg.det)(g(env))
    if pick == 9:
        (t1, g1), (t2, g2) = _one(d, (d0,), depth), _one(d, (d1, d0), depth)
        u, h = _one(d, (d1,), depth)
        return f"sum(outer({u}, {t1}) * {t2})", lambda env: jnp.sum(jnp.outer(h(env), g1(env)) * g2(env))
    if pick == 10:
        t, g = _one(d, (), depth)
        return f"(len(x) * {t})", lambda env: env_dim(d0, env) * g(env)
    if pick == 11:
        t, g = _one(d, (d1, d0), depth)
        return f"sum({t}, axis=0)[-1]", lambda env: jnp.sum(g(env), 0)[-1]
    if pick == 12:
        t, g = _one(d, (), depth)
        return f"(pi * {t})", lambda env: jnp.pi * g(env)
    if pick == 13:
        (t1, g1), (t2, g2) = _one(d, vec, depth), _one(d, vec, depth)
        return f"(sum({t1} * {t2}) / len({t2}))", lambda env: jnp.sum(g1(env) * g2(env)) / g2(env).shape[0]
    if pick == 14:
        t, g = _one(d, (d1, d0), depth)
        return f"trace(transpose({t}) @ W)", lambda env: jnp.trace(g(env).T @ env["W"])
    t, g = _one(d, (d0,), depth)
    return f"sum(huber({t}, 1.0))", lambda env: jnp.sum(jnp.where(jnp.abs(g(env)) <= 1, g(env) ** 2 / 2,
                                                                  jnp.abs(g(env)) - 0.5))


def env_dim(dim, env):
    return env[dim] if isinstance(dim, str) else dim


def _index(where, env):
    if where in ("i", "j"):
        return env[where]
    if where == "argmax(y)":
        return jnp.argmax(env["y"])
    if where == "argmin(x)":
        return jnp.argmin(env["x"])
    return int(where)


def vector_ops(d, shape, depth):
    d0, d1, d2 = dims(d)
    (dim,) = shape
    pick = d.rng.randrange(12)
    if pick < 2:
        t, g = _one(d, shape, depth)
        name = d.rng.choice(["softmax", "log_softmax", "normalize"])
        if name == "softmax" and "softmax" in d.user:
            name = "log_softmax"
        if name == "normalize":
            return f"normalize(1.5 + tanh({t}))", lambda env: (1.5 + jnp.tanh(g(env))) / jnp.linalg.norm(1.5 + jnp.tanh(g(env)))
        fn = jax.nn.softmax if name == "softmax" else jax.nn.log_softmax
        return f"{name}({t})", lambda env: fn(g(env))
    if pick < 4 and dim in (d0, d1):
        other = d0 if dim == d1 else d1
        axis = 1 if dim == d1 else 0
        t, g = _one(d, (d1, d0), depth)
        if d.rng.random() < 0.5:
            u, h = _one(d, (other,), depth)
            text = f"({t} @ {u})" if axis == 1 else f"(transpose({t}) @ {u})"
            return text, (lambda env: g(env) @ h(env)) if axis == 1 else (lambda env: g(env).T @ h(env))
        name = d.rng.choice(["sum", "mean", "logsumexp", "max", "min", "softmax_i", "reduce_sum"])
        return _axis_reduce(d, name, t, g, axis)
    if pick == 4 and dim == d0:
        t, g = _one(d, (d0, d0), depth)
        form = d.rng.choice(["matvec", "vecmat"])  # diag(A) at a symbolic size: a known refusal
        if form == "diag":
            return f"diag({t})", lambda env: jnp.diag(g(env))
        u, h = _one(d, (d0,), depth)
        if form == "matvec":
            return f"({t} @ {u})", lambda env: g(env) @ h(env)
        return f"({u} @ {t})", lambda env: h(env) @ g(env)
    if pick == 5 and dim in (d0, d1):
        t, g = _one(d, (d1, d0), depth)
        if dim == d0:
            r = d.rng.choice(["i", "0", "-1"])
            form = d.rng.choice([f"({t})[{r}]", f"({t})[{r}, :]"])
            return form, lambda env: g(env)[_index(r, env)]
        c = d.rng.choice(["j", "0", "-1"])
        return f"({t})[:, {c}]", lambda env: g(env)[:, _index(c, env)]
    if pick == 6:
        t, g = _one(d, (), depth)
        return (f"({t} * onehot(i, {dim}))",
                lambda env: g(env) * jax.nn.one_hot(env["i"], env_dim(dim, env), dtype=jnp.float64))
    if pick == 7:
        (t1, g1), (t2, g2) = _one(d, shape, depth), _one(d, shape, depth)
        return f"sum(outer({t1}, {t2}), 1)", lambda env: jnp.sum(jnp.outer(g1(env), g2(env)), 1)
    if pick == 8:
        t, g = _one(d, shape, depth)
        return f"(({t})[-1] * {t})", lambda env: g(env)[-1] * g(env)
    if pick == 9:
        t, g = _one(d, shape, depth)
        return f"max({t}, 0)", lambda env: jnp.maximum(g(env), 0.0)
    if pick == 11:
        t, g = _one(d, shape, depth)
        return f"(({t})[0] * {t})", lambda env: g(env)[0] * g(env)
    return None


def _axis_reduce(d, name, t, g, axis):
    key = d.rng.random() < 0.5
    ax = f"axis={axis}" if key or name in ("max", "min") else str(axis)
    if name == "softmax_i":
        if "softmax" in d.user:
            return f"sum(log_softmax({t}, {ax}), {axis})", lambda env: jnp.sum(jax.nn.log_softmax(g(env), axis), axis)
        return f"sum(softmax({t}, {ax}) * {t}, {axis})", lambda env: jnp.sum(jax.nn.softmax(g(env), axis) * g(env), axis)
    fn = {"sum": jnp.sum, "reduce_sum": jnp.sum, "mean": jnp.mean, "logsumexp": jax.scipy.special.logsumexp,
          "max": jnp.max, "min": jnp.min}[name]
    return f"{name}({t}, {ax})", lambda env: fn(g(env), axis)


def matrix_ops(d, shape, depth):
    d0, d1, d2 = dims(d)
    pick = d.rng.randrange(10)
    if pick == 0 and len(set(shape)) <= 2:
        u, h = _one(d, (shape[0],), depth)
        w, k = _one(d, (shape[1],), depth)
        return f"outer({u}, {w})", lambda env: jnp.outer(h(env), k(env))
    if pick == 1:
        t, g = _one(d, shape, depth)
        axis = d.rng.choice([0, 1, -1])
        name = d.rng.choice(["softmax", "log_softmax"])
        if name == "softmax" and "softmax" in d.user:
            name = "log_softmax"
        fn = jax.nn.softmax if name == "softmax" else jax.nn.log_softmax
        return f"{name}({t}, axis={axis})", lambda env: fn(g(env), axis)
    if pick == 2:
        t, g = _one(d, shape, depth)
        u, h = _one(d, (shape[1],), depth)
        return f"({t} * {u}[0])", lambda env: g(env) * h(env)[0]
    if pick == 3:
        t, g = _one(d, shape, depth)
        u, h = _one(d, (shape[0],), depth)
        return f"({t} - {u}[-1])", lambda env: g(env) - h(env)[-1]
    if pick == 4:
        t, g = _one(d, (shape[0], d0), depth)
        u, h = _one(d, (d0, shape[1]), depth) if shape[1] == d0 else (None, None)
        if u is None:
            return None
        return f"({t} @ {u})", lambda env: g(env) @ h(env)
    if pick == 5 and shape == (d0, d0):
        t, g = _one(d, (d0, d0), depth)
        form = d.rng.choice(["transpose({})", "inv(eye({d}) + {t} @ transpose({t}))", "diag(diag({}))", "eye({d}) * {s}"])
        if form.startswith("inv"):
            return (f"inv(eye({d0}) + ({t}) @ transpose({t}))",
                    lambda env: jnp.linalg.inv(jnp.eye(env_dim(d0, env)) + g(env) @ g(env).T))
        if form.startswith("eye"):
            s, k = _one(d, (), depth)
            return f"(eye({d0}) * {s})", lambda env: jnp.eye(env_dim(d0, env)) * k(env)
        if form.startswith("diag"):
            return f"diag(diag({t}))", lambda env: jnp.diag(jnp.diag(g(env)))
        return f"transpose({t})", lambda env: g(env).T
    if pick == 6 and shape == (d0, d0):
        inner, f = _one(d, (), depth)
        vec_t, vec_g = _one(d, (d0,), depth)
        if d.rng.random() < 0.5:
            return (f"hessian({inner}, x)",
                    lambda env: jax.hessian(lambda value: f({**env, "x": value}))(env["x"]))
        return (f"jacobian({vec_t}, x)", lambda env: jax.jacrev(lambda value: vec_g({**env, "x": value}))(env["x"]))
    if pick == 7 and shape == (d1, d0) and False:
        t, g = _one(d, (d2, d1, d0), depth)
        name = d.rng.choice(["sum", "mean", "max", "logsumexp", "index0", "indexi"])
        if name.startswith("index"):
            at = "0" if name == "index0" else "-1"
            return f"({t})[{at}]", lambda env: g(env)[int(at)]
        fn = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.scipy.special.logsumexp}[name]
        return f"{name}({t}, axis=0)", lambda env: fn(g(env), 0)
    if pick == 8:
        t, g = _one(d, shape, depth)
        return f"({t} / (1 + max({t})^2))", lambda env: g(env) / (1 + jnp.max(g(env)) ** 2)
    if pick == 9:
        t, g = _one(d, shape, depth)
        return f"transpose(transpose({t}))", lambda env: g(env)
    return None


def tensor3_ops(d, shape, depth):
    d0, d1, d2 = dims(d)
    pick = d.rng.randrange(4)
    t, g = _one(d, shape, depth)
    if pick == 0:
        w, k = _one(d, (d1, d0), depth)
        return f"({t} * {w})", lambda env: g(env) * k(env)
    if pick == 1:
        name = "log_softmax" if "softmax" in d.user else d.rng.choice(["softmax", "log_softmax"])
        fn = jax.nn.softmax if name == "softmax" else jax.nn.log_softmax
        return f"{name}({t}, -1)", lambda env: fn(g(env), -1)
    if pick == 2:
        w, k = _one(d, (d1, d0), depth)
        return f"(expand_dims({w}, 0) - {t})", lambda env: k(env)[None] - g(env)
    w, k = _one(d, (d0, d0), depth)
    return f"({t} @ {w})", lambda env: g(env) @ k(env)


def structural(d, shape, depth):
    if shape == ():
        return scalar_ops(d, depth)
    if len(shape) == 1:
        return vector_ops(d, shape, depth)
    if len(shape) == 2:
        return matrix_ops(d, shape, depth)
    return tensor3_ops(d, shape, depth)
