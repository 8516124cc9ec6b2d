"""One rule per ATen operation (its name without the overload): the node's arguments -> a gradlang Value.

A rule is `rule(step)`; `step.arg(i, name, default)` is the argument as a
Value (a tensor, or a number made a constant) or as the plain Python value
(an axis, a flag), and `step.shape` the output's shape. The high-level
operations torch.export keeps without decompositions map to gradlang's own
builtins (linear to @, cross_entropy to log_softmax, mse_loss to a mean of
squares, smooth_l1_loss to huber, cosine_similarity to cosine), so the
program reads as the model was written. aten.detach and no_grad regions are
the tracer's (trace_torch.py), not rules.
"""

from __future__ import annotations

import numpy as np

from gradlang.frameworks import norms, ops, torch_activations, torch_joins, torch_losses, torch_onehot, torch_tensors
from gradlang.frameworks.program import TranslateError, Value, fill, number

MEAN, SUM = 1, 2  # torch's reduction codes (0 is none)


def _binary(op: str, flipped: bool = False):
    def rule(step):
        a, b = step.tensor(0), step.tensor(1)
        alpha = step.arg(2, "alpha", 1)
        if alpha != 1:
            b = ops.binary("*", number(alpha), b, b.shape)
        return ops.binary(op, b, a, step.shape) if flipped else ops.binary(op, a, b, step.shape)
    return rule


def _call(name: str):
    return lambda step: ops.call(name, step.tensor(0))


def _axes(step, index: int, rank: int) -> tuple:
    dims = step.arg(index, "dim", None)
    if dims is None or dims == []:
        return tuple(range(rank))
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return tuple(d % rank for d in dims)


def _reduce(name: str):
    def rule(step):
        a = step.tensor(0)
        if len(step.node.args) > 1 and isinstance(step.arg(1, "other", None), Value):
            return ops.extremum(name, a, step.tensor(1), step.shape)  # max.other / min.other: elementwise
        value = ops.reduce(name, a, _axes(step, 1, len(a.shape)))
        if step.is_pair:  # max.dim, min.dim: (values, indices), the indices fixed at the traced point
            return [ops.reshape(value, step.shapes[0]), step.constant(1)]
        return ops.reshape(value, step.shape)
    return rule


def _along(name: str):
    return lambda step: ops.along(name, step.tensor(0), step.arg(1, "dim", -1))


def _same(step):
    return ops.reshape(step.tensor(0), step.shape)


def _to(step):
    """to / _to_copy: a copy, and a float cast kept as float32(…) (.float(), .to(torch.float32))."""
    value = _same(step)
    dtype = step.node.kwargs.get("dtype") or next((a for a in step.node.args[1:] if "float" in str(a)), None)
    source = str(step.walker.point(step.node.args[0], step.at).dtype)
    return value if dtype is None else ops.cast(value, source.replace("torch.", ""), str(dtype).replace("torch.", ""))


def _expand(step):
    return _broadcast_to(step.tensor(0), step.shape)


def _broadcast_to(a: Value, shape: tuple) -> Value:
    aligned = (1,) * (len(shape) - len(a.shape)) + tuple(a.shape)
    return ops.broadcast(Value(a.text, aligned, a.prec, a.scalar, number=a.number), shape, tuple(range(len(shape))))


def _broadcast_tensors(step):
    values = step.arg(0, "tensors", [])
    return [_broadcast_to(v, shape) for v, shape in zip(values, step.shapes)]


def _pow(step):
    base, exponent = step.arg(0, "self", None), step.arg(1, "exponent", None)
    base = base if isinstance(base, Value) else number(base)
    exponent = exponent if isinstance(exponent, Value) else Value(_exponent(exponent), ())
    return ops.power(base, exponent, step.shape)


def _exponent(p) -> str:
    return str(int(p)) if float(p).is_integer() else repr(float(p))


