"""The vector and matrix builtins of section 6 that are compositions, not primitives.

outer, diag, eye, onehot, argmax, argmin, normalize, cosine, huber,
log_softmax, trace, det, logdet and inv. Each entry only checks its call and
places errors; the mathematics is in expr/component_vectors.py and
expr/component_linalg.py, functions of values that the tensor-level engine
can call directly. Their results are made of existing primitives (Norm,
Abs, Where, LogSumExp, products and sums), so derivatives, explain and the
exports need nothing new.
"""

from __future__ import annotations

import sympy as sp

from gradlang.core.builtin_table import Call, builtin
from gradlang.errors import GradlangError, ValueError
from gradlang.expr.conditions import AllOf, AnyOf
from gradlang import limits
from gradlang.expr.engine import nodes
from gradlang.expr.values import elements, is_condition, to_symbolic
from gradlang.expr import component_linalg as linalg
from gradlang.expr import component_vectors as vectors
from gradlang.expr.component_axes import rows_of

# The builtins here that read a whole vector or matrix (export/shapes.py guesses such a parameter is an array).
WHOLE_VALUES = frozenset({"outer", "diag", "normalize", "cosine", "log_softmax", "argmax", "argmin",
                          "trace", "det", "logdet", "inv"})


def placed(call: Call, index: int, function, *args):
    """function(*args), an error without a place put at argument `index` (the call itself when None)."""
    try:
        return function(*args)
    except GradlangError as error:
        node = call.nodes[index] if index is not None else None
        raise error.located(node.span if node is not None else call.span)


def _one(function, index=0):
    """A builtin of one argument whose errors point at that argument."""
    return lambda call: placed(call, index, function, call.args[0])


# --- vectors ---------------------------------------------------------------------------

for _name, _function, _doc, _example in (
    ("normalize", vectors.normalize, "v / norm(v), no epsilon", "normalize([3, 4])"),
    ("argmax", vectors.argmax, "index of the largest component (the first of a tie); derivative 0", "argmax([1, 3, 3])"),
    ("argmin", vectors.argmin, "index of the smallest component (the first of a tie); derivative 0", "argmin([2, 1, 1])"),
    ("diag", linalg.diag, "a vector to a diagonal matrix; a matrix to its diagonal", "diag([1, 2])"),
):
    builtin(_name, 1, 1, _doc, _example, "vector")(_one(_function))


@builtin("outer", 2, 2, "outer product: outer(a, b)[i, j] = a[i]*b[j]", "outer([1, 2], [3, 4, 5])", "vector")
def _outer(call: Call):
    return placed(call, None, linalg.outer, *call.args)


@builtin("cosine", 2, 2, "cosine similarity dot(a, b)/(norm(a)*norm(b)), no epsilon", "cosine([1, 0], [1, 1])", "vector")
def _cosine(call: Call):
    return placed(call, None, vectors.cosine, *call.args)


@builtin("huber", 2, 2, "Huber loss elementwise: u^2/2 where |u| <= delta, else delta*(|u| - delta/2)",
         "huber([0.5, 3], 1)", "vector")
def _huber(call: Call):
    placed(call, 1, vectors.check_delta, call.args[1])
    return placed(call, None, vectors.huber, *call.args)


@builtin("eye", 1, 1, "the n×n identity matrix", "eye(3)", "vector")
def _eye(call: Call):
    """The node eye(n) at a literal size as at a symbolic one: a constant of the formula, bounded as a declared
    tensor is; its components come on request (a matrix of numbers prints as one)."""
    n = placed(call, 0, linalg.eye_size, call.args[0], limits.max_tensor_elements())
    return nodes.Eye(sp.Integer(n))


@builtin("onehot", 2, 2, "the vector of length n with 1 at index k (from 0)", "onehot(1, 3)", "vector")
def _onehot(call: Call):
    k, n = call.args
    placed(call, 1, vectors.check_length, n, "onehot", limits.max_tensor_elements())  # n first, placed at n
    if not (isinstance(k, sp.Symbol) and not k.is_Number):  # an index left free: e_k, as at a size n
        placed(call, 0, vectors.check_onehot, k, n, limits.max_tensor_elements())
    return nodes.OneHot(k, n)


@builtin("log_softmax", 1, 2, "v - logsumexp(v), computed stably; rows of a matrix, or log_softmax(M, axis)",
         "log_softmax([1, 2, 3])", "vector")
def _log_softmax(call: Call):
    return placed(call, 0, rows_of, call.args[0], "log_softmax")  # the axis form: core/builtins_axes.py


# --- matrices --------------------------------------------------------------------------------

for _name, _function, _doc, _example in (
    ("trace", linalg.trace, "sum of the diagonal of a square matrix", "trace([[1, 2], [3, 4]])"),
    ("det", linalg.det, "determinant of a square matrix", "det([[1, 2], [3, 4]])"),
    ("logdet", linalg.logdet, "log(det(A)), for det(A) > 0", "logdet([[2, 1], [1, 2]])"),
    ("inv", linalg.inv, "inverse of a square matrix", "inv([[2, 1], [1, 1]])"),
):
    builtin(_name, 1, 1, _doc, _example, "matrix")(_one(_function))


# --- conditions (section 6, tensor) ------------------------------------------------------

def _reduced(cls):
    """all(c) / any(c) of conditions by components: decided when each is, else the formula over the list."""

    def apply(call: Call):
        condition = call.args[0]
        if not (is_condition(condition) or all(is_condition(e) for e in elements(to_symbolic(condition)))):
            raise ValueError(f"{call.name} takes a condition such as x > 0").located(call.span)
        return cls(*elements(to_symbolic(condition)))

    return apply


builtin("all", 1, 1, "true when every component of a condition holds (numpy.all)", "all([1, 2] > 0)", "vector",
        conditions=(0,))(_reduced(AllOf))
builtin("any", 1, 1, "true when some component of a condition holds (numpy.any)", "any([1, -2] > 0)", "vector",
        conditions=(0,))(_reduced(AnyOf))
