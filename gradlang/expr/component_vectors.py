"""Vector builtins of the language reference, section 6, at the level of components.

`normalize`, `cosine`, `huber` and `log_softmax` are compositions of the
primitives (norm, abs, where, logsumexp): right by construction, and their
derivatives and exports are those of their parts. `onehot`, `argmax` and
`argmin` make integers, so their derivative is zero; they take numbers
(argmax of a symbolic vector is piecewise constant, and a symbolic index has
no value to build a vector from). Each is a function of gradlang values that
raises gradlang errors without a place; core/builtins_vectors.py places them.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.errors import LimitError, NeedsNumbers, ShapeError, ValueError
from gradlang.expr.component_linalg import numeric_kind
from gradlang.expr.exact import power
from gradlang.expr.source import to_source
from gradlang.expr.values import describe_shape, elements, elementwise, from_elements, shape_of, to_symbolic
from gradlang.expr.walk import relation
from gradlang.lazy import deferred_module

primitives = deferred_module("gradlang.expr.primitives")  # the records on first use (issue #41)


def _build(name: str):
    """The SymPy constructor of a primitive, as its builtin applies it (norm, abs, where, logsumexp)."""
    return primitives.lookup(name).build


def vector_items(value, name: str) -> list:
    """The components of a vector, or a ShapeError naming the shape given."""
    value = to_symbolic(value)
    if len(shape_of(value)) != 1:
        raise ShapeError(f"{name} takes a vector, not {describe_shape(shape_of(value))}")
    return elements(value)


def _is_exact_zero(items: list) -> bool:
    return numeric_kind(items) == "exact" and all(e.is_zero for e in items)


# --- directions ----------------------------------------------------------------


def normalize(value):
    """v / norm(v), no epsilon; an exact zero vector is a ValueError (a float one gives nan, as in JAX)."""
    items = vector_items(value, "normalize")
    if _is_exact_zero(items):
        raise ValueError("normalize of a zero vector is undefined (its norm is 0)")
    norm = _build("norm")(*items)
    return from_elements((len(items),), [e / norm for e in items])


def cosine(a, b):
    """dot(a, b) / (norm(a)*norm(b)) of two vectors of one length, no epsilon."""
    left, right = to_symbolic(a), to_symbolic(b)
    if shape_of(left) != shape_of(right) or len(shape_of(left)) != 1:
        raise ShapeError(
            f"cosine takes two vectors of one length, got {describe_shape(shape_of(left))} "
            f"and {describe_shape(shape_of(right))}"
        )
    left, right = elements(left), elements(right)
    if _is_exact_zero(left) or _is_exact_zero(right):
        raise ValueError("cosine with a zero vector is undefined (its norm is 0)")
    dot = sp.Add(*[x * y for x, y in zip(left, right)])
    return dot / (_build("norm")(*left) * _build("norm")(*right))


# --- losses --------------------------------------------------------------------------


def huber(u, delta):
    """optax.huber_loss elementwise: u²/2 where |u| <= delta, delta·(|u| − delta/2) elsewhere."""
    check_delta(delta)
    return elementwise(_huber, u, delta)


def check_delta(delta) -> None:
    """A number delta must be positive (optax does not check; delta <= 0 makes no loss)."""
    for item in elements(to_symbolic(delta)):
        if isinstance(item, sp.Expr) and item.is_number and item.is_comparable and not item > 0:
            raise ValueError(f"huber needs delta > 0, not {item}")


def _huber(u, delta):
    magnitude = _build("abs")(u)
    inside = relation(sp.LessThan, magnitude, delta)
    value = _build("where")(inside, power(u, sp.Integer(2)) / 2, delta * (magnitude - delta / 2))
    return _float_if_float_in(value, u, delta)


def _float_if_float_in(value, *arguments):
    """huber(0, 1.0) is 0.0: a float anywhere makes the result a float (language reference, section 2)."""
    floating = any(isinstance(a, sp.Expr) and a.has(sp.Float) for a in arguments)
    if floating and isinstance(value, sp.Rational):
        return sp.Float(float(value))
    return value


def log_softmax_line(items: list) -> list:
    """v[k] − logsumexp(v) for each k: log of softmax, stable as logsumexp is (jax.nn.log_softmax)."""
    total = _build("logsumexp")(*items)
    return [item - total for item in items]


# --- integers --------------------------------------------------------------------------


def check_length(n, name: str = "onehot", limit: int = limits.MAX_ELEMENTS) -> int:
    """n as a length: an exact whole number from 1 to `limit` (components by default; a constant tensor of
    the formula, onehot(1, 3), is held whole and bounded as a declared tensor is)."""
    if not (isinstance(n, sp.Expr) and n.is_Integer and n >= 1):
        raise ValueError(f"{name} needs a length that is a whole number of at least 1, not {n}")
    if int(n) > limit:
        raise LimitError(f"{name} of length {n} is above the limit of {limit} components")
    return int(n)


def check_onehot(k, n, limit: int = limits.MAX_ELEMENTS) -> None:
    """onehot(k, n) with a number k: n a length, k a whole number in range."""
    check_length(n, limit=limit)
    if not (isinstance(k, sp.Expr) and k.is_Integer):
        shown = describe_shape(shape_of(k)) if shape_of(k) else to_source(k)  # never SymPy's Matrix([[…]])
        raise ValueError(f"onehot(k, n) needs k to be a whole number (an index) or a tensor of them, not {shown}")
    if not 0 <= int(k) < int(n):
        raise ValueError(f"onehot index {k} is out of range for length {n} (jax.nn.one_hot would give zeros)")


def onehot(k, n):
    """The vector of length n with 1 at index k and 0 elsewhere (exact integers, counted from 0)."""
    check_onehot(k, n)
    return from_elements((int(n),), [sp.S.One if i == int(k) else sp.S.Zero for i in range(int(n))])


def argmax(value):
    """The index of the largest component, the first on a tie; nan wins, as in NumPy and JAX."""
    return _arg(value, "argmax", lambda a, b: a > b)


def argmin(value):
    """The index of the smallest component, the first on a tie; nan wins, as in NumPy and JAX."""
    return _arg(value, "argmin", lambda a, b: a < b)


def _arg(value, name: str, better) -> sp.Integer:
    items = vector_items(value, name)
    if not all(isinstance(e, sp.Expr) and e.is_number and (e.is_comparable or e in (sp.oo, -sp.oo, sp.nan))
               for e in items):
        raise NeedsNumbers(
            f"{name} needs numbers: it is piecewise constant (derivative 0) and has no formula; "
            f"give the point inside, as in {name}(v at x = …)"
        )
    best = 0
    for index, item in enumerate(items):
        if item is sp.nan:
            return sp.Integer(index)
        if bool(better(item, items[best])):
            best = index
    return sp.Integer(best)


__all__ = ["normalize", "cosine", "huber", "check_delta", "log_softmax_line", "onehot", "check_onehot", "check_length", "argmax", "argmin", "vector_items"]
