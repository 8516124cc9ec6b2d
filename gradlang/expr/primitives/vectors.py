"""Primitives over all the components of a vector: logsumexp, softmax and norm.

Both are kept whole, as the user wrote them (section 6 of the language
reference): `LogSumExp(x0, ..., xn)` with gradient softmax, and the component
`Softmax(k, x0, ..., xn)` (like `MaxShare(k, ...)`) with derivative
s_k (δ_kj - s_j) by x_j. Their evaluation shifts by the maximum inside
(NumPy, evalf and float arguments alike), so logits of ±1000 stay finite and
no stop_gradient appears in what the user sees. `Norm(x0, ..., xn)`, the
Euclidean norm, has gradient x / norm(x) (Frobenius for a matrix: all its
components).

Each record also carries its rules for the tensor engine's nodes
(record.TensorRule), as a teacher states them:

    softmax     s = softmax(z) z̄ = s ⊙ (s̄ − ⟨s̄, s⟩)
    logsumexp   c = lse(z)     z̄ = c̄ softmax(z)
    norm        c = ‖u‖        ū = c̄ u/‖u‖
    softmax(M, a), logsumexp(M, a): the vector rules, row by row (or column by column)
"""

from __future__ import annotations

import functools

import sympy as sp
from mpmath.libmp import prec_to_dps

from gradlang.expr import pure_numeric
from gradlang.expr.primitives import GradlangFunction, Primitive, TensorRule, frameworks, helpers, register
from gradlang.expr.primitives.tangents import inner, linear, no_vector
from gradlang.expr.engine import broadcast, nodes as t, rank

full, spread = broadcast.full, broadcast.spread  # the engine's, imported on first use (issue #41)
from gradlang.lazy import np


def _all_floats(args) -> bool:
    """Every argument a real number and one a float: the value is a float, as NumPy would give."""
    return any(a.is_Float for a in args) and _numbers(args)


def _numbers(args) -> bool:
    return all(a.is_number and a.is_comparable for a in args)


def _shifted_exps(args) -> list:
    """exp(a_i - m) for each argument, m the largest: finite however large the arguments."""
    shift = max(args, key=lambda a: a.evalf(30))
    return shift, [sp.exp(a - shift) for a in args]


@functools.lru_cache(maxsize=8)
def _evaluated_exps(args: tuple, dps: int) -> tuple:
    """The shifted exps of a row and their sum as numbers, once per row and precision.

    The n components of softmax(v) all hold the whole row: evaluating each on
    its own computed n exponentials n times, n² in all (the check of explain's
    vector derivation of a softmax of 1000 components never ended, issue 29)."""
    _, exps = _shifted_exps(args)
    values = [e.evalf(dps) for e in exps]
    return values, sp.Add(*values).evalf(dps)


def _logsumexp_form(args):
    shift, exps = _shifted_exps(args)
    return shift + sp.log(sp.Add(*exps))


def _softmax_form(k, args):
    _, exps = _shifted_exps(args)
    return exps[int(k)] / sp.Add(*exps)


def _logsumexp_of_infinities(cls, args):
    """As jax.nn.logsumexp: nan wins, then inf; a -inf term adds nothing (exp(-inf) = 0).

    The max shift of the stable form would compute inf - inf = nan here.
    """
    if sp.nan in args:
        return sp.nan
    if sp.oo in args:
        return sp.oo
    kept = [a for a in args if a != -sp.oo]
    return cls(*kept) if kept else -sp.oo


def _softmax_of_infinities(cls, k, args):
    """As jax.nn.softmax: nan everywhere once an argument is nan or inf (inf/inf); a -inf argument has share 0."""
    kept = [a for a in args if a != -sp.oo]
    if sp.nan in args or sp.oo in args or not kept:
        return sp.nan
    if args[int(k)] == -sp.oo:
        return sp.S.Zero
    return cls(sp.Integer(int(k) - sum(a == -sp.oo for a in args[:int(k)])), *kept)