def _linear(step):
    x, weight, bias = step.tensor(0), step.tensor(1), step.arg(2, "bias", None)
    if x.shape[-1] == 1:  # nn.Linear(1, n) (a time embedding): no sum, each input times the weight's column
        out = ops.binary("*", x, Value(weight.text, (1, weight.shape[0]), weight.prec, weight.scalar), step.shape)
    else:
        out = ops.contract(x, weight, (len(x.shape) - 1,), (1,), step.shape)
    return out if bias is None else ops.binary("+", out, bias, step.shape)


def _matmul(step):
    a, b = step.tensor(0), step.tensor(1)
    return ops.contract(a, b, (len(a.shape) - 1,), (0,), step.shape)


def _transpose(step):
    a = step.tensor(0)
    rank = len(a.shape)
    d0, d1 = (step.arg(1, "dim0", 0) % rank, step.arg(2, "dim1", 1) % rank) if rank > 1 else (0, 0)
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ops.permute(a, tuple(perm))


def _permute(step):
    return ops.permute(step.tensor(0), tuple(d % len(step.tensor(0).shape) for d in step.arg(1, "dims", [])))


def _select(step):
    a = step.tensor(0)
    axis, i = step.arg(1, "dim", 0) % len(a.shape), _integer(step.arg(2, "index", 0))
    return ops.index(a, axis, i % a.shape[axis], step.shape)


def _integer(value) -> int:
    return int(value.number) if isinstance(value, Value) else int(value)


def _slice(step):
    a = step.tensor(0)
    axis = step.arg(1, "dim", 0) % len(a.shape)
    start, end = step.arg(2, "start", None) or 0, step.arg(3, "end", None)
    end = a.shape[axis] if end is None or end > a.shape[axis] else end
    if (start, end) == (0, a.shape[axis]):
        return ops.reshape(a, step.shape)
    if end - start == 1 and step.arg(4, "step", 1) == 1:
        return ops.reshape(ops.index(a, axis, start, step.shape), step.shape)
    return _gather(step)


def _gather(step):
    """index, gather, index_select, embedding, a wider slice: the positions read, found by running it on labels."""
    return ops.picked(step.tensor(0), step.labelled(), step.shape)


def _compare(op: str):
    return lambda step: ops.compare(op, step.tensor(0), step.tensor(1), step.shape)


def _where(step):
    """torch.where(c, a, b); a condition comparing traced values is written as that comparison."""
    condition = step.walker.conditions.get(step.node.args[0]) or step.tensor(0)
    return ops.where(condition, step.tensor(1), step.tensor(2), step.shape)


def _extremum(name: str):
    return lambda step: ops.extremum(name, step.tensor(0), step.tensor(1), step.shape)


def _clamp(step):
    value, low, high = step.tensor(0), step.arg(1, "min", None), step.arg(2, "max", None)
    low, high = (None if _unbounded(b, sign) else b for b, sign in ((low, -1), (high, 1)))
    if high is not None:
        value = _bounded(step, value, high, "min", 2)
    if low is not None:
        value = _bounded(step, value, low, "max", 1)
    return value


def _unbounded(bound, sign: int) -> bool:
    """A bound that bounds nothing: clamp(x, -inf, inf) (CQL's cql_clip_diff_min/max) is x on that side."""
    return isinstance(bound, (int, float)) and bound == sign * float("inf")


def _bounded(step, value: Value, bound, name: str, i: int) -> Value:
    """clamp's max(x, lo) / min(x, hi); where x meets its bound at the traced point, `where(x >= lo, x, lo)`:
    PyTorch gives the whole gradient to x there, gradlang's max shares a tie (docs/decisions.md)."""
    bound = bound if isinstance(bound, Value) else number(bound)
    given = step.node.args[i] if i < len(step.node.args) else step.node.kwargs.get("max" if i == 2 else "min")
    x, c = (np.asarray(step.walker.point(a, step.at), dtype=np.float64) for a in (step.node.args[0], given))
    if not np.any(x == c):
        return _at_least(value, bound, step.shape) if name == "max" else ops.extremum(name, value, bound, step.shape)
    kept = ops.compare(">=" if name == "max" else "<=", value, bound, step.shape)
    return ops.where(kept, value, bound, step.shape)


