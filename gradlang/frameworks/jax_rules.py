"""One rule per JAX primitive: the jaxpr equation's inputs (Values) -> the gradlang Value of its output.

A rule is `rule(step)`, where `step` holds the equation, its input Values, their
values at the traced point and the writer (trace_jax.py). Calls (jit, pjit,
custom_jvp_call, …) are not here: the tracer inlines their bodies. An integer
or boolean result that is not a comparison of floats (argmax, iota, one_hot's
mask, is_finite) is piecewise constant: the tracer writes its value at the
traced point instead. A primitive with no rule is a TranslateError at the
user's line.
"""

from __future__ import annotations

from gradlang.frameworks import ops
from gradlang.frameworks.program import TranslateError, Value


def _shape(step) -> tuple:
    return tuple(step.eqn.outvars[0].aval.shape)


def _binary(op: str):
    return lambda step: ops.binary(op, *step.ins, _shape(step))


def _call(name: str):
    return lambda step: ops.call(name, step.ins[0])


def _compare(op: str):
    return lambda step: ops.compare(op, *step.ins, _shape(step))


def _extremum(name: str):
    def rule(step):
        a, b = step.ins
        if _infinite(b, -1 if name == "max" else 1):
            return ops.reshape(a, _shape(step)) if a.shape != _shape(step) else a
        if _infinite(a, -1 if name == "max" else 1):
            return ops.reshape(b, _shape(step)) if b.shape != _shape(step) else b
        return ops.extremum(name, a, b, _shape(step))
    return rule


def _infinite(value: Value, sign: int) -> bool:
    """max(-inf, x) is x exactly, value and derivative (jax.nn.log_softmax writes it)."""
    return value.text == ("-inf" if sign < 0 else "inf")


def _reduce(name: str):
    return lambda step: ops.reduce(name, step.ins[0], tuple(step.eqn.params["axes"]))


def _integer_pow(step):
    return ops.power(step.ins[0], Value(str(step.eqn.params["y"]), ()), _shape(step))


def _pow(step):
    return ops.power(*step.ins, _shape(step))


def _square(step):
    return ops.power(step.ins[0], Value("2", ()), _shape(step))


def _rsqrt(step):
    return ops.binary("/", Value("1", ()), ops.call("sqrt", step.ins[0]), _shape(step))


def _exp2(step):
    return ops.power(Value("2.0", ()), step.ins[0], _shape(step))


def _round(step):
    # lax.round's default rounds halves away from zero, gradlang's (and jnp.round's) to even:
    # the two differ only exactly at a half, and both have derivative 0.
    return ops.call("round", step.ins[0])


def _same(step):
    value = step.ins[0]
    return Value(value.text, _shape(step), value.prec, value.scalar, value.condition, value.number)


def _convert(step):
    """convert_element_type: a comparison to numbers is a where; a float cast is kept (float32(…))."""
    value = step.ins[0]
    if value.condition:
        return ops.where(value, Value("1.0", ()), Value("0.0", ()), _shape(step))
    source = str(step.eqn.invars[0].aval.dtype)
    return ops.cast(_same(step), source, str(step.eqn.params["new_dtype"]))


def _broadcast(step):
    return ops.broadcast(step.ins[0], _shape(step), tuple(step.eqn.params["broadcast_dimensions"]))


def _reshape(step):
    return ops.reshape(step.ins[0], _shape(step))


def _transpose(step):
    return ops.permute(step.ins[0], tuple(step.eqn.params["permutation"]))


def _dot_general(step):
    (contract_a, contract_b), (batch_a, batch_b) = step.eqn.params["dimension_numbers"]
    a, b = step.ins
    if not batch_a:
        return ops.contract(a, b, tuple(contract_a), tuple(contract_b), _shape(step))
    if (tuple(batch_a), tuple(batch_b), tuple(contract_a), tuple(contract_b)) == ((0,), (0,), (1,), (1,)) and (
            len(a.shape) == len(b.shape) == 2):
        return ops.rowwise_dot(a, b, _shape(step))
    return ops.any_rank.einsum(a, b, (tuple(contract_a), tuple(contract_b)), (tuple(batch_a), tuple(batch_b)),
                               _shape(step))


def _concatenate(step):
    return ops.any_rank.concatenated(list(step.ins), step.eqn.params["dimension"], _shape(step))


def _stack(step):
    return ops.any_rank.stacked(list(step.ins), step.eqn.params["axis"], _shape(step))