class LogSumExp(GradlangFunction):
    """logsumexp(x0, ..., xn) = log(exp(x0) + ... + exp(xn)), its gradient softmax."""

    @classmethod
    def eval(cls, *args):
        if not args:
            raise TypeError("logsumexp needs at least one argument")
        if sp.nan in args or sp.oo in args or -sp.oo in args:
            return _logsumexp_of_infinities(cls, args)
        if len(set(args)) == 1:
            return args[0] + sp.log(len(args)) if len(args) > 1 else args[0]
        if _all_floats(args):
            return _logsumexp_form(args)
        return None

    def _eval_evalf(self, prec):
        if _numbers(self.args):
            return _logsumexp_form(self.args).evalf(prec_to_dps(prec))
        return None

    def _eval_is_extended_real(self):
        return all(a.is_extended_real for a in self.args) or None

    def _eval_rewrite_as_exp(self, *args, **kwargs):
        return sp.log(sp.Add(*[sp.exp(a) for a in args]))


class Softmax(GradlangFunction):
    """Softmax(k, x0, ..., xn) = exp(x_k) / (exp(x0) + ... + exp(xn)): component k of softmax."""

    @classmethod
    def eval(cls, k, *args):
        if sp.nan in args or sp.oo in args or -sp.oo in args:
            return _softmax_of_infinities(cls, k, args)
        if len(set(args)) == 1:
            return sp.Rational(1, len(args))
        if _all_floats(args):
            return _softmax_form(k, args)
        return None

    def _eval_evalf(self, prec):
        k, *args = self.args
        if _numbers(args):
            exps, total = _evaluated_exps(tuple(args), prec_to_dps(prec))
            return (exps[int(k)] / total).evalf(prec_to_dps(prec))
        return None

    def _eval_is_extended_real(self):
        return all(a.is_extended_real for a in self.args[1:]) or None

    def _eval_rewrite_as_exp(self, k, *args, **kwargs):
        """exp(x_k) / Σ exp(x_i): the definition, so simplify can see that the components sum to 1."""
        return sp.exp(args[int(k)]) / sp.Add(*[sp.exp(a) for a in args])

    def _eval_is_positive(self):
        return self._eval_is_extended_real()


def _softmax_partial(ops, node, j):
    """d s_k / d x_i = s_k (δ_ki - s_i); the index k is not differentiated."""
    if j == 0:
        return sp.S.Zero
    k, *args = node.args
    if j - 1 == int(k):
        return ops.mul(node, ops.sub(sp.S.One, node))
    return ops.neg(ops.mul(node, ops.call(Softmax, sp.Integer(j - 1), *args)))


def _stacked(args):
    return np.stack(np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args]))


def _shifted(args):
    """The stacked arguments minus their maximum (0 where the maximum is infinite, as jax.nn does)."""
    stacked = _stacked(args)
    shift = np.max(stacked, axis=0)
    return stacked - np.where(np.isfinite(shift), shift, 0.0), np.where(np.isfinite(shift), shift, 0.0)


def _logsumexp_numpy(*args):
    shifted, shift = _shifted(args)
    return shift + np.log(np.sum(np.exp(shifted), axis=0))


def _softmax_numpy(k, *args):
    """As jax.nn.softmax, which shifts by the maximum itself: an infinite maximum (an argument
    that overflowed to inf, or every argument -inf) makes inf - inf, so every component is nan,
    as _softmax_of_infinities says for the same arguments written exactly."""
    stacked = _stacked(args)
    exps = np.exp(stacked - np.max(stacked, axis=0))
    return exps[int(k)] / np.sum(exps, axis=0)


def _logsumexp_adjoint(node, ybar, k):
    """z̄ = ȳ softmax(z); of a whole matrix (reduced to a scalar, as NumPy's) M̄ = ȳ exp(M − logsumexp(M))."""
    z = node.args[0]
    return ybar * (t.SoftmaxOf(z) if t.rank(z) == 1 else sp.exp(z - node))


def _logsumexp_axis_adjoint(node, ybar, k):
    return None if k else spread(node, ybar) * t.SoftmaxAxis(*node.args)