def _at_least(value: Value, low: Value, shape: tuple) -> Value:
    """max(value, low); a norm clamped at eps > 0 (F.normalize's denominator) as sqrt(max(‖v‖², eps²)).

    Both are max(‖v‖, eps), but PyTorch's norm has derivative 0 at v = 0, where gradlang's norm(v) has v/‖v‖ =
    0/0: written with the norm, an all-zero row would get a NaN gradient where PyTorch's is finite (1/eps)."""
    if value.root is not None and low.number is not None and low.number > 0:
        squared = ops.extremum("max", value.root, number(low.number ** 2), value.root.shape)
        return ops.reshape(ops.call("sqrt", squared), shape)
    return ops.extremum("max", value, low, shape)


def _reduced(value: Value, reduction: int) -> Value:
    if reduction == SUM:
        return ops.reduce("sum", value, tuple(range(len(value.shape))))
    if reduction == MEAN:
        return ops.reduce("mean", value, tuple(range(len(value.shape))))
    return value


def _mse(step):
    d = ops.binary("-", step.tensor(0), step.tensor(1), step.shape_of(0))
    return _reduced(ops.power(d, Value("2", ()), d.shape), step.arg(2, "reduction", MEAN))


def _huber(delta_name: str, scaled: bool):
    def rule(step):
        d = ops.binary("-", step.tensor(0), step.tensor(1), step.shape_of(0))
        delta = float(step.arg(3, delta_name, 1.0))
        value = ops.call("huber", d, repr(delta))
        if scaled:  # smooth_l1_loss is huber / beta
            value = ops.binary("/", value, number(delta), value.shape)
        return _reduced(value, step.arg(2, "reduction", MEAN))
    return rule


def _cosine(step):
    a, b = step.tensor(0), step.tensor(1)
    axis = step.arg(2, "dim", 1) % len(a.shape)
    if len(a.sizes) == 1:
        return Value(f"cosine({fill(a).text}, {fill(b).text})", step.shape)
    dot = ops.reduce("sum", ops.binary("*", a, b, a.shape), (axis,))
    norms = [ops.call("sqrt", ops.reduce("sum", ops.binary("*", v, v, v.shape), (axis,))) for v in (a, b)]
    return ops.binary("/", dot, ops.binary("*", *norms, step.shape), step.shape)


def _bce_logits(step):
    """binary_cross_entropy_with_logits: softplus(x) - x y, elementwise, then reduced."""
    if step.arg(2, "weight", None) is not None or step.arg(3, "pos_weight", None) is not None:
        raise TranslateError("binary_cross_entropy_with_logits with weights")
    x, y = step.tensor(0), step.tensor(1)
    value = ops.binary("-", ops.call("softplus", x), ops.binary("*", x, y, x.shape), x.shape)
    return _reduced(value, step.arg(4, "reduction", MEAN))


def _l1(step):
    d = ops.binary("-", step.tensor(0), step.tensor(1), step.shape_of(0))
    return _reduced(ops.call("abs", d), step.arg(2, "reduction", MEAN))


def _logsumexp(step):
    a = step.tensor(0)
    return ops.reshape(ops.reduce("logsumexp", a, _axes(step, 1, len(a.shape))), step.shape)


