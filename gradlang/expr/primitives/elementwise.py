"""Smooth elementwise primitives: exp, log, sqrt, the trigonometric and hyperbolic functions, sigmoid, softplus.

Each record states the function's derivative once, as a teacher writes it
(sin' = cos, tanh' = 1 - tanh^2); SymPy's own classes keep their `fdiff`,
and tests/core/test_primitives.py checks the record against it. sigmoid and
softplus have classes of their own, so they stay whole in values and
derivatives (section 6 of the language reference): sigmoid(z)' is
sigmoid(z)*(1 - sigmoid(z)), softplus(z)' is sigmoid(z).
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp
from mpmath.libmp import prec_to_dps

from gradlang.errors import ValueError
from gradlang.expr import pure_numeric
from gradlang.expr.construct import is_large
from gradlang.expr.primitives import Export, GradlangFunction, Primitive, register, same, unary
from gradlang.lazy import np

_TWO = sp.Integer(2)


def _one_minus_square(ops, u):
    return ops.sub(sp.S.One, ops.power(u, _TWO))


def _safe_log(u, base=None):
    """log(u) or log(u, base); log(0) is an error in exact arithmetic, IEEE in floating point."""
    if u.is_Float and u <= 0:
        return -sp.oo if u.is_zero else sp.nan  # IEEE, as numpy.log gives
    if base is None and is_large(u):
        return sp.log(u, evaluate=False)  # is_zero of a big quotient of sums takes seconds (construct.py)
    if u.is_zero:
        raise ValueError("log(0) is undefined")
    return sp.log(u) if base is None else sp.log(u, base)


def _elementary(name, cls, doc, example, partial, numpy_name=None, **spellings):
    """A SymPy function that NumPy and every framework know by (nearly) the same name."""
    return register(Primitive(name, cls, doc, example, build=cls, partial=unary(partial),
                              numpy=numpy_name or name, export=same(name, **spellings)))


def _arc(name, cls, doc, example, partial):
    """asin, acos, atan: NumPy and JAX say arcsin, PyTorch and TensorFlow asin."""
    arc = f"arc{name[1:]}"
    return _elementary(name, cls, doc, example, partial, numpy_name=arc, numpy=f"np.{arc}", jax=f"jnp.{arc}")


_elementary("exp", sp.exp, "e to the power u", "exp(1)", lambda ops, node, u: node)
register(Primitive(
    "log", sp.log, "natural logarithm; log(u, base)", "log(exp(2))", build=_safe_log, arity=(1, 2),
    partial=unary(lambda ops, node, u: ops.reciprocal(u)), numpy="log", export=same("log", tf="tf.math.log"),
))
register(Primitive(
    "sqrt", None, "square root", "sqrt(x^2 + 1)", build=sp.sqrt,  # a power u^(1/2): Pow's rules apply
    export=same("sqrt"),
))
_elementary("sin", sp.sin, "sine", "sin(pi/2)", lambda ops, node, u: ops.call(sp.cos, u))
_elementary("cos", sp.cos, "cosine", "cos(0)", lambda ops, node, u: ops.neg(ops.call(sp.sin, u)))
_elementary("tan", sp.tan, "tangent", "tan(x)", lambda ops, node, u: ops.add(ops.power(node, _TWO), sp.S.One))
_arc("asin", sp.asin, "inverse sine", "asin(1)", lambda ops, node, u: ops.power(_one_minus_square(ops, u), -sp.S.Half))
_arc("acos", sp.acos, "inverse cosine", "acos(0)",
     lambda ops, node, u: ops.neg(ops.power(_one_minus_square(ops, u), -sp.S.Half)))
_arc("atan", sp.atan, "inverse tangent", "atan(1)",
     lambda ops, node, u: ops.reciprocal(ops.add(ops.power(u, _TWO), sp.S.One)))
_elementary("sinh", sp.sinh, "hyperbolic sine", "sinh(x)", lambda ops, node, u: ops.call(sp.cosh, u))
_elementary("cosh", sp.cosh, "hyperbolic cosine", "cosh(x)", lambda ops, node, u: ops.call(sp.sinh, u))
_elementary("tanh", sp.tanh, "hyperbolic tangent", "tanh(x)", lambda ops, node, u: _one_minus_square(ops, node))


class Sigmoid(GradlangFunction):
    """sigmoid(u) = 1/(1 + exp(-u)), kept whole so values and derivatives read as the user wrote them."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u is sp.nan:
            return u  # IEEE; left whole, tanh(sigmoid(nan)) asked SymPy for the sign of nan's digits
        if u.is_Float or u.is_infinite:
            return _sigmoid(u)  # float in, float out, the same number as the formula
        if u.is_zero:
            return sp.S.Half
        return None

    def _eval_evalf(self, prec):
        return _sigmoid(self.args[0])._eval_evalf(prec)

    def _eval_rewrite_as_exp(self, u, **kwargs):
        return _sigmoid(u)

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_is_positive(self):
        return self.args[0].is_extended_real