def _atanh(step):
    """atanh(x) = (log1p(x) - log1p(-x)) / 2: gradlang has no atanh; the same value, derivative 1 / (1 - x^2)."""
    x = step.ins[0]
    halves = ops.binary("-", ops.call("log1p", x), ops.call("log1p", ops.negate(x)), _shape(step))
    return ops.binary("*", Value("0.5", ()), halves, _shape(step))


def _sort(step):
    """A sort of one array (jnp.sort, inside jnp.percentile and jnp.median): its entries read in their order at
    the traced point, which is piecewise constant, as an argmax is; the derivative moves with the entries."""
    import numpy as np

    if len(step.ins) != 1:
        raise TranslateError("a sort of several arrays together (an argsort, lax.sort with keys): only a sort of "
                             "one array is written, as its entries in their order at the traced point")
    point, axis = np.asarray(step.points[0]), step.eqn.params["dimension"]
    labels = np.arange(point.size).reshape(point.shape)
    order = np.take_along_axis(labels, np.argsort(point, axis=axis, kind="stable"), axis=axis)
    return ops.picked(step.ins[0], order, _shape(step))


def _slice(step):
    value = step.ins[0]
    starts, limits = step.eqn.params["start_indices"], step.eqn.params["limit_indices"]
    strides = step.eqn.params.get("strides") or (1,) * len(starts)
    cut = [i for i, (s, e, d) in enumerate(zip(starts, limits, value.shape)) if (s, e) != (0, d)]
    if not cut:
        return _same(step)
    if len(cut) == 1 and limits[cut[0]] - starts[cut[0]] == 1 and strides[cut[0]] == 1:
        return ops.index(value, cut[0], starts[cut[0]], _shape(step))
    return _gather(step)


def _gather(step):
    """A gather, a dynamic slice or a wider slice: the positions it reads, found by running it on labels."""
    import numpy as np

    operand = np.asarray(step.points[0])
    labels = np.arange(operand.size, dtype=np.float64).reshape(operand.shape)
    read = np.asarray(step.eqn.primitive.bind(labels, *step.points[1:], **step.eqn.params))
    if np.isnan(read).any():
        raise TranslateError("a gather that reads outside the array")
    return ops.picked(step.ins[0], read, _shape(step))


def _select_n(step):
    import numpy as np

    predicate, *cases = step.ins
    if len(cases) != 2:
        raise TranslateError("a select_n of more than two cases")
    if not predicate.condition and np.unique(np.asarray(step.points[0])).size == 1:
        # a predicate fixed at the point (not a comparison of floats), the same everywhere: the case it picks
        # (rlax's select(stop_target_gradients, …), jnp.percentile's `where(any(isnan(x)), nan, x)`)
        taken = int(np.asarray(step.points[0]).reshape(-1)[0])
        if not cases[1 - taken].stopped:
            return cases[taken]
        # a stop the user wrote in the case it leaves: kept in a where whose condition is as fixed, so the
        # ledger lists it as never reached (docs/decisions.md)
        predicate = Value("1 > 0" if taken else "0 > 1", (), condition=True)
    return ops.where(predicate, cases[1], cases[0], _shape(step))


RULES = {
    "add": _binary("+"), "add_any": _binary("+"), "sub": _binary("-"), "mul": _binary("*"), "div": _binary("/"),
    "neg": lambda step: ops.negate(step.ins[0]),
    "exp": _call("exp"), "log": _call("log"), "tanh": _call("tanh"), "sqrt": _call("sqrt"),
    "logistic": _call("sigmoid"), "abs": _call("abs"), "sign": _call("sign"), "floor": _call("floor"),
    "ceil": _call("ceil"), "sin": _call("sin"), "cos": _call("cos"), "log1p": _call("log1p"),
    "expm1": _call("expm1"), "round": _round, "rsqrt": _rsqrt, "exp2": _exp2, "square": _square,
    "integer_pow": _integer_pow, "pow": _pow,
    "max": _extremum("max"), "min": _extremum("min"),
    "reduce_sum": _reduce("sum"), "reduce_max": _reduce("max"), "reduce_min": _reduce("min"),
    "dot_general": _dot_general, "broadcast_in_dim": _broadcast, "reshape": _reshape, "squeeze": _reshape,
    "expand_dims": _reshape, "transpose": _transpose, "convert_element_type": _convert, "copy": _same,
    "copy_p": _same, "reduce_precision": _same, "slice": _slice, "select_n": _select_n,
    "gather": _gather, "dynamic_slice": _gather, "concatenate": _concatenate, "atanh": _atanh, "sort": _sort,
    "stack": _stack,
    "gt": _compare(">"), "ge": _compare(">="), "lt": _compare("<"), "le": _compare("<="),
    "eq": _compare("=="), "ne": _compare("!="),
}
