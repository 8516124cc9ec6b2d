"""Activation functions PyTorch keeps as their own operations (nn.LeakyReLU, ELU, SELU, Hardtanh, ReLU6,
Softplus with beta, LogSigmoid), written with gradlang's where, exp and softplus so that the gradient at a kink
is PyTorch's: leaky_relu's slope at 0, hardtanh's 0 at a bound.
"""

from __future__ import annotations

import numpy as np

from gradlang.frameworks import ops
from gradlang.frameworks.program import Value


def _name_of(step) -> str:
    return str(step.node.target).split(".")[1]


def leaky_relu(step):
    """nn.LeakyReLU: where(x > 0, x, slope * x); PyTorch's gradient at 0 is the slope, as where's second branch."""
    x = step.walker.writer.bind(step.tensor(0), 3)
    slope = float(step.arg(1, "negative_slope", 0.01))
    return Value(f"where({x.text} > 0, {x.text}, {slope!r} * {x.text})", step.shape)


def elu(step):
    """nn.ELU (aten.elu(x, alpha, scale, input_scale)): where(x > 0, x, alpha (exp(x) - 1)), scaled (SELU)."""
    x = step.walker.writer.bind(step.tensor(0), 3)
    alpha, scale, inner = (float(step.arg(i, name, 1.0)) for i, name in
                           ((1, "alpha"), (2, "scale"), (3, "input_scale")))
    negative = f"{alpha!r} * (exp({x.text}{'' if inner == 1 else f' * {inner!r}'}) - 1)"
    value = Value(f"where({x.text} > 0, {x.text}, {negative})", step.shape)
    return value if scale == 1 else Value(f"{scale!r} * {value.text}", step.shape, ops.PRODUCT)


SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)  # PyTorch's alpha and scale


def selu(step):
    """nn.SELU: scale * elu(x, alpha) with PyTorch's constants."""
    x = step.walker.writer.bind(step.tensor(0), 3)
    alpha, scale = SELU
    return Value(f"{scale!r} * where({x.text} > 0, {x.text}, {alpha!r} * (exp({x.text}) - 1))", step.shape, ops.PRODUCT)


def hardtanh(step):
    """nn.Hardtanh / ReLU6 (aten.hardtanh(x, min_val, max_val)): x between the bounds, the bound outside;
    PyTorch's gradient is 0 at a bound itself, as where(x <= lo, lo, …) gives (clamp's would be 1 there)."""
    x = step.walker.writer.bind(step.tensor(0), 3)
    low, high = (0.0, 6.0) if _name_of(step) == "relu6" else (float(step.arg(1, "min_val", -1.0)),
                                                              float(step.arg(2, "max_val", 1.0)))
    return Value(f"where({x.text} <= {low!r}, {low!r}, where({x.text} >= {high!r}, {high!r}, {x.text}))", step.shape)


def softplus(step):
    """F.softplus(x, beta, threshold): softplus(x) when beta is 1 and no entry passes the threshold at the
    point; else PyTorch's where(beta x > threshold, x, softplus(beta x) / beta), its linear part included."""
    a = step.tensor(0)
    beta, threshold = float(step.arg(1, "beta", 1.0)), float(step.arg(2, "threshold", 20.0))
    x = np.asarray(step.walker.point(step.node.args[0], step.at), dtype=np.float64)
    if beta == 1 and not np.any(x * beta > threshold):
        return ops.call("softplus", a)
    a = step.walker.writer.bind(a, 3)
    scaled = f"{a.text} * {beta!r}" if beta != 1 else a.text
    soft = f"softplus({scaled}) / {beta!r}" if beta != 1 else f"softplus({scaled})"
    return Value(f"where({scaled} > {threshold!r}, {a.text}, {soft})", step.shape)


def log_sigmoid(step):
    """F.logsigmoid (aten.log_sigmoid_forward gives (value, buffer)): -softplus(-x), the buffer unused."""
    value = ops.negate(ops.call("softplus", ops.negate(step.tensor(0))))
    return [value, step.constant(1)] if step.is_pair else value
