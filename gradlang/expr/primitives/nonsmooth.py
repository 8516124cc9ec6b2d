"""Non-smooth primitives and stop_gradient: the conventions of section 5 of the language reference.

abs, relu, sign, floor, ceil, round, max/min with their tie shares, where,
and stop_gradient. Where a framework's own function would differentiate
differently from section 5, the export goes through a small helper in the
module's prelude whose gradient equals gradlang's (checked by running it in
tests/tools/test_export.py).
"""

from __future__ import annotations

import functools
import math

import sympy as sp

from gradlang.expr import pure_numeric
from gradlang.expr.functions import Maximum, MaxShare, Minimum, MinShare, Relu, Round, Where
from gradlang.lazy import np
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.primitives import (Export, GradlangFunction, Kink, Primitive, TensorRule, frameworks, helpers, register,
                                        same, unary)
from gradlang.expr.primitives.tangents import inner, no_vector
from gradlang.expr.engine import broadcast, nodes

spread = broadcast.spread  # the engine's, imported on first use (issue #41)

ZERO, ONE = sp.S.Zero, sp.S.One


def _is_integer(a):
    if isinstance(a, float):  # one point without NumPy (expr/pure_numeric.py)
        return math.isfinite(a) and a == math.floor(a)
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & (a == np.floor(a))


def _is_half_integer(a):
    if isinstance(a, float):
        return math.isfinite(a) and a - math.floor(a) == 0.5
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & (a - np.floor(a) == 0.5)


def _jump(extra: str = "") -> Kink:
    """A jump of a piecewise-constant function: every framework's derivative is 0 there."""
    return Kink("point", f"gradlang's derivative is 0 (docs/language.md, section 5){extra}; TensorFlow, JAX and PyTorch also give 0. "
                "A finite difference across the jump is not 0.", what="at a jump", hit=_is_integer)


def _share(pick, k, *args):
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
    extremum = pick(np.stack(arrays), axis=0)
    tied = sum((a == extremum).astype(float) for a in arrays)
    return np.where(arrays[int(k)] == extremum, 1.0 / np.maximum(tied, 1.0), 0.0)


# --- stop_gradient --------------------------------------------------------------

register(Primitive(
    "stop_gradient", StopGradient, "value of u, derivative zero (tf.stop_gradient)", "diff(x*stop_gradient(x), x)",
    build=StopGradient, group="core", aliases=("sg",), zero_derivative=True, numpy="({args})",
    latex=r"\operatorname{sg}",
    export={"numpy": Export("({args})"), "jax": Export("jax.lax.stop_gradient"),
            "torch": Export("({args}).detach()"), "tf": Export("tf.stop_gradient")},
))

# --- abs and relu -----------------------------------------------------------------

register(Primitive(
    "abs", sp.Abs, "absolute value, derivative sign(u)", "abs(-3)", build=sp.Abs,
    partial=unary(lambda ops, node, u: ops.call(sp.sign, u)), numpy="abs",
    # abs's kink is met where its derivative sign(u) is evaluated: see sign's record.
    export=helpers("_abs", {
        "numpy": "def _abs(u):\n    return np.abs(u)\n",
        "jax": 'def _abs(u):\n    """|u| with derivative sign(u), 0 at 0 (jnp.abs has derivative 1 at 0)."""\n'
               "    return u * jax.lax.stop_gradient(jnp.sign(u))\n",
        "torch": "def _abs(u):\n    return torch.abs(_t(u))  # derivative sgn(u): 0 at 0\n",
        "tf": "def _abs(u):\n    return tf.abs(_t(u))  # derivative sign(u): 0 at 0\n",
    }),
))

RELU_KINK = Kink(
    "point",
    "gradlang's derivative is 0 there (docs/language.md, section 5), as TensorFlow (tf.nn.relu), JAX (jax.nn.relu) and PyTorch "
    "(torch.relu) also give; jnp.maximum(u, 0) in JAX and torch.maximum(u, 0) give 1/2, tf.maximum(u, 0) gives 1.",
    what="at its kink", hit=lambda u: u == 0,
)

register(Primitive(
    "relu", Relu, "max(u, 0), derivative 0 at 0", "relu(x)", build=Relu,
    partial=unary(lambda ops, node, u: Where(ops.call(sp.StrictGreaterThan, u, ZERO), ONE, ZERO)),
    numpy=lambda u: np.maximum(u, 0.0), pure=pure_numeric.relu, latex=r"\operatorname{relu}", kink=RELU_KINK,
    export=helpers("_relu", {
        "numpy": "def _relu(u):\n    return np.maximum(u, 0.0)\n",
        "jax": "def _relu(u):\n    return jax.nn.relu(u)  # derivative 0 at 0\n",
        "torch": "def _relu(u):\n    return torch.relu(_t(u))  # derivative 0 at 0\n",
        "tf": "def _relu(u):\n    return tf.nn.relu(_t(u))  # derivative 0 at 0\n",
    }),
))

