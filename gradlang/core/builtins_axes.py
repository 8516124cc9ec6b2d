"""The axis forms of section 6: sum, mean, max, min, logsumexp, softmax, log_softmax with (M, axis).

The entries these names already have are kept for one argument; a second
argument makes the axis form (expr/component_axes.py). `max` and `min` of
two arguments were already the elementwise maximum (`max(v, 0)`), so for
them the axis form is taken only when the first argument is a matrix and the
second is written as the integer literal 0 or 1 (`is_axis_call`; the export
asks `literal_axis` too); any other second argument (`max(M, 0.0)`,
`max(M, z)`, `max(v, 0)`) stays elementwise. docs/decisions.md says why.
"""

from __future__ import annotations

import dataclasses

from gradlang.core import builtins
from gradlang.core.builtins import TABLE, Call
from gradlang.core.builtins_vectors import placed
from gradlang.expr.component_axes import along, axis_number
from gradlang.expr.values import shape_of, to_symbolic

AXIS_FORMS = {
    # name: (doc, example) of the entry once it takes an axis
    "sum": ("sum of all components; sum(M, axis) along an axis", "sum([[1, 2], [3, 4]], 1)"),
    "mean": ("mean of all components; mean(M, axis) along an axis", "mean([[1, 2], [3, 4]], 0)"),
    "logsumexp": ("log(sum(exp(v))), computed stably; logsumexp(M, axis) along an axis", "logsumexp([[1, 2], [3, 4]], 1)"),
    "softmax": ("exp(v) / sum(exp(v)), computed stably; rows of a matrix, or softmax(M, axis)",
                "softmax([[1, 2], [3, 5]], 0)"),
    "log_softmax": ("v - logsumexp(v), computed stably; rows of a matrix, or log_softmax(M, axis)",
                    "log_softmax([[1, 2], [3, 5]], 0)"),
    "max": ("max of a vector or matrix, max(M, 0 or 1) along an axis, or elementwise max of several; "
            "ties share the gradient", "max([[1, 5], [3, 4]], 0)"),
    "min": ("min of a vector or matrix, min(M, 0 or 1) along an axis, or elementwise min of several; "
            "ties share the gradient", "min([[1, 5], [3, 4]], 1)"),
}
ELEMENTWISE_TOO = frozenset({"max", "min"})  # two arguments meant the elementwise extremum before axes


def is_axis_call(name: str, values: list, nodes: list) -> bool:
    """max/min(M, 0 or 1) with a matrix M and a literal axis; every other name: any second argument."""
    if len(values) != 2:
        return False
    if name not in ELEMENTWISE_TOO:
        return True
    return literal_axis(nodes[1]) and len(shape_of(values[0])) == 2


def literal_axis(node) -> bool:
    """The syntax node is the integer literal 0 or 1 (as diff reads a literal order)."""
    return getattr(node, "kind", None) == "number" and node.literal in ("0", "1")


def _with_axis(name: str, whole):
    """The entry's own function for one argument (or elementwise max/min), the axis form otherwise."""

    def axis_form(call: Call):
        axis = placed(call, 1, axis_number, call.args[1])
        return placed(call, 0, along, name, to_symbolic(call.args[0]), axis)

    checked = builtins._numbers_only(axis_form, ())

    def apply(call: Call):
        if is_axis_call(name, call.args, call.nodes):
            return checked(call)
        return whole(call)

    return apply


def _give_axes() -> frozenset:
    """Every name (aliases too: reduce_sum) whose entry now takes an axis."""
    names = set()
    for name, (doc, example) in AXIS_FORMS.items():
        entry = TABLE[name]
        function = _with_axis(name, entry.function)
        at_most = None if entry.max_args is None else max(entry.max_args, 2)
        for alias, other in list(TABLE.items()):
            if other.function is entry.function:  # the same function: an alias (reduce_sum) follows its name
                TABLE[alias] = dataclasses.replace(other, function=function, max_args=at_most, doc=doc, example=example)
                names.add(alias)
    return frozenset(names)


AXIS_NAMES = _give_axes()