def _norm(step):
    """linalg_vector_norm (Euclidean): norm(v), or sqrt(sum(v * v, axis)) along one axis; it keeps its sum of
    squares (`root`) for a clamp that follows (F.normalize)."""
    a = step.tensor(0)
    if step.arg(1, "ord", 2) != 2:
        raise TranslateError("a vector norm other than the Euclidean one")
    axes = _axes(step, 2, len(a.shape))
    if not np.all(np.asarray(step.at[step.node], dtype=np.float64)):  # a zero vector: a NaN gradient unless clamped
        from gradlang.frameworks.torch_lines import where

        step.walker.writer.suspects.append(("the norm of a zero vector (PyTorch's gradient there is 0, gradlang's "
                                            "norm(v)'s is v/‖v‖ = NaN; F.normalize's eps avoids it)", where(step.node)))
    squares = ops.reshape(ops.reduce("sum", ops.binary("*", a, a, a.shape), axes), step.shape)
    if len(axes) == len(a.shape) or len(a.sizes) <= 1:
        value = ops.reshape(Value(f"norm({fill(a).text})", ()), step.shape)
    else:
        value = ops.call("sqrt", squares)
    return Value(value.text, value.shape, value.prec, value.scalar, root=squares)


def _batch_norm(step):
    """batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, …)."""
    running = (step.arg(3, "running_mean", None), step.arg(4, "running_var", None))
    training = bool(step.arg(5, "training", False)) or None in running  # no running statistics: the batch's
    return norms.batch_norm(step.walker.writer, step.tensor(0), step.arg(1, "weight", None), step.arg(2, "bias", None),
                            running, training, float(step.arg(7, "eps", 1e-5)))


def _gelu(step):
    """nn.GELU: x * Φ(x) = 0.5 x (1 + erf(x / sqrt(2))), or its tanh approximation (approximate='tanh')."""
    x = step.walker.writer.bind(step.tensor(0), 2)
    if step.arg(1, "approximate", "none") == "tanh":
        inner = f"0.7978845608028654 * ({x.text} + 0.044715 * {x.text}^3)"  # sqrt(2/pi), as PyTorch's kernel
        return Value(f"0.5 * {x.text} * (1.0 + tanh({inner}))", step.shape, ops.PRODUCT)
    return Value(f"0.5 * {x.text} * (1.0 + erf({x.text} * 0.7071067811865476))", step.shape, ops.PRODUCT)


def _silu(step):
    """nn.SiLU: x * sigmoid(x)."""
    x = step.walker.writer.bind(step.tensor(0), 2)
    return Value(f"{x.text} * sigmoid({x.text})", step.shape, ops.PRODUCT)


def _diag(step):
    """torch.diag of a vector (its diagonal matrix) or of a matrix (its diagonal), and aten.diagonal of a matrix:
    gradlang's diag(…), main diagonal only."""
    a = step.tensor(0)
    offset = step.arg(1, "offset" if _name_of(step) == "diagonal" else "diagonal", 0)
    if offset or len(a.shape) > 2 or (_name_of(step) == "diagonal" and len(a.shape) != 2):
        raise TranslateError("a diagonal other than the main diagonal of a vector or a matrix")
    return Value(f"diag({fill(a).text})", step.shape)


def _solve_triangular(step):
    """linalg_solve_triangular(A, B, upper, left, unitriangular) of one square A (a MultivariateNormal's
    scale_tril, batched by axes of length 1 only): inv(A) @ B, or B @ inv(A) when left=False; the triangle is
    A's, as the caller guarantees."""
    a, b = step.tensor(0), step.tensor(1)
    batch = [*a.shape[:-2], *b.shape[:-2]]
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2] or any(d != 1 for d in batch) or \
            step.node.kwargs.get("unitriangular", False):
        raise TranslateError("a triangular solve other than of one square matrix with its own diagonal")
    inverse = Value(f"inv({fill(a).text})", a.shape)
    if step.node.kwargs.get("left", True):
        return ops.contract(inverse, b, (len(a.shape) - 1,), (len(b.shape) - 2,), step.shape)
    return ops.contract(b, inverse, (len(b.shape) - 1,), (len(a.shape) - 2,), step.shape)