# --- piecewise constant -------------------------------------------------------------

register(Primitive(
    "sign", sp.sign, "-1, 0 or 1; derivative 0", "sign(x)", build=sp.sign, zero_derivative=True, numpy="sign",
    kink=Kink("point", "gradlang's derivative of sign is 0 (docs/language.md, section 5), as TensorFlow, JAX and PyTorch give; "
              "a finite difference across the jump is not 0. sign(u) is also gradlang's derivative of abs(u), "
              "0 at u = 0 as TensorFlow (tf.abs) and PyTorch (torch.abs) give; JAX (jnp.abs, lax.abs) gives 1.",
              what="at a jump", hit=lambda u: u == 0),
    export=same("sign", tf="tf.math.sign"),
))
register(Primitive(
    "floor", sp.floor, "largest integer <= u; derivative 0", "floor(7/2)", build=sp.floor, zero_derivative=True,
    numpy="floor", kink=_jump(), export=same("floor"),
))
register(Primitive(
    "ceil", sp.ceiling, "smallest integer >= u; derivative 0", "ceil(7/2)", build=sp.ceiling,
    zero_derivative=True, numpy="ceil", kink=_jump(), export=same("ceil", tf="tf.math.ceil"),
))
register(Primitive(
    "round", Round, "nearest integer, halves to even; derivative 0", "round(5/2)", build=Round,
    zero_derivative=True, numpy="round", latex=r"\operatorname{round}",
    kink=Kink("point", "gradlang's derivative is 0 (docs/language.md, section 5), and halves round to even as in NumPy, tf.round, "
              "jnp.round, torch.round; TensorFlow, JAX and PyTorch also give 0. "
              "A finite difference across the jump is not 0.", what="at a jump", hit=_is_half_integer),
    export=helpers("_round", {
        "numpy": "def _round(u):\n    return np.round(u)  # halves to even\n",
        "jax": "def _round(u):\n    return jnp.round(u)  # halves to even, derivative 0\n",
        "torch": "def _round(u):\n    return torch.round(_t(u))  # halves to even, derivative 0\n",
        "tf": "def _round(u):\n    return tf.round(_t(u))  # halves to even, derivative 0\n",
    }),
))

# --- float32: a cast, kept (LANGUAGE.md 3b) ------------------------------------------------


