"""F.cross_entropy and F.nll_loss as PyTorch computes them: class weights, ignore_index, label_smoothing, every
reduction, index or probability targets, logits of any rank (classes on axis 1, or axis 0 of a vector).

Both are a weighted sum of log-probabilities: loss_i = -Σ_c K[i, c] log p[i, c]. With index targets K is a
constant of the point: (1 - ε) w[y_i] at the label plus ε w_c / C at every class (label smoothing), and zero on a
row whose label is ignore_index (FixMatch, Mean Teacher's NO_LABEL). 'mean' divides by Σ_i w[y_i] over the rows
not ignored, as PyTorch's nll_loss does (its smoothing term shares that divisor). With probability targets
(a float tensor, perhaps traced: a teacher's softmax) K = w (t (1 - ε) + ε / C) and 'mean' divides by the number
of rows. The plain case (one label per row, no weights, no smoothing) is written as before: a one-hot constant.
"""

from __future__ import annotations

import numpy as np

from gradlang.frameworks import ops, torch_onehot
from gradlang.frameworks.program import TranslateError, Value, array_text, number

NONE, MEAN, SUM = 0, 1, 2  # torch's reduction codes


def cross_entropy(step):
    """aten.cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing)."""
    logits = step.tensor(0)
    axis = _class_axis(logits.shape)
    log_p = ops.along("log_softmax", logits, axis)
    return _weighted(step, log_p, axis, float(step.arg(5, "label_smoothing", 0.0) or 0.0))


def nll_loss(step):
    """aten.nll_loss / nll_loss_nd(self, target, weight, reduction, ignore_index): the log-probabilities given."""
    log_p = step.tensor(0)
    value = _weighted(step, log_p, _class_axis(log_p.shape), 0.0)
    return [value, number(0.0)] if step.is_pair else value  # nll_loss_forward: (output, total_weight)


def _class_axis(shape: tuple) -> int:
    return 0 if len(shape) == 1 else 1


def _weighted(step, log_p: Value, axis: int, smoothing: float) -> Value:
    shape, classes = log_p.shape, log_p.shape[axis]
    weight = _numbers(step, 2)
    reduction, ignored = step.arg(3, "reduction", MEAN), step.arg(4, "ignore_index", -100)
    w = np.ones(classes) if weight is None else weight.reshape(-1)
    along = [1] * len(shape)
    along[axis] = classes
    if step.is_index(1):
        labels = np.asarray(step.walker.point(step.node.args[1], step.at)).astype(np.int64)
        kept = labels != ignored
        hot = np.moveaxis(np.eye(classes)[np.where(kept, labels, 0)], -1, axis)  # (…, C) -> the class axis
        K = (1 - smoothing) * hot * w.reshape(along) + smoothing * w.reshape(along) / classes
        K = K * np.expand_dims(kept, axis)
        divisor = float(np.sum(w[labels[kept]]))
        coefficients = Value(array_text(_squeezed(K)), shape) if K.size > 1 else number(float(K.reshape(())), shape)
        if smoothing == 0 and weight is None and kept.all() and len(shape) <= 2:
            coefficients = step.one_hot(1, shape)  # the plain case as it was always written
        picked = _picked(step, axis, len(shape))
        if picked is not None and weight is None:  # a pseudo-label: the argmax of a traced value, kept as one
            coefficients = picked if smoothing == 0 else ops.binary(
                "+", ops.binary("*", picked, number(1 - smoothing), shape), number(smoothing / classes), shape)
    else:
        target = step.tensor(1)
        coefficients = target if smoothing == 0 else ops.binary(
            "+", ops.binary("*", target, number(1 - smoothing), shape), number(smoothing / classes), shape)
        if weight is not None:
            coefficients = ops.binary("*", coefficients, Value(array_text(w.tolist()), tuple(along)), shape)
        divisor = float(np.prod(shape) / classes)
    terms = ops.binary("*", log_p, coefficients, shape)
    if reduction == NONE:
        return ops.reshape(ops.negate(ops.reduce("sum", terms, (axis,))), step.shape)
    total = ops.negate(ops.reduce("sum", terms, tuple(range(len(shape)))))
    if reduction == SUM or divisor == 1:
        return total
    if reduction != MEAN:
        raise TranslateError(f"a loss with the reduction code {reduction}")
    return ops.binary("/", total, number(int(divisor) if divisor.is_integer() else divisor), ())