def _index_add(step):
    """index_add(self, dim, index, source, alpha) with the index a constant of the point (Rainbow's projection
    m.view(-1).index_add_(0, l + offset, …)): self + P source along dim, P[i, k] = 1 where index[k] = i — the
    scatter-add as a product with a constant 0/1 matrix, so its adjoint is Pᵀ (the gather of the positions)."""
    base, source = step.tensor(0), step.tensor(3)
    dim = step.arg(1, "dim", 0) % max(len(step.shape), 1)
    if step.node.args[2] in step.walker.traced:
        raise TranslateError("an index_add whose positions depend on a parameter or an input")
    index = np.asarray(step.walker.point(step.node.args[2], step.at)).reshape(-1).astype(np.int64)
    alpha = step.arg(4, "alpha", 1)
    spread = np.zeros((step.shape[dim], len(index)))
    spread[index % step.shape[dim], np.arange(len(index))] += float(alpha)
    added = torch_tensors.along_matrix(source, spread, dim, step.shape)
    zero = not np.any(np.asarray(step.walker.before if step.walker.before is not None else
                                 step.walker.point(step.node.args[0], step.at), dtype=np.float64))
    return added if zero and step.node.args[0] not in step.walker.traced else ops.binary("+", base, added, step.shape)


def _name_of(step) -> str:
    return str(step.node.target).split(".")[1]


def _spread_of(root: bool):
    """var / std (aten.var.correction, std.correction): the centred squares summed over the axes, divided by
    N - correction (Bessel's 1 unless given), the square root taken for std."""
    def rule(step):
        a = step.tensor(0)
        axes = _axes(step, 1, len(a.shape))
        correction = step.node.kwargs.get("correction", 1)
        count = int(np.prod([a.shape[i] for i in axes])) - (1 if correction is None else correction)
        mean = norms.kept(ops.reduce("mean", a, axes), a.shape, axes)
        centred = step.walker.writer.bind(ops.binary("-", a, mean, a.shape), 2)
        squares = ops.reduce("sum", ops.binary("*", centred, centred, a.shape), axes)
        value = ops.binary("/", squares, number(float(count)), squares.shape)
        return ops.reshape(ops.call("sqrt", value) if root else value, step.shape)
    return rule


def _layer_norm(step):
    """layer_norm(input, normalized_shape, weight, bias, eps, …)."""
    return norms.layer_norm(step.walker.writer, step.tensor(0), tuple(step.arg(1, "normalized_shape", ())),
                            step.arg(2, "weight", None), step.arg(3, "bias", None), float(step.arg(4, "eps", 1e-5)))


def _group_norm(step):
    """group_norm(input, num_groups, weight, bias, eps, …)."""
    return norms.group_norm(step.walker.writer, step.tensor(0), int(step.arg(1, "num_groups", 1)),
                            step.arg(2, "weight", None), step.arg(3, "bias", None), float(step.arg(4, "eps", 1e-5)))