def _softmax_adjoint(node, ybar, k):
    ybar = full(ybar, node.shape)
    return node * (ybar - t.Dot(ybar, node))


def _softmax_axis_adjoint(node, ybar, k):
    if k:
        return None
    ybar = full(ybar, node.shape)
    return node * (ybar - spread(t.SumAxis(node.args[0], node.args[1]), t.SumAxis(ybar * node, node.args[1])))


# tangents (tangents.py): ds = s ⊙ (dz − ⟨s, dz⟩), by a vector (diag(s) − s sᵀ) J; d lse = ⟨softmax(z), dz⟩;
# d‖u‖ = ⟨u, du⟩/‖u‖; along an axis, the vector rules line by line (by a scalar only)
def _logsumexp_tangent(node, d, vector):
    if rank(node.args[0]) >= 2:  # of a whole matrix or tensor Z: Σ exp(Z − lse(Z)) ⊙ dZ
        return no_vector(lambda m, e: t.Total(sp.exp(m.args[0] - m) * e[0]))(node, d, vector)
    return inner(t.SoftmaxOf(node.args[0]), d[0], vector)


def _softmax_axis_tangent(node, d):
    """s ⊙ (ḋ − spread(Σ_axis s ⊙ ḋ)): the vector rule along each row (axis 1) or column (axis 0)."""
    total = t.SumAxis(node * d[0], node.args[1])
    return node * (d[0] - spread(t.SumAxis(node.args[0], node.args[1]), total))


_softmax_tangent = linear(lambda n, d: n * (d - t.Dot(n, d)), lambda n, d: t.MatMul(t.Diag(n) - t.Outer(n, n), d))
_logsumexp_axis_tangent = no_vector(lambda n, d: t.SumAxis(t.SoftmaxAxis(*n.args) * d[0], n.args[1]))


# definitions for explain[unfold] (explain/scalar/unfold.py): the mathematical ones, without the max shift
def _softmax_definition(k, *v):
    return sp.exp(v[int(k)]) / sp.Add(*[sp.exp(a) for a in v])


# vectorised export's rules on one whole vector (record.WholeArrays): of a matrix none, it is exported unrolled
def _logsumexp_whole(build, node, v, g):
    return build.mul(g, build.whole("softmax", v)) if len(v.shape) == 1 else None


def _softmax_whole(build, node, v, g):
    """s * (g - sum(g * s))."""
    return build.mul(node, build.sub(g, build.sum_all(build.mul(g, node)))) if len(v.shape) == 1 else None


def _norm_whole(build, node, v, g):
    return build.mul(g, build.div(v, node)) if len(v.shape) == 1 else None


# whole-array NumPy of the tensor nodes (expr/tensor/numbers.py), shifted by the maximum as the component engine's
def _softmax_vector_numpy(v):
    exps = np.exp(v - np.max(v))  # an infinite maximum gives nan everywhere, as jax.nn.softmax does
    return exps / np.sum(exps)


def _logsumexp_vector_numpy(v):
    shift = np.max(v)
    shift = shift if np.isfinite(shift) else 0.0
    return shift + np.log(np.sum(np.exp(v - shift)))


def _softmax_axis_numpy(matrix, axis):
    exps = np.exp(matrix - np.max(matrix, axis=int(axis), keepdims=True))
    return exps / np.sum(exps, axis=int(axis), keepdims=True)


