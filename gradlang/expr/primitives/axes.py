"""The records of the nodes of axes at any rank (expr/tensor/axes.py): one adjoint rule each, as a teacher
states them (the stretched axes of a broadcast are where its adjoint sums):

    broadcast_to  Y = u stretched to a shape   ū = Σ over the stretched axes of Ȳ (size-1 axes kept)
    sum(X, axes)  y = Σ_axes X                  X̄ = ȳ put back on the axes, stretched
    max(X, axes)  y = max_axes X                X̄ = ȳ stretched ⊙ (ties in each group share equally)
    softmax(X, axes)  S = exp(X)/Σ_axes exp(X)  X̄ = S ⊙ (S̄ − Σ_axes S̄ ⊙ S stretched)
    logsumexp(X, axes)  y = log Σ_axes exp(X)   X̄ = ȳ stretched ⊙ softmax(X, axes)
    expand_dims   Y = X with new axes of 1     X̄ = squeeze(Ȳ)
    squeeze       Y = X without axes of 1      X̄ = expand_dims(Ȳ)
    transpose     Y = X with axes permuted     X̄ = Ȳ with the inverse permutation
    X[i], X[:, j] Y = the slice at i of an axis  X̄ = Ȳ put back on the axis ⊙ e_i along it

The shares of max and argmax/argmin along an axis are constants to differentiation.
"""

from __future__ import annotations

from gradlang.expr.primitives import TensorOperation, TensorRule, frameworks, register_operation
from gradlang.expr.primitives.tangents import no_vector
from gradlang.expr.engine import axes, broadcast, nodes, rank, shape_of

# The engine's, imported on first use: the records are made at start-up, the engine is not (issue #41).
ArgMaxAlong, ArgMinAlong, BroadcastTo, ExpandDims, MaxAlong, MaxSharesAlong, Permute, Pick, Squeeze, SumAlong = axes.names(
    "ArgMaxAlong", "ArgMinAlong", "BroadcastTo", "ExpandDims", "MaxAlong", "MaxSharesAlong", "Permute", "Pick", "Squeeze",
    "SumAlong")
SoftmaxAlong, LogSumExpAlong = axes.names("SoftmaxAlong", "LogSumExpAlong")
sum_over, tuple_text, full, OneHot = axes.sum_over, axes.tuple_text, broadcast.full, nodes.OneHot
from gradlang.lazy import np


def _tensor(ybar, node):
    """The adjoint with the node's shape made explicit (a scalar ȳ stands for ȳ 𝟙)."""
    return full(ybar, node.shape)


def _put_back(ybar, node):
    """ȳ of a reduction over node.axes, back on the argument's shape: a new axis of 1 at each, stretched."""
    return BroadcastTo(ExpandDims(_tensor(ybar, node), *node.axes), *shape_of(node.args[0]))


def _broadcast(node, ybar, k):
    if k:
        return None
    stretched = node.stretched()
    lead = len(node.shape) - rank(node.args[0])
    summed = sum_over(_tensor(ybar, node), stretched)
    kept = [a - lead for a in stretched if a >= lead]  # u's own axes of size 1: summed, then given back
    return ExpandDims(summed, *kept) if kept else summed


def _pick(node, ybar, k):
    """X[i] along an axis: Ȳ stretched back along the axis, times e_i laid along it (zeros off index i)."""
    if k:
        return None
    u, axis, index = node.args
    shape, axis = shape_of(u), int(axis)
    others = [a for a in range(len(shape)) if a != axis]
    along = BroadcastTo(ExpandDims(OneHot(index, shape[axis]), *others), *shape)
    return BroadcastTo(ExpandDims(_tensor(ybar, node), axis), *shape) * along


def _sum(node, ybar, k):
    return None if k else ybar if rank(ybar) == 0 else _put_back(ybar, node)


def _max(node, ybar, k):
    if k:
        return None
    return (ybar if rank(ybar) == 0 else _put_back(ybar, node)) * MaxSharesAlong(*node.args)


def _softmax(node, ybar, k):
    """S = softmax(X, axes): X̄ = S ⊙ (S̄ − Σ_axes S̄ ⊙ S put back), the vector rule in each group."""
    if k:
        return None
    ybar = _tensor(ybar, node)
    return node * (ybar - BroadcastTo(ExpandDims(SumAlong(ybar * node, *node.axes), *node.axes), *node.shape))


def _logsumexp(node, ybar, k):
    return None if k else (ybar if rank(ybar) == 0 else _put_back(ybar, node)) * SoftmaxAlong(*node.args)