RULES = {
    "add": _binary("+"), "sub": _binary("-"), "rsub": _binary("-", flipped=True), "mul": _binary("*"),
    "div": _binary("/"), "true_divide": _binary("/"), "neg": lambda step: ops.negate(step.tensor(0)),
    "exp": _call("exp"), "log": _call("log"), "tanh": _call("tanh"), "sigmoid": _call("sigmoid"),
    "relu": _call("relu"), "sqrt": _call("sqrt"), "abs": _call("abs"), "sign": _call("sign"),
    "sin": _call("sin"), "cos": _call("cos"), "log1p": _call("log1p"), "expm1": _call("expm1"),
    "round": _call("round"), "floor": _call("floor"), "ceil": _call("ceil"),
    "softplus": torch_activations.softplus,
    "rsqrt": lambda step: ops.binary("/", Value("1", ()), ops.call("sqrt", step.tensor(0)), step.shape),
    "square": lambda step: ops.power(step.tensor(0), Value("2", ()), step.shape), "pow": _pow,
    "sum": _reduce("sum"), "mean": _reduce("mean"), "amax": _reduce("max"), "amin": _reduce("min"),
    "max": _reduce("max"), "min": _reduce("min"), "logsumexp": _logsumexp,
    "softmax": _along("softmax"), "_softmax": _along("softmax"), "log_softmax": _along("log_softmax"),
    "_log_softmax": _along("log_softmax"),
    "linear": _linear, "matmul": _matmul, "mm": _matmul, "mv": _matmul, "dot": _matmul,
    "t": _transpose, "transpose": _transpose, "permute": _permute, "numpy_T": _transpose,
    "unsqueeze": _same, "squeeze": _same, "view": _same, "reshape": _same, "_unsafe_view": _same,
    "flatten": _same, "contiguous": _same, "clone": _same, "alias": _same, "_to_copy": _to, "to": _to,
    "lift_fresh_copy": _same, "copy": lambda step: _broadcast_to(step.tensor(1), step.shape), "expand": _expand, "expand_as": _expand, "broadcast_to": _expand,
    "broadcast_tensors": _broadcast_tensors, "select": _select, "slice": _slice, "index": _gather,
    "gather": _gather, "index_select": _gather, "flip": _gather, "roll": _gather, "repeat": _gather, "embedding": _gather, "take": _gather,
    "nll_loss_nd": torch_losses.nll_loss, "nll_loss": torch_losses.nll_loss, "nll_loss_forward": torch_losses.nll_loss,
    "binary_cross_entropy_with_logits": _bce_logits, "l1_loss": _l1,
    "leaky_relu": torch_activations.leaky_relu, "elu": torch_activations.elu, "selu": torch_activations.selu,
    "hardtanh": torch_activations.hardtanh, "relu6": torch_activations.hardtanh,
    "log_sigmoid_forward": torch_activations.log_sigmoid, "log_sigmoid": torch_activations.log_sigmoid,
    "stack": torch_tensors.stack, "masked_fill": torch_tensors.masked_fill, "bmm": torch_tensors.bmm,
    "cumsum": torch_tensors.cumsum, "sort": torch_tensors.ordered, "topk": torch_tensors.ordered,
    "binary_cross_entropy": torch_losses.binary_cross_entropy,
    "diag": _diag, "diagonal": _diag, "index_add": _index_add, "linalg_solve_triangular": _solve_triangular,
    "kl_div": torch_losses.kl_div,
    "eq": _compare("=="), "ne": _compare("!="), "gt": _compare(">"), "ge": _compare(">="), "lt": _compare("<"),
    "le": _compare("<="),
    "where": _where, "maximum": _extremum("max"), "minimum": _extremum("min"), "clamp": _clamp,
    "clamp_min": lambda step: step.tensor(0) if _unbounded(step.arg(1, "min", None), -1) else _bounded(
        step, step.tensor(0), step.arg(1, "min", None), "max", 1),
    "clamp_max": lambda step: step.tensor(0) if _unbounded(step.arg(1, "max", None), 1) else _bounded(
        step, step.tensor(0), step.arg(1, "max", None), "min", 1),
    "mse_loss": _mse, "smooth_l1_loss": _huber("beta", True), "huber_loss": _huber("delta", False),
    "scatter": torch_onehot.scatter, "index_put": torch_onehot.index_put, "batch_norm": _batch_norm, "layer_norm": _layer_norm, "group_norm": _group_norm,
    "std": _spread_of(True), "var": _spread_of(False), "gelu": _gelu, "silu": _silu, "erf": _call("erf"),
    "cat": torch_joins.cat, "concat": torch_joins.cat, "concatenate": torch_joins.cat, "einsum": torch_joins.einsum,
    "chunk": torch_joins.pieces, "split": torch_joins.pieces, "split_with_sizes": torch_joins.pieces,
    "unbind": torch_joins.pieces,
    "cosine_similarity": _cosine, "cross_entropy_loss": torch_losses.cross_entropy, "linalg_vector_norm": _norm,
}