def _picked(step, axis: int, rank: int):
    """The one-hot of the labels when they are argmax(y) (or y.max(dim)[1]) of a traced y along the class axis
    — FixMatch's and DeiT's hard pseudo-labels, taken from a stopped teacher — written onehot(argmax(y), C):
    the same numbers at the point, and the stop y comes from stays in the loss (piecewise constant: derivative
    0), so explain's ledger has its entry."""
    found = torch_onehot.arg_source(step.node.args[1], axis, rank)
    if found is None or found[0] not in step.walker.traced:
        return None
    source, name = found
    y = step.walker.writer.bind(step.walker.env[source], 2)
    return ops.onehot_of_argmax(y, axis, step.shape_of(0), name)


def _numbers(step, i: int):
    """A constant argument's numbers (class weights), or None; a traced one cannot be a constant of the point."""
    given = step.node.args[i] if i < len(step.node.args) else step.node.kwargs.get("weight")
    if given is None:
        return None
    if given in step.walker.traced:
        raise TranslateError("class weights that depend on a parameter or an input")
    return np.asarray(step.walker.point(given, step.at), dtype=np.float64)


def _squeezed(array: np.ndarray) -> list:
    return array.reshape(tuple(d for d in array.shape if d != 1)).tolist()


def kl_div(step):
    """aten.kl_div(input, target, reduction, log_target): PyTorch's pointwise target (log target - input) — with
    log_target, exp(t) (t - x); without, xlogy(t, t) - t x, whose first term is written t * log(t) when t is
    traced and is a constant of the point (0 where t = 0, as xlogy) when it is not; then reduced ('batchmean' is
    F.kl_div's 'sum' divided by the batch, outside the operation)."""
    x, t = step.tensor(0), step.tensor(1)
    shape = step.shape_of(0)
    if step.arg(3, "log_target", False):
        value = ops.binary("*", ops.call("exp", t), ops.binary("-", t, x, shape), shape)
    else:
        traced = step.node.args[1] in step.walker.traced
        if traced:
            entropy = ops.binary("*", t, ops.call("log", t), shape)
        else:
            target = np.asarray(step.walker.point(step.node.args[1], step.at), dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                xlogy = np.where(target == 0, 0.0, target * np.log(np.where(target == 0, 1.0, target)))
            entropy = Value(array_text(_squeezed(xlogy)), shape) if xlogy.size > 1 else number(float(xlogy.reshape(())))
        value = ops.binary("-", entropy, ops.binary("*", t, x, shape), shape)
    reduction = step.arg(2, "reduction", MEAN)
    if reduction == NONE:
        return value
    total = ops.reduce("sum" if reduction == SUM else "mean", value, tuple(range(len(shape))))
    return ops.reshape(total, step.shape)


def binary_cross_entropy(step):
    """F.binary_cross_entropy(p, y, weight, reduction) of probabilities: -(y log p + (1 - y) log(1 - p)), per
    entry times the weight, then reduced (PyTorch clamps each log at -100, reached only at p = 0 or 1)."""
    p, y = step.tensor(0), step.tensor(1)
    shape = step.shape_of(0)
    one_minus = ops.binary("-", number(1.0), p, shape)
    terms = ops.binary("+", ops.binary("*", y, ops.call("log", p), shape),
                       ops.binary("*", ops.binary("-", number(1.0), y, shape), ops.call("log", one_minus), shape), shape)
    value = ops.negate(terms)
    weight = step.arg(2, "weight", None)
    if weight is not None:
        value = ops.binary("*", value, weight, shape)
    reduction = step.arg(3, "reduction", MEAN)
    if reduction == NONE:
        return value
    return ops.reshape(ops.reduce("sum" if reduction == SUM else "mean", value, tuple(range(len(shape)))), step.shape)