def _logsumexp_axis_numpy(matrix, axis):
    shift = np.max(matrix, axis=int(axis), keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    return np.squeeze(shift, axis=int(axis)) + np.log(np.sum(np.exp(matrix - shift), axis=int(axis)))


register(Primitive(
    "logsumexp", LogSumExp, "log(sum(exp(v))), computed stably; its gradient is softmax(v)",
    "logsumexp([1, 2, 3])", build=LogSumExp, group="reduction", apply="reduction", arity=(1, 1),
    partial=lambda ops, node, k: ops.call(Softmax, sp.Integer(k), *node.args), numpy=_logsumexp_numpy,
    pure=pure_numeric.logsumexp, latex=r"\operatorname{logsumexp}", form="vector",
    rule="the gradient of logsumexp(v) is softmax(v)",
    unfold=(lambda *v: sp.log(sp.Add(*[sp.exp(a) for a in v])), "logsumexp(v) = log(sum(exp(v)))"),
    whole_adjoint=_logsumexp_whole,
    export=helpers("_logsumexp", {
        "numpy": "def _logsumexp(*args):\n    stacked = np.stack(np.broadcast_arrays(*args)).astype(float)\n"
                 "    shift = np.max(stacked, axis=0)\n    shift = np.where(np.isfinite(shift), shift, 0.0)\n"
                 "    return shift + np.log(np.sum(np.exp(stacked - shift), axis=0))\n",
        "jax": "def _logsumexp(*args):\n    return jax.nn.logsumexp(_stack(*args), axis=0)\n",
        "torch": "def _logsumexp(*args):\n    return torch.logsumexp(_stack(*args), dim=0)\n",
        "tf": "def _logsumexp(*args):\n    return tf.reduce_logsumexp(_stack(*args), axis=0)\n",
    }, whole={"numpy": "_logsumexp(*np.ravel({args}))", "jax": "jax.nn.logsumexp",
              "torch": "torch.logsumexp(torch.flatten(_t({args})), dim=0)", "tf": "tf.reduce_logsumexp"}),
    tensor=(TensorRule(t.LogSumExpOf, _logsumexp_adjoint, (
        "logsumexp: z̄ = ȳ softmax(z) (of a matrix Z: ȳ exp(Z − logsumexp(Z)))",
        r"\bar{z} = \bar{y} \operatorname{softmax}(z)"), _logsumexp_tangent, numpy=_logsumexp_vector_numpy,
                       export=frameworks("jax.nn.logsumexp({0})", "torch.logsumexp({0}, dim=0)", "tf.reduce_logsumexp({0})")),
            TensorRule(t.LogSumExpAxis, _logsumexp_axis_adjoint, (
                "logsumexp along an axis: M̄ = ȳ 𝟙ᵀ ⊙ softmax(M)",
                r"\bar{M} = \bar{y} \mathbf{1}^{\top} \odot \operatorname{softmax}(M)"), _logsumexp_axis_tangent,
                numpy=_logsumexp_axis_numpy, export=frameworks(
                    "jax.nn.logsumexp({0}, axis={i1})", "torch.logsumexp({0}, dim={i1})",
                    "tf.reduce_logsumexp({0}, axis={i1})"))),
))
register(Primitive(
    "softmax", Softmax, "exp(v) / sum(exp(v)), computed stably; rows of a matrix", "softmax([1, 2, 3])",
    build=lambda *args: [Softmax(sp.Integer(k), *args) for k in range(len(args))], group="vector", apply="rows",
    partial=_softmax_partial, numpy=_softmax_numpy, pure=pure_numeric.softmax, latex=r"\operatorname{softmax}",
    form="component",
    rule="with s = softmax(v), d s[k] / d v[j] = s[k]*(1 - s[j]) if j = k, else -s[k]*s[j]",
    unfold=(_softmax_definition, "softmax(v)[k] = exp(v[k]) / sum(exp(v))"), whole_adjoint=_softmax_whole,
    export=helpers("_softmax", {
        "numpy": "def _softmax(k, *args):\n    return _softmax_last(np.moveaxis(_stack(*args), 0, -1))[..., k]\n\n\n"
                 "def _softmax_last(v):\n    exps = np.exp(v - np.max(v, axis=-1, keepdims=True))\n"
                 "    return exps / np.sum(exps, axis=-1, keepdims=True)\n",
        "jax": "def _softmax(k, *args):\n    return jax.nn.softmax(_stack(*args), axis=0)[k]\n",
        "torch": "def _softmax(k, *args):\n    return torch.softmax(_stack(*args), dim=0)[k]\n",
        "tf": "def _softmax(k, *args):\n    return tf.nn.softmax(_stack(*args), axis=0)[k]\n",
    }, whole={"numpy": "_softmax_last", "jax": "jax.nn.softmax({args}, axis=-1)",
              "torch": "torch.softmax(_t({args}), dim=-1)", "tf": "tf.nn.softmax({args}, axis=-1)"}),
    tensor=(TensorRule(t.SoftmaxOf, _softmax_adjoint, (
        "softmax: z̄ = s ⊙ (s̄ − ⟨s̄, s⟩)", r"\bar{z} = s \odot (\bar{s} - \langle \bar{s}, s \rangle)"), _softmax_tangent,
                       numpy=_softmax_vector_numpy,
                       export=frameworks("jax.nn.softmax({0})", "torch.softmax({0}, dim=0)", "tf.nn.softmax({0})")),
            TensorRule(t.SoftmaxAxis, _softmax_axis_adjoint, ("softmax along an axis, row by row", r"\text{row by row}"),
                       no_vector(_softmax_axis_tangent), numpy=_softmax_axis_numpy, export=frameworks(
                           "jax.nn.softmax({0}, axis={i1})", "torch.softmax({0}, dim={i1})", "tf.nn.softmax({0}, axis={i1})"))),
))


class Norm(GradlangFunction):
    """norm(x0, ..., xn) = sqrt(x0^2 + ... + xn^2), kept whole: its gradient is x / norm(x)."""

    @classmethod
    def eval(cls, *args):
        if not args:
            raise TypeError("norm needs at least one argument")
        if len(args) == 1:
            return sp.Abs(args[0])
        if all(a.is_number for a in args):
            return sp.sqrt(sp.Add(*[a**2 for a in args]))
        return None

    def _eval_rewrite_as_sqrt(self, *args, **kwargs):
        return sp.sqrt(sp.Add(*[a**2 for a in args]))

    def _eval_is_extended_real(self):
        return all(a.is_extended_real for a in self.args) or None

    def _eval_is_nonnegative(self):
        return self._eval_is_extended_real()


register(Primitive(
    "norm", Norm, "Euclidean norm (Frobenius for a matrix); its gradient is v / norm(v)", "norm([3, 4])",
    build=Norm, group="reduction", apply="reduction", arity=(1, 1),
    partial=lambda ops, node, k: ops.mul(node.args[k], ops.reciprocal(node)),
    numpy=lambda *args: np.sqrt(np.sum(_stacked(args) ** 2, axis=0)), pure=pure_numeric.norm,
    latex=r"\operatorname{norm}", form="vector",
    rule="the gradient of norm(v) is v/norm(v)",
    unfold=(lambda *v: sp.sqrt(sp.Add(*[a ** 2 for a in v])), "norm(v) = sqrt(sum(v^2))"), whole_adjoint=_norm_whole,
    export=helpers("_norm", {
        "numpy": "def _norm(*args):\n    return np.sqrt(np.sum(_stack(*args) ** 2, axis=0))\n",
        "jax": "def _norm(*args):\n    return jnp.linalg.norm(_stack(*args), axis=0)\n",
        "torch": "def _norm(*args):\n    return torch.linalg.vector_norm(_stack(*args), dim=0)\n",
        "tf": "def _norm(*args):\n    return tf.norm(_stack(*args), axis=0)\n",
    }, whole={"numpy": "_norm(*np.ravel({args}))", "jax": "jnp.linalg.norm(jnp.ravel({args}))",
              "torch": "torch.linalg.vector_norm(_t({args}))", "tf": "tf.norm"}),
    tensor=(TensorRule(t.NormOf, lambda node, ybar, k: ybar * node.args[0] / node,
                       ("norm: ū = ȳ u/‖u‖", r"\bar{u} = \bar{y} u / \|u\|"),
                       lambda node, d, vector: inner(node.args[0], d[0], vector) / node,
                       export=frameworks("jnp.linalg.norm({0})", "torch.linalg.vector_norm({0})", "tf.norm({0})")),),
))