class Softplus(GradlangFunction):
    """softplus(u) = log(1 + exp(u)), kept whole: its derivative is sigmoid(u)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u is sp.nan:
            return u  # IEEE, as sigmoid
        if u.is_Float or u.is_infinite:
            return _softplus(u)
        if u.is_zero:
            return sp.log(2)
        return None

    def _eval_evalf(self, prec):
        return _softplus(self.args[0])._eval_evalf(prec)

    def _eval_rewrite_as_exp(self, u, **kwargs):
        return _softplus(u)

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_is_positive(self):
        return self.args[0].is_extended_real


def _sigmoid(u):
    return 1 / (1 + sp.exp(-u))


def _softplus(u):
    return sp.log(1 + sp.exp(u))


register(Primitive(
    "sigmoid", Sigmoid, "1 / (1 + exp(-u))", "sigmoid(0)", build=Sigmoid,
    partial=unary(lambda ops, node, u: ops.mul(node, ops.sub(sp.S.One, node))),
    numpy=lambda u: 1 / (1 + np.exp(-u)), pure=pure_numeric.sigmoid, latex=r"\sigma",
    unfold=(_sigmoid, "sigmoid(u) = 1 / (1 + exp(-u))"),
    export=same("sigmoid", numpy=Export("_sigmoid", "def _sigmoid(u):\n    return 1 / (1 + np.exp(-u))\n"),
                jax="jax.nn.sigmoid", tf="tf.math.sigmoid"),
))
register(Primitive(
    "softplus", Softplus, "log(1 + exp(u)), computed stably", "softplus(x)", build=Softplus,
    partial=unary(lambda ops, node, u: ops.call(Sigmoid, u)),
    numpy=lambda u: np.logaddexp(0.0, u), pure=pure_numeric.softplus, latex=r"\operatorname{softplus}",
    unfold=(_softplus, "softplus(u) = log(1 + exp(u))"),
    export=same("softplus", numpy=Export("_softplus", "def _softplus(u):\n    return np.logaddexp(0.0, u)\n"),
                jax="jax.nn.softplus", tf="tf.math.softplus",
                torch=Export("_softplus", "def _softplus(u):\n    u = _t(u)\n"
                                          "    return torch.logaddexp(u, torch.zeros_like(u))  # exact, no threshold\n")),
))


# --- log1p and expm1: accurate near 0, where log(1 + u) and exp(u) - 1 lose every digit ---------------


def _accurate(mpmath_function, u, prec):
    """mpmath's log1p/expm1 of a real number at `prec` bits; nan where the result is not real."""
    with mpmath.workprec(prec):
        value = mpmath_function(u._to_mpmath(prec))
    return sp.Float(value, precision=prec) if isinstance(value, mpmath.mpf) else sp.nan


class Log1p(GradlangFunction):
    """log1p(u) = log(1 + u), accurate for u near 0."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_zero:
            return sp.S.Zero
        if u is sp.nan or u is sp.oo:
            return u  # IEEE: log1p(nan) = nan, log1p(inf) = inf
        if u.is_Float:
            return -sp.oo if u == -1 else _accurate(mpmath.log1p, u, u._prec)
        if u == -1:
            raise ValueError("log1p(-1) is undefined")
        return None

    def _eval_evalf(self, prec):
        u = self.args[0].evalf(prec_to_dps(prec))
        return _accurate(mpmath.log1p, u, prec) if u.is_Float else None

    def _eval_is_extended_real(self):
        return (self.args[0] + 1).is_extended_positive


class Expm1(GradlangFunction):
    """expm1(u) = exp(u) - 1, accurate for u near 0."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_zero:
            return sp.S.Zero
        if u is sp.nan or u is sp.oo or u is -sp.oo:
            return sp.S.NegativeOne if u is -sp.oo else u  # IEEE: expm1(-inf) = -1
        if u.is_Float:
            return _accurate(mpmath.expm1, u, u._prec)
        return None

    def _eval_evalf(self, prec):
        u = self.args[0].evalf(prec_to_dps(prec))
        return _accurate(mpmath.expm1, u, prec) if u.is_Float else None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real


register(Primitive(
    "log1p", Log1p, "log(1 + u), accurate for small u", "log1p(1e-20)", build=Log1p,
    partial=unary(lambda ops, node, u: ops.reciprocal(ops.add(sp.S.One, u))),
    numpy="log1p", latex=r"\operatorname{log1p}", export=same("log1p", tf="tf.math.log1p"),
    unfold=(lambda u: sp.log(1 + u), "log1p(u) = log(1 + u)"),
))
register(Primitive(
    "expm1", Expm1, "exp(u) - 1, accurate for small u", "expm1(1e-20)", build=Expm1,
    partial=unary(lambda ops, node, u: ops.call(sp.exp, u)),
    numpy="expm1", latex=r"\operatorname{expm1}", export=same("expm1", tf="tf.math.expm1"),
    unfold=(lambda u: sp.exp(u) - 1, "expm1(u) = exp(u) - 1"),
))


# --- erf: the error function, for the exact GELU of PyTorch (nn.GELU) and JAX (jax.nn.gelu(approximate=False)) -----


def _erf_partial(ops, node, u):
    """erf'(u) = 2/sqrt(pi) * exp(-u^2)."""
    return ops.mul(_TWO / sp.sqrt(sp.pi), ops.call(sp.exp, ops.neg(ops.power(u, _TWO))))


def _numpy_erf(u):
    """erf on an array: NumPy has none, Python's math.erf is exact to the last bit of a float64."""
    return np.vectorize(math.erf, otypes=[float])(u)


register(Primitive(
    "erf", sp.erf, "the error function 2/sqrt(pi) * integral of exp(-t^2) from 0 to u", "erf(0)", build=sp.erf,
    partial=unary(_erf_partial), numpy=_numpy_erf, pure=lambda u: math.erf(float(u)),
    latex=r"\operatorname{erf}", rule="erf'(u) = 2/sqrt(pi) exp(-u^2)",
    export=same("erf", numpy=Export("_erf", "def _erf(u):\n    import math\n"
                                             "    return np.vectorize(math.erf, otypes=[float])(u)\n"),
                jax="jax.scipy.special.erf", tf="tf.math.erf"),
))