class Float32(GradlangFunction):
    """float32(u): u rounded to the nearest float32; derivative 1, as JAX's convert_element_type and PyTorch's .float().

    An importer writes a framework's cast this way, so the program computes the model's float32 rounding
    instead of silently skipping it (Acme's DQN casts its TD error: 6e-9 on the gradient)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_Float or u.is_Rational or u in (sp.oo, -sp.oo, sp.nan):
            return sp.Float(float(pure_numeric.float32(float(u)))) if u is not sp.nan else u
        return None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real


# Its derivative is a convention everywhere (the rounding is a staircase), not at a place: nothing is warned
# about, and explain[unfold] has no definition of it in gradlang's own functions to open it into.
_CAST = Kink("point", "gradlang's derivative of float32 is 1 (straight through the rounding), as JAX's "
             "convert_element_type and PyTorch's .float() give; a finite difference finer than float32's spacing "
             "is 0.", what="a cast", hit=lambda u: False if isinstance(u, float) else np.zeros(np.shape(u), bool))


def _float32(u):
    with np.errstate(over="ignore"):
        return np.asarray(u, dtype=np.float64).astype(np.float32).astype(np.float64)


register(Primitive(
    "float32", Float32, "u rounded to the nearest float32; derivative 1", "float32(1/3)", build=Float32,
    partial=unary(lambda ops, node, u: ONE), numpy=_float32, pure=pure_numeric.float32,
    latex=r"\operatorname{float32}", kink=_CAST,
    export=helpers("_float32", {
        "numpy": "def _float32(u):\n    return np.asarray(u, dtype=np.float64).astype(np.float32).astype(np.float64)\n",
        "jax": "def _float32(u):\n    u = jnp.asarray(u)\n    return u.astype(jnp.float32).astype(u.dtype)  # derivative 1\n",
        "torch": "def _float32(u):\n    return _t(u).to(torch.float32).to(torch.float64)  # derivative 1\n",
        "tf": "def _float32(u):\n    return tf.cast(tf.cast(_t(u), tf.float32), tf.float64)  # derivative 1\n",
    }),
))

# --- max and min of several arguments, and their shares ---------------------------------

_TIE_FRAMEWORKS = (
    "TensorFlow: tf.reduce_{name} shares equally, tf.{long}imum(a, b) gives all to a; "
    "JAX: jnp.{name} shares equally, jnp.{long}imum / lax.{name} give 1/2 to each side of every pair "
    "(so nested pairs share unequally); "
    "PyTorch: torch.a{name} and torch.{name}(x) share equally, torch.{long}imum gives 1/2 to each side, "
    "torch.{name}(x, dim) gives all to one index"
)

_EXTREMUM_CODE = {
    "numpy": "def _{name}(*args):\n    return np.{name}(np.stack(np.broadcast_arrays(*args)), axis=0)\n",
    "jax": "def _{name}(*args):\n    \"\"\"One reduction over all arguments: tied arguments share the gradient equally "
           "(jnp.{name} does).\"\"\"\n    return jnp.{name}(jnp.stack(jnp.broadcast_arrays(*args)), axis=0)\n",
    "torch": "def _{name}(*args):\n    \"\"\"One reduction over all arguments: torch.a{name} shares a tie equally.\"\"\"\n"
             "    return torch.a{name}(torch.stack(torch.broadcast_tensors(*[_t(a) for a in args])), dim=0)\n",
    "tf": "def _{name}(*args):\n    \"\"\"One reduction over all arguments: tf.reduce_{name} shares a tie equally.\"\"\"\n"
          "    return tf.reduce_{name}(_stacked(args), axis=0)\n",
}

# The extremum of one whole array (vectorised export): the framework's reduction, which shares a tie equally.
_EXTREMUM_WHOLE = {"numpy": "np.{name}", "jax": "jnp.{name}", "torch": "torch.{name}(_t({{args}}))",
                   "tf": "tf.reduce_{name}"}

_SHARE_CODE = {
    "numpy": "def _{name}_share(k, *args):\n    return _share(np.{name}, k, args)\n",
    "jax": "def _{name}_share(k, *args):\n    return _share(jnp.{name}, k, args)\n",
    "torch": "def _{name}_share(k, *args):\n    return _share(torch.a{name}, k, args)\n",
    "tf": "def _{name}_share(k, *args):\n    return _share(tf.reduce_{name}, k, args)\n",
}


def _max_shares_vector(v):
    """The shares of max(v) by whole-array NumPy (expr/tensor/numbers.py): 1/t on each of the t tied components."""
    tied = v == np.max(v)
    return np.where(tied, 1.0 / max(int(np.sum(tied)), 1), 0.0)


def _max_shares_axis(matrix, axis):
    tied = matrix == np.max(matrix, axis=int(axis), keepdims=True)
    return np.where(tied, 1.0 / np.maximum(np.sum(tied, axis=int(axis), keepdims=True), 1), 0.0)


def _extremum_whole(build, node, v, g):
    """Vectorised export (record.WholeArrays): ties share, 1/t for each of the t components that attain it."""
    tied = build.ties(v, node)
    return build.mul(g, build.div(tied, build.sum_all(tied)))


def _extremum(name: str, long: str, cls, share_cls, tensor=(), share_tensor=()) -> None:
    """max or min of several arguments (one reduction), and the share of each argument in its derivative.

    `tensor` and `share_tensor` are their rules for the tensor engine's nodes, if it has any."""
    tie = Kink("tie", _TIE_FRAMEWORKS.format(name=name, long=long))
    register(Primitive(
        name, cls, f"{name} of a vector, or elementwise {name} of several; ties share the gradient",
        f"{name}(x, 0)", build=cls, group="reduction", apply="extremum", aliases=(f"reduce_{name}",),
        arity=(1, None), partial=lambda ops, node, k: ops.call(node.share_class, sp.Integer(k), *node.args),
        numpy=lambda *args: functools.reduce(getattr(np, f"{long}imum"), args), pure=getattr(pure_numeric, f"{long}imum_of"),
        latex=rf"\{name}", kink=tie,
        export=helpers(f"_{name}", {t: code.format(name=name) for t, code in _EXTREMUM_CODE.items()},
                       {t: code.format(name=name) for t, code in _EXTREMUM_WHOLE.items()}),
        tensor=tensor, whole_adjoint=_extremum_whole,
    ))
    register(Primitive(
        f"{name}_share", share_cls,
        f"share of argument k in the derivative of {name}(a0, …): 1/ties or 0", f"{name}_share(1, 1, 3, 3)",
        build=share_cls, group="reduction", apply="share", arity=(3, None), zero_derivative=True,
        numpy=lambda k, *args: _share(getattr(np, name), k, *args), pure=getattr(pure_numeric, f"{name}_share"),
        latex=rf"\operatorname{{{name}\_share}}",
        kink=tie, export=helpers(f"_{name}_share", {t: code.format(name=name) for t, code in _SHARE_CODE.items()}),
        tensor=share_tensor,
    ))


