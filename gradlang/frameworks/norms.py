"""batch_norm, layer_norm and group_norm written with gradlang's own operations (means, sums, sqrt).

In training mode batch_norm normalises by the batch's statistics (its mean
and biased variance over axis 0), as PyTorch does; the running statistics
it updates are buffers, not part of the loss. Outside training it reads the
running statistics, constants of the program. layer_norm normalises over the
last axes it is given, group_norm over the channels of each group: the
group's mean, spread back over its channels, is `x @ A` with A the constant
block matrix that averages within a group (no reshape to three axes). Every
broadcast of a statistic over the batch goes through ops.binary, which
writes it as gradlang reads it (`outer(ones(b), mu)`).
"""

from __future__ import annotations

from gradlang.frameworks import ops
from gradlang.frameworks.program import TranslateError, Value, number


def normalised(writer, x: Value, mean: Value, squares, eps: float) -> Value:
    """(x - mean) / sqrt(var + eps), with var = squares(centred): the centred value named (it is read twice)."""
    centred = writer.bind(ops.binary("-", x, mean, x.shape), 2)
    var = squares(ops.binary("*", centred, centred, x.shape))
    scale = ops.call("sqrt", ops.binary("+", var, number(eps), var.shape))
    return ops.binary("/", centred, scale, x.shape)


def affine(y: Value, weight: Value | None, bias: Value | None, placed: tuple) -> Value:
    """y * weight + bias, the per-channel vectors placed at the framework's shape `placed` (1s elsewhere)."""
    if weight is not None:
        y = ops.binary("*", y, ops.reshape(weight, placed), y.shape)
    if bias is not None:
        y = ops.binary("+", y, ops.reshape(bias, placed), y.shape)
    return y


def kept(value: Value, shape: tuple, axes: tuple) -> Value:
    """A statistic reduced over `axes`, given back those axes as length 1 (keepdims) so it broadcasts."""
    return ops.reshape(value, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def over_axes(writer, x: Value, axes: tuple, eps: float) -> Value:
    """x standardised over `axes`: mean and biased variance there (batch norm's axis 0, layer norm's last)."""
    x = writer.bind(x, 2)
    mean = kept(ops.reduce("mean", x, axes), x.shape, axes)
    return normalised(writer, x, mean, lambda sq: kept(ops.reduce("mean", sq, axes), x.shape, axes), eps)


def batch_norm(writer, x: Value, weight, bias, running: tuple, training: bool, eps: float) -> Value:
    """batch_norm of a (batch, channels, …) value: statistics over every axis but the channels' (an image's batch,
    height and width), the batch's in training, the running ones outside it."""
    placed = tuple(d if i == 1 else 1 for i, d in enumerate(x.shape))
    if training:
        y = over_axes(writer, x, tuple(i for i in range(len(x.shape)) if i != 1), eps)
    else:
        mean, var = (ops.reshape(r, placed) for r in running)
        y = ops.binary("/", ops.binary("-", x, mean, x.shape),
                       ops.call("sqrt", ops.binary("+", var, number(eps), placed)), x.shape)
    return affine(y, weight, bias, placed)


def layer_norm(writer, x: Value, normalized: tuple, weight, bias, eps: float) -> Value:
    """layer_norm over the last len(normalized) axes, then the elementwise affine of that shape."""
    axes = tuple(range(len(x.shape) - len(normalized), len(x.shape)))
    placed = (1,) * (len(x.shape) - len(normalized)) + tuple(normalized)
    return affine(over_axes(writer, x, axes, eps), weight, bias, placed)


def group_norm(writer, x: Value, groups: int, weight, bias, eps: float) -> Value:
    """group_norm of a (batch, channels) value: each group's statistics, spread over its channels, are x @ A."""
    if len(x.shape) != 2:
        raise TranslateError(f"group_norm of shape {tuple(x.shape)}: gradlang writes it for (batch, channels)")
    channels, x = x.shape[1], writer.bind(x, 2)
    size = channels // groups
    rows = [[1.0 / size if i // size == j // size else 0.0 for j in range(channels)] for i in range(channels)]
    average = Value("[" + ", ".join("[" + ", ".join(repr(v) for v in row) + "]" for row in rows) + "]",
                    (channels, channels))

    def spread(value: Value) -> Value:
        return ops.contract(value, average, (1,), (0,), x.shape)

    return affine(normalised(writer, x, spread(x), spread, eps), weight, bias, (1, channels))
