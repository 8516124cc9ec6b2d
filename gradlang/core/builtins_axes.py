"""The axis forms of section 6: sum, mean, max, min, logsumexp, softmax, log_softmax with (M, axis).

The entries these names already have are kept for one argument; a second
argument, in the second place or as `axis=`, makes the axis form
(expr/component_axes.py). `max` and `min` of several arguments are the
elementwise extremum (`max(W, 0)` is a ReLU whatever W's rank), so for them
the axis form is taken only from the keyword (`max(W, axis=0)`, section 6 of
version 3; `is_axis_call`, and the export and the tensor engine ask
`keyword_axis`). docs/decisions.md says why.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from gradlang.core.builtin_table import TABLE, Call, _numbers_only
from gradlang.core.builtins_vectors import placed
from gradlang.expr.component_axes import along, axis_number
from gradlang.errors import SyntaxError, ValueError
from gradlang.expr.engine import axes as tensor_axes, involves, shape_of as tensor_shape, shapes
from gradlang.expr.values import elements, from_elements, shape_of, to_symbolic
from gradlang.lazy import np
from gradlang.syntax import lowered as lo

AXIS_NAMES: set = set()  # filled by give_axes: every name whose entry takes an axis

AXIS_FORMS = {
    # name: (doc, example) of the entry once it takes an axis
    "sum": ("sum of all components; sum(M, axis) along an axis", "sum([[1, 2], [3, 4]], 1)"),
    "mean": ("mean of all components; mean(M, axis) along an axis", "mean([[1, 2], [3, 4]], 0)"),
    "logsumexp": ("log(sum(exp(v))), computed stably; logsumexp(M, axis) along an axis", "logsumexp([[1, 2], [3, 4]], 1)"),
    "softmax": ("exp(v) / sum(exp(v)), computed stably; rows of a matrix, or softmax(M, axis)",
                "softmax([[1, 2], [3, 5]], 0)"),
    "log_softmax": ("v - logsumexp(v), computed stably; rows of a matrix, or log_softmax(M, axis)",
                    "log_softmax([[1, 2], [3, 5]], 0)"),
    "max": ("max of a vector or matrix, max(M, axis=0) along an axis, or elementwise max of several "
            "(max(W, 0) is a ReLU); ties share the gradient", "max([[1, 5], [3, 4]], axis=0)"),
    "min": ("min of a vector or matrix, min(M, axis=1) along an axis, or elementwise min of several; "
            "ties share the gradient", "min([[1, 5], [3, 4]], axis=1)"),
}
ELEMENTWISE_TOO = frozenset({"max", "min"})  # a second place is an argument (reduce_max(M, 1) is TF's axis)
TF_EXTREMA = frozenset({"reduce_max", "reduce_min"})


def is_axis_call(name: str, values: list, nodes: list) -> bool:
    """max/min(M, axis=k); reduce_max/reduce_min(M, k) of a tensor M, TensorFlow's positional axis (of a
    scalar, reduce_max(a, b) is the maximum of both, as before version 3); every other name: any second
    argument, in the second place or as axis=."""
    if len(values) != 2:
        return False
    if keyword_axis(nodes[1]):
        return True
    if name in ELEMENTWISE_TOO:
        return False
    return name not in TF_EXTREMA or _not_scalar(values[0])


def _not_scalar(value) -> bool:
    """A value with a shape of some length, or a syntax node (export's shape guesser reads it as written)."""
    shape = getattr(value, "shape", None)
    return bool(shape) if shape is not None or isinstance(value, (sp.Basic, int, float)) else True


def keyword_axis(node) -> bool:
    """The syntax node is written `axis=…`: for max and min the only way to give an axis."""
    return isinstance(node, lo.Keyword) and node.name == "axis"


AXIS_TOO = frozenset({"concat", "stack", "norm", "argmax", "argmin", "expand_dims", "squeeze"})  # take axis= too
KEEPS = frozenset({"sum", "mean", "max", "min", "logsumexp", "norm", "argmax", "argmin", "reduce_sum", "reduce_mean",
                   "reduce_max", "reduce_min"})  # the reductions that take keepdims= (section 3b)


def keepdims_keyword(node):
    """The `keepdims=` keyword of a call of a reduction, or None; a SyntaxError for any other call."""
    found = [a for a in node.args if isinstance(a, lo.Keyword) and a.name == "keepdims"]
    if not found:
        return None
    if node.name not in KEEPS:
        raise SyntaxError(f"{node.name} takes no keepdims= (it is for the reductions sum, mean, max, min, "
                          "logsumexp, norm, argmax and argmin)", found[0].span)
    if found[0] is not node.args[-1]:
        raise SyntaxError("keepdims= comes last, as in sum(X, axis=-1, keepdims=true)", found[0].span)
    return found[0]


def kept_dims(value, flag, args: list, node):
    """A reduction's value with its reduced axes kept, each of size 1, as NumPy's keepdims=True."""
    if flag not in (sp.true, sp.false):
        raise ValueError("keepdims is true or false").located(node.value.span)
    if flag is sp.false:
        return value
    rank = len(_shape(args[0]))
    axes = shapes.axes_of(args[1] if len(args) > 1 else None, rank, "keepdims")
    if involves(value):
        return tensor_axes.ExpandDims(value, *axes)
    if isinstance(value, np.ndarray):
        return np.expand_dims(value, axes)
    shape = list(_shape(value))
    for axis in axes:
        shape.insert(axis, 1)
    return from_elements(tuple(shape), elements(to_symbolic(value)))


def _shape(value) -> tuple:
    return tensor_shape(value) if involves(value) else shape_of(value)


def check_keywords(name: str, nodes) -> None:
    """A keyword only as `axis=` in the second place of a builtin that takes an axis (AXIS_NAMES)."""
    for position, node in enumerate(nodes):
        if not isinstance(node, lo.Keyword):
            continue
        if name not in AXIS_NAMES and name not in AXIS_TOO:
            raise SyntaxError(f"{name} takes no keyword {node.name}= (axis= is for sum, mean, max, min, "
                              "logsumexp, softmax, log_softmax, norm, argmax, argmin and the shape builtins)",
                              node.span)
        if position != 1 or len(nodes) != 2:
            raise SyntaxError(f"{name} takes axis= after one value, as in {name}(M, axis=0)", node.span)


def _with_axis(name: str, whole):
    """The entry's own function for one argument (or elementwise max/min), the axis form otherwise.

    `call.name` is the name written: reduce_max(M, 1) reads its second place as TensorFlow does."""

    def axis_form(call: Call):
        axis = placed(call, 1, axis_number, call.args[1])
        return placed(call, 0, along, name, to_symbolic(call.args[0]), axis)

    checked = _numbers_only(axis_form, ())

    def apply(call: Call):
        if is_axis_call(call.name, call.args, call.nodes):
            return checked(call)
        return whole(call)

    return apply


def give_axes() -> None:
    """Give every name of AXIS_FORMS (aliases too: reduce_sum) its axis form, and list it in AXIS_NAMES.

    builtins.py calls this once, after it has registered the entries these forms extend."""
    names = AXIS_NAMES
    for name, (doc, example) in AXIS_FORMS.items():
        entry = TABLE[name]
        function = _with_axis(name, entry.function)
        at_most = None if entry.max_args is None else max(entry.max_args, 2)
        for alias, other in list(TABLE.items()):
            if other.function is entry.function:  # the same function: an alias (reduce_sum) follows its name
                TABLE[alias] = dataclasses.replace(other, function=function, max_args=at_most, doc=doc, example=example)
                names.add(alias)