def _softmax_tangent(node, d):
    """Ṡ = S ⊙ (Ẋ − Σ_axes S ⊙ Ẋ put back)."""
    if d[0] == 0:
        return 0
    dot = full(d[0], node.shape)
    return node * (dot - BroadcastTo(ExpandDims(SumAlong(node * dot, *node.axes), *node.axes), *node.shape))


def _logsumexp_tangent(node, d):
    return SumAlong(SoftmaxAlong(*node.args) * full(d[0], shape_of(node.args[0])), *node.args[1:]) if d[0] != 0 else 0


def _softmax_along(u, axes):
    """softmax over the axes by whole-array NumPy, shifted by each group's maximum (as jax.nn.softmax)."""
    axes = tuple(int(a) for a in np.atleast_1d(axes))
    exps = np.exp(u - np.max(u, axis=axes, keepdims=True))
    return exps / np.sum(exps, axis=axes, keepdims=True)


def _logsumexp_along(u, axes):
    """log Σ exp over the axes by whole-array NumPy, shifted by each group's maximum (as jax.nn.logsumexp)."""
    axes = tuple(int(a) for a in np.atleast_1d(axes))
    top = np.max(u, axis=axes, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.squeeze(top, axis=axes) + np.log(np.sum(np.exp(u - top), axis=axes))


def _reshaped(inverse):
    """The adjoint of a node that only moves entries: the same move backwards (a scalar ȳ stays ȳ 𝟙)."""
    return lambda node, ybar, k: None if k else ybar if rank(ybar) == 0 else inverse(_tensor(ybar, node), node)


def _inverse(perm: tuple) -> tuple:
    return tuple(sorted(range(len(perm)), key=lambda k: perm[k]))


def _tangent(build):
    """A linear node's tangent by a scalar: the node applied to its argument's tangent."""
    return no_vector(lambda node, d: build(full(d[0], shape_of(node.args[0])), *node.args[1:]) if d[0] != 0 else 0)


def _max_tangent(node, d):
    return SumAlong(MaxSharesAlong(*node.args) * full(d[0], shape_of(node.args[0])), *node.args[1:]) if d[0] != 0 else 0


def _max_shares_along(u, axes):
    """The shares of max over axes by whole-array NumPy: 1/t on each of a group's t tied entries."""
    axes = tuple(int(a) for a in np.atleast_1d(axes))
    tied = u == np.max(u, axis=axes, keepdims=True)
    return np.where(tied, 1.0 / np.maximum(np.sum(tied, axis=axes, keepdims=True), 1), 0.0)


def _axes(node) -> str:
    return tuple_text([str(a) for a in node.axes])


def _listed(node) -> str:
    return "[" + ", ".join(str(a) for a in node.axes) + "]"


def _shape_fields(node) -> str:
    return tuple_text([f"{{{k}}}" for k in range(1, len(node.args))])


def _unsqueezed(name: str, keyword: str = ""):
    """One new axis at a time, in increasing order (torch.unsqueeze and tf.expand_dims take one)."""
    def spelled(node) -> str:
        text = "{0}"
        for axis in node.axes:
            text = f"{name}({text}, {keyword}{axis})"
        return text

    return spelled


def _spelled(template: str, axes=_axes):
    return lambda node: template.replace("AXES", axes(node))


register_operation(TensorOperation("broadcast_to", (
    TensorRule(BroadcastTo, _broadcast, ("broadcast_to: ū = Σ of Ȳ over the stretched axes",
                                         r"\bar{u} = \textstyle\sum_{\text{stretched}} \bar{Y}"), _tangent(BroadcastTo),
               export=frameworks(*(lambda node, f=f: f"{f}({{0}}, {_shape_fields(node)})"
                                   for f in ("jnp.broadcast_to", "torch.broadcast_to", "tf.broadcast_to")))),)))
register_operation(TensorOperation("sum_along", (
    TensorRule(SumAlong, _sum, ("sum over axes: X̄ = ȳ put back on the axes", r"\bar{X} = \bar{y} \mathbf{1}"),
               _tangent(SumAlong),
               export=frameworks(_spelled("jnp.sum({0}, axis=AXES)"), _spelled("torch.sum({0}, dim=AXES)"),
                                 _spelled("tf.reduce_sum({0}, axis=AXES)", _listed))),)))
register_operation(TensorOperation("max_along", (
    TensorRule(MaxAlong, _max, ("max over axes: X̄ = ȳ put back ⊙ (ties in each group share equally)",
                                r"\bar{X} = \bar{y} \mathbf{1} \odot \text{(ties share equally)}"),
               no_vector(_max_tangent),
               export=frameworks(_spelled("jnp.max({0}, axis=AXES)"), _spelled("torch.amax({0}, dim=AXES)"),
                                 _spelled("tf.reduce_max({0}, axis=AXES)", _listed))),
    TensorRule(MaxSharesAlong, constant=True, numpy=_max_shares_along,
               export=frameworks(*[_spelled("_gl_max_shares({0}, AXES)")] * 3)))))  # its helper: max's record
register_operation(TensorOperation("softmax_along", (
    TensorRule(SoftmaxAlong, _softmax, ("softmax over axes: z̄ = s ⊙ (s̄ − Σ_axes s̄ ⊙ s)",
                                        r"\bar{z} = s \odot (\bar{s} - \textstyle\sum_{\text{axes}} \bar{s} \odot s)"),
               no_vector(_softmax_tangent), numpy=_softmax_along,
               export=frameworks(_spelled("jax.nn.softmax({0}, axis=AXES)"),
                                 _spelled("torch.exp({0} - torch.logsumexp({0}, dim=AXES, keepdim=True))"),
                                 _spelled("tf.exp({0} - tf.reduce_logsumexp({0}, axis=AXES, keepdims=True))",
                                          _listed))),)))
register_operation(TensorOperation("logsumexp_along", (
    TensorRule(LogSumExpAlong, _logsumexp, ("logsumexp over axes: z̄ = ȳ put back ⊙ softmax(z, axes)",
                                            r"\bar{z} = \bar{y} \mathbf{1} \odot \operatorname{softmax}(z)"),
               no_vector(_logsumexp_tangent), numpy=_logsumexp_along,
               export=frameworks(_spelled("jax.nn.logsumexp({0}, axis=AXES)"), _spelled("torch.logsumexp({0}, dim=AXES)"),
                                 _spelled("tf.reduce_logsumexp({0}, axis=AXES)", _listed))),)))
register_operation(TensorOperation("expand_dims", (
    TensorRule(ExpandDims, _reshaped(lambda y, node: Squeeze(y, *node.axes)), ("expand_dims: X̄ = squeeze(Ȳ)",
               r"\bar{X} = \operatorname{squeeze}(\bar{Y})"), _tangent(ExpandDims),
               export=frameworks(_spelled("jnp.expand_dims({0}, AXES)"), _unsqueezed("torch.unsqueeze"),
                                 _unsqueezed("tf.expand_dims", "axis="))),)))
register_operation(TensorOperation("squeeze", (
    TensorRule(Squeeze, _reshaped(lambda y, node: ExpandDims(y, *node.axes)), ("squeeze: X̄ = expand_dims(Ȳ)",
               r"\bar{X} = \operatorname{expand}(\bar{Y})"), _tangent(Squeeze),
               export=frameworks(_spelled("jnp.squeeze({0}, axis=AXES)"), _spelled("torch.squeeze({0}, dim=AXES)"),
                                 _spelled("tf.squeeze({0}, axis=AXES)", _listed))),)))
register_operation(TensorOperation("permute", (
    TensorRule(Permute, _reshaped(lambda y, node: Permute(y, *_inverse(node.axes))),
               ("transpose: X̄ = Ȳ with the inverse permutation", r"\bar{X} = \bar{Y}^{\sigma^{-1}}"), _tangent(Permute),
               export=frameworks(_spelled("jnp.transpose({0}, AXES)"), _spelled("torch.permute({0}, AXES)"),
                                 _spelled("tf.transpose({0}, perm=AXES)", _listed))),)))
register_operation(TensorOperation("pick", (
    TensorRule(Pick, _pick, ("index along an axis: X̄ = Ȳ put back ⊙ e_i along the axis",
                             r"\bar{X} = \bar{Y} \otimes_{\text{axis}} e_i"),
               no_vector(lambda node, d: Pick(full(d[0], shape_of(node.args[0])), *node.args[1:]) if d[0] != 0 else 0),
               export=frameworks("jnp.take({0}, {2}, axis={i1})", "torch.select({0}, {i1}, {2})",
                                 "tf.gather({0}, {2}, axis={i1})")),)))
register_operation(TensorOperation("arg_along", (
    # TensorFlow adds no int64 to a float64: its indices are cast, as JAX and PyTorch promote them
    TensorRule(ArgMaxAlong, constant=True, export=frameworks(
        "jnp.argmax({0}, axis={i1})", "torch.argmax({0}, dim={i1})", "tf.cast(tf.argmax({0}, axis={i1}), tf.float64)")),
    TensorRule(ArgMinAlong, constant=True, export=frameworks(
        "jnp.argmin({0}, axis={i1})", "torch.argmin({0}, dim={i1})", "tf.cast(tf.argmin({0}, axis={i1}), tf.float64)")))))