# max of a whole vector at symbolic size (MaxOf): v̄ = ȳ · shares of the maximum (ties split equally);
# max along an axis (MaxAxis) likewise, line by line; the shares (MaxShares, MaxSharesAxis) are a
# constant to differentiation. The tensor engine has no min node: min(v) is -max(-v).
# The shares in each framework: 1/t on the t entries that attain the maximum (of each line, along an axis),
# stopped, since they are a constant to differentiation; each framework's own max (jnp.max, torch.amax,
# tf.reduce_max) already shares a tie's gradient equally.
_SHARES = {
    "jax": "def _gl_max_shares(v, axis=None):\n    tied = v == jnp.max(v, axis=axis, keepdims=True)\n"
           "    return jax.lax.stop_gradient(tied / jnp.sum(tied, axis=axis, keepdims=True))\n",
    "torch": "def _gl_max_shares(v, axis=None):\n    v = v.detach()\n"
             "    tied = (v == (torch.amax(v) if axis is None else torch.amax(v, dim=axis, keepdim=True))).to(torch.float64)\n"
             "    return tied / (tied.sum() if axis is None else tied.sum(dim=axis, keepdim=True))\n",
    "tf": "def _gl_max_shares(v, axis=None):\n    v = tf.stop_gradient(v)\n"
          "    tied = tf.cast(tf.equal(v, tf.reduce_max(v, axis=axis, keepdims=True)), tf.float64)\n"
          "    return tied / tf.reduce_sum(tied, axis=axis, keepdims=True)\n",
}
_extremum("max", "max", Maximum, MaxShare,
          tensor=(TensorRule(nodes.MaxOf, lambda node, ybar, k: ybar * nodes.MaxShares(node.args[0]), (
              "max: v̄ = ȳ · (ties share equally)", r"\bar{v} = \bar{y} \cdot \text{(ties share equally)}"),
                             lambda node, d, vector: inner(nodes.MaxShares(node.args[0]), d[0], vector),
                             export=frameworks("jnp.max({0})", "torch.amax({0})", "tf.reduce_max({0})")),
                  TensorRule(nodes.MaxAxis, lambda node, ybar, k: None if k else
                             spread(node, ybar) * nodes.MaxSharesAxis(*node.args), (
                      "max along an axis: M̄ = ȳ 𝟙ᵀ ⊙ (ties in each line share equally)",
                      r"\bar{M} = \bar{y} \mathbf{1}^{\top} \odot \text{(ties in each line share equally)}"),
                             no_vector(lambda n, d: nodes.SumAxis(nodes.MaxSharesAxis(*n.args) * d[0], n.args[1])),
                             export=frameworks("jnp.max({0}, axis={i1})", "torch.amax({0}, dim={i1})",
                                               "tf.reduce_max({0}, axis={i1})"))),
          share_tensor=(TensorRule(nodes.MaxShares, constant=True, numpy=_max_shares_vector,
                                   export=frameworks(*["_gl_max_shares({0})"] * 3, **_SHARES)),
                        TensorRule(nodes.MaxSharesAxis, constant=True, numpy=_max_shares_axis,
                                   export=frameworks(*["_gl_max_shares({0}, {i1})"] * 3, **_SHARES))))
_extremum("min", "min", Minimum, MinShare)

# --- where -------------------------------------------------------------------------------

register(Primitive(
    "where", Where, "a where the condition holds, else b; differentiates a and b only", "where(x > 0, x, 0)",
    build=Where, group="vector", apply="where", arity=(3, 3), numpy="where",
    kink=Kink("boundary", "gradlang differentiates only the branch the condition selects, as tf.where, "
              "jnp.where and torch.where do, so the derivative may jump here."),
    export=helpers("_where", {
        "numpy": "def _where(c, a, b):\n    return np.where(c, a, b)\n",
        "jax": "def _where(c, a, b):\n    return jnp.where(c, a, b)\n",
        "torch": "def _where(c, a, b):\n    return torch.where(c, _t(a), _t(b))\n",
        "tf": "def _where(c, a, b):\n    return tf.where(c, _t(a), _t(b))\n",
    }),
))
