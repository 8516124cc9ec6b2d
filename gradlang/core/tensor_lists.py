"""The evaluator's handling of lists of tensors of different shapes (expr/tensor/listed.py).

`[W, b]` of a matrix and a vector, or of vectors of a symbolic size, is no
array: it is a `TensorList`. `grad(L, [W1, b1, W2])` takes such a list as its
variables, at any size (also `[b1, b2]` of one literal shape, which as a value
stacks into a matrix, as `jnp.array` does), and gives the list of gradients.
A list is indexed (`g[0]`), printed, and taken `at` a point entry by entry; as
an operand of arithmetic or of any other builtin it is refused with a
ShapeError at its place, never read as an array.
"""

from __future__ import annotations

import sympy as sp

from gradlang.core import tensor_values
from gradlang.core.at import at_each
from gradlang.expr.tensor.lower import involves, symbolic
from gradlang.errors import GradlangError
from gradlang.expr.values import check_count
from gradlang.expr.tensor.listed import ListAt, TensorList, is_list, refused
from gradlang.expr.tensor.nodes import rank, shape_of



def listed(values: list) -> bool:
    """Do these entries of `[…]` make a list of tensors: formulas, one a whole tensor, and not all of one
    literal shape (those stack into a matrix, as before)? A list in a list is refused: lists do not nest."""
    if any(is_list(v) for v in values):
        raise refused("an entry of a list")
    if not all(isinstance(v, sp.Expr) for v in values):
        return False
    tensors = [v for v in values if involves(v) and rank(v) >= 1]
    if not tensors or stacks(values):
        return False
    return len({shape_of(v) for v in values}) > 1 or any(symbolic(v) for v in tensors)


def stacks(values: list) -> bool:
    """Do these entries of `[…]` stack into a matrix at the tensor level: vectors of one shape, one a tensor
    (`[x, y]` of x, y: R^n, as of R^3: stack([x, y], 0), so both spellings give one value)?"""
    tensors = [v for v in values if isinstance(v, sp.Expr) and involves(v)]
    return (bool(tensors) and len(tensors) == len(values) and rank(tensors[0]) == 1
            and len({shape_of(v) for v in values}) == 1)


def entries(evaluator, node, frame) -> TensorList:
    """The entries of a join's list as written, each its own value (of any shape: concat of R^m and R^n)."""
    check_count(len(node.items))
    items = [evaluator.evaluate(item, frame) for item in node.items]
    if any(is_list(v) for v in items):
        raise refused("an entry of a list")
    return TensorList(*items)


def variables(evaluator, node, frame):
    """grad's variables written as a list: a TensorList when it holds a whole tensor, at any size; else the
    list as any list is evaluated ([a, b] of scalars, x[0] of components, and the component engine's)."""
    check_count(len(node.items))
    items = [evaluator.evaluate(item, frame) for item in node.items]
    whole = all(isinstance(v, sp.Expr) for v in items) and any(involves(v) and rank(v) >= 1 for v in items)
    if whole:
        return TensorList(*items)
    try:
        value = evaluator.list_of(items)
    except GradlangError as error:
        raise error.located(node.span)
    return tensor_values.checked(value) if involves(value) else value


def at(evaluator, node, frame):
    """`g at …` of a list of tensors: each entry at the point, by the tensor engine's at (floats by
    whole-array NumPy); None when the expression is no such list (the evaluator's at answers). The evaluator
    asks first whether it may be one (core/tensor_hooks.py, may_be_list)."""
    marks = _marks(evaluator)
    try:
        value = evaluator.evaluate(node.body, frame)
    except GradlangError:
        value = None  # the evaluator's at raises its own error, at its place
    if not is_list(value):  # its notes and counts are the evaluator's own at's to give
        _rewind(evaluator, marks)
        return None
    if isinstance(value, ListAt):
        raise refused("given values again: it holds numbers already")
    return ListAt(at_each(evaluator, list(value.entries), node.bindings, frame))


def _marks(evaluator) -> tuple:
    """What an evaluation adds to: notes, attachments, differentiated operands, functions unfolded, calls,
    explain's requests."""
    return (len(evaluator.notes), len(evaluator.attachments), len(evaluator.differentiated),
            len(evaluator.unfolded), evaluator.calls[0], len(evaluator.services.derivations or ()))


def _rewind(evaluator, marks: tuple) -> None:
    """Forget a trial evaluation, so the at that follows counts and warns once."""
    notes, attachments, differentiated, unfolded, calls, requests = marks
    if evaluator.services.derivations is not None:
        del evaluator.services.derivations[requests:]
    del evaluator.notes[notes:], evaluator.attachments[attachments:]
    del evaluator.differentiated[differentiated:], evaluator.unfolded[unfolded:]
    evaluator.calls[0] = calls
