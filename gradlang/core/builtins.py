"""The builtin function table of the language reference (docs/language.md), section 6.

Each builtin is a `Builtin` record: its implementation (a function of a
`Call`), the number of arguments it takes, and a one-line description and
example for `:help`. The functions of the language (exp, relu, max,
softmax, ...) come from the registry of primitives (gradlang/expr/primitives/):
each record says how it is applied (`APPLY`), and its entry is made here.
The operations written below (diff, sum, simplify, plot, ...) act on whole
values and are not primitives.
"""

from __future__ import annotations


import sympy as sp

from gradlang import limits
from gradlang.core.literal_sizes import proved_constant
from gradlang.core.primitive_entries import ENTRIES
from gradlang.errors import DiffError, LimitError, ShapeError, ValueError
from gradlang.expr import construct, exact
from gradlang.expr.bounded import tidy_each
from gradlang.expr.component_axes import check_row_arguments
from gradlang.lazy import has_numpy, np
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.values import (
    describe_shape,
    elements,
    elementwise,
    from_elements,
    is_condition,
    is_scalar,
    shape_of,
    to_symbolic,
)


from gradlang.core.builtin_table import (  # noqa: F401  (the table's names, read as builtins.X)
    CONSTANTS, CORE, TABLE, Builtin, Call, _no_condition, _numbers_only, _plain, _span, builtin, check_arity, lookup,
)


# --- core -------------------------------------------------------------------


def _derive():
    """derive/derivatives.py, imported on the first derivative or check: a program that takes none (`1 + 1`)
    does not load the reverse-accumulation engine (issue #41)."""
    from gradlang.derive import derivatives

    return derivatives


@builtin("unstopped", 1, 1, "e with every stop_gradient removed", "unstopped(x*sg(x))", "core")
def _unstopped(call: Call):
    return elementwise(unstopped, call.args[0])


@builtin("blocked", 2, 2, "the part of the true derivative the stops removed", "blocked(x*sg(x), x)", "core")
def _blocked(call: Call):
    wrt = _wrt(call, "blocked")
    simplify = lambda value: tidy_each(value, work=limits.BLOCKED_SIMPLIFY_WORK)  # noqa: E731
    result = _derive().blocked(to_symbolic(call.args[0]), wrt, simplify)
    call.services.record("blocked", call, wrt, (), result)
    return result


@builtin("diff", 2, None, "derivative: diff(e, x), diff(e, x, n), diff(e, x, y)", "diff(x^3, x, 2)", "core")
def _diff(call: Call):
    specs = _diff_specs(call)
    result = _derive().diff(to_symbolic(call.args[0]), specs)
    call.services.record("diff", call, None, tuple(specs), result)
    return result


def recorded_variables(call: Call) -> tuple:
    """(wrt, specs) of a derivative call of tensors as explain records it: diff's (symbol, order) pairs."""
    if call.name == "diff":
        return None, tuple(_diff_specs(call))
    return call.args[1], ()


def _diff_specs(call: Call) -> list:
    """(symbol, order) pairs: each variable optionally followed by a literal order."""
    specs: list = []
    for value, node in zip(call.args[1:], call.nodes[1:]):
        if node.kind == "number" and value.is_Integer:
            if not specs:
                raise DiffError("the derivative order must follow a variable").located(_span(node))
            if specs[-1][1] != 1 or value < 0:
                raise DiffError("an order is a non-negative integer after a variable").located(_span(node))
            specs[-1] = (specs[-1][0], int(value))
            if int(value) > limits.MAX_DERIVATIVE_ORDER:
                raise LimitError(
                    f"derivative order {value} is above the limit of {limits.MAX_DERIVATIVE_ORDER}"
                ).located(_span(node))
            continue
        if not is_scalar(value):
            raise DiffError(
                f"diff takes scalar symbols and components, not {describe_shape(shape_of(value))}; "
                "use grad or jacobian for a whole vector"
            ).located(_span(node))
        try:
            specs.append((_derive().check_symbol(value, "diff"), 1))
        except DiffError as error:
            raise error.located(_span(node))
    return specs


def _wrt(call: Call, operation: str):
    try:
        return _derive().check_variables(call.args[1], operation)
    except DiffError as error:
        raise error.located(_span(call.nodes[1]))


def _differentiation(operation: str, derivative: str):
    """A builtin f(e, x) that differentiates e by the variables x (by derive/derivatives.py's function named
    `derivative`) and records it for explain."""

    def apply(call: Call):
        wrt = _wrt(call, operation)
        result = getattr(_derive(), derivative)(to_symbolic(call.args[0]), wrt)
        call.services.record(operation, call, wrt, (), result)
        return result

    return apply


for _name, _derivative, _doc, _example in (
    ("grad", "grad", "gradient of a scalar, shaped like the variables", "grad(x*y, [x, y])"),
    ("jacobian", "jacobian", "matrix of d v_i / d x_j", "jacobian([x*y, x + y], [x, y])"),
    ("hessian", "hessian", "matrix of second partials of a scalar", "hessian(x^2*y, [x, y])"),
    ("backward", "grad", "grad(e, x); inside explain, the forward and backward tables of reverse mode",
     "backward(x*sg(x)*y, [x, y])"),
):
    builtin(_name, 2, 2, _doc, _example, "core")(_differentiation(_name, _derivative))


# --- the primitives: one entry per record of the registry ----------------------


def _elementwise(function):
    def apply(call: Call):
        return elementwise(lambda *args: _float_in_float_out(args[0], construct.apply(function, *args)), *call.args)

    return apply


def _float_in_float_out(argument, result):
    """sign(1.5) is 1.0, not 1: a float anywhere makes the result a float; sin(inf) is nan (IEEE), not AccumBounds."""
    if isinstance(result, sp.AccumBounds):
        return sp.nan
    floating = isinstance(argument, sp.Float) or (isinstance(argument, sp.Expr) and argument.is_number
                                                   and argument.has(sp.Float))
    if floating and isinstance(result, sp.Number) and not result.is_Float:
        return sp.Float(float(result)) if result.is_finite else result
    return result


def _components(call: Call, index: int = 0) -> list:
    return elements(to_symbolic(call.args[index]))  # conditions were refused on the way in (builtin)


def _reduction(function):
    return lambda call: function(*_components(call))


def _extremum(reduction):
    def apply(call: Call):
        if len(call.args) == 1:
            return reduction(*_components(call))
        return elementwise(reduction, *call.args)

    return apply


def _share(share_class):
    def apply(call: Call):
        k = call.args[0]
        if not (is_scalar(k) and k.is_Integer and 0 <= int(k) < len(call.args) - 1):
            raise ValueError(f"{call.name}(k, a0, …, an) needs k to be an index among the arguments")
        return elementwise(lambda *args: share_class(k, *args), *call.args[1:])  # like max(a, W): per component

    return apply


def _rows(function):
    """A function of all components returning one value per component, applied to each row of a matrix."""

    def apply(call: Call):
        value = to_symbolic(call.args[0])
        shape = shape_of(value)
        check_row_arguments(shape)
        if len(shape) == 2:
            return sp.ImmutableMatrix([function(*value.row(i)) for i in range(shape[0])])
        return from_elements(shape, function(*elements(value)))

    return apply


def _where(function):
    def apply(call: Call):
        condition = to_symbolic(call.args[0])
        if not all(is_condition(c) for c in elements(condition)):
            raise ValueError("the first argument of where must be a condition such as x > 0").located(_span(call.nodes[0]))
        return elementwise(function, condition, call.args[1], call.args[2])

    return apply


# How a record's `apply` maps its SymPy function over gradlang values.
APPLY = {
    "elementwise": _elementwise,
    "reduction": _reduction,
    "extremum": _extremum,
    "share": _share,
    "rows": _rows,
    "where": _where,
}


def _on_first_call(name: str, apply: str):
    """The entry's function, made from the primitive's record on its first call: the record's module (its
    SymPy class and what that imports) is not loaded at start-up (issue #41; the rows are primitive_entries.py's)."""
    made: list = []

    def call_it(call: Call):
        if not made:
            from gradlang.expr import primitives

            made.append(APPLY[apply](primitives.lookup(name).build))
        return made[0](call)

    return call_it


for _name, _aliases, _arity, _group, _apply, _doc, _example in ENTRIES:
    conditions = (0,) if _apply == "where" else ()
    builtin(_name, *_arity, _doc, _example, _group, _aliases, conditions)(_on_first_call(_name, _apply))


# --- reductions that are not primitives ------------------------------------------

# The builtins that compute (the primitives and the reductions below), as opposed to
# those that differentiate, simplify or plot: SymPy's rewrites may widen their domain
# (gradlang.expr.domain keeps it). where only selects: the branch it drops is not a rewrite.
ARITHMETIC = frozenset({name for entry in ENTRIES for name in (entry[0], *entry[1])} - {"where"}
                       | {"sum", "mean", "prod", "dot"})


@builtin("sum", 1, 1, "sum of all components", "sum([1, 2, 3])", "reduction", ("reduce_sum",))
def _sum(call: Call):
    return sp.Add(*_components(call))


@builtin("mean", 1, 1, "mean of all components", "mean([1, 2, 3])", "reduction", ("reduce_mean",))
def _mean(call: Call):
    items = _components(call)
    return sp.Add(*items) / len(items)


@builtin("prod", 1, 1, "product of all components", "prod([1, 2, 3])", "reduction")
def _prod(call: Call):
    return exact.product(_components(call))


@builtin("dot", 2, 2, "dot product of two vectors", "dot([1, 2], [3, 4])", "reduction")
def _dot(call: Call):
    a, b = (to_symbolic(v) for v in call.args)
    if shape_of(a) != shape_of(b) or len(shape_of(a)) != 1:
        raise ShapeError(f"dot takes two vectors of one length, got {describe_shape(shape_of(a))} and {describe_shape(shape_of(b))}")
    return sp.Add(*[x * y for x, y in zip(elements(a), elements(b))])


@builtin("len", 1, 1, "number of components of a vector (rows of a matrix)", "len([1, 2, 3])", "reduction")
def _len(call: Call):
    shape = shape_of(call.args[0])
    if not shape:
        raise ShapeError("len takes a vector or matrix, not a scalar")
    return sp.Integer(shape[0])


# --- vectors ------------------------------------------------------------------


@builtin("linspace", 3, 3, "n evenly spaced floats from a to b", "linspace(-3, 3, 7)", "vector")
def _linspace(call: Call):
    a, b, n = call.args
    if not (is_scalar(n) and n.is_Integer and n >= 1):
        message = "linspace(a, b, n) needs n to be a whole number of at least 1: gradlang has no empty vectors"
        raise ValueError(message).located(_span(call.nodes[2]))
    if int(n) > limits.MAX_NUMERIC_POINTS:
        raise LimitError(f"linspace of {n} points is above the limit of {limits.MAX_NUMERIC_POINTS}").located(_span(call.nodes[2]))
    for value, node in ((a, call.nodes[0]), (b, call.nodes[1])):
        if not (is_scalar(value) and value.is_number and (value.is_comparable or value is sp.nan)):
            raise ValueError("linspace needs numbers for its end points").located(_span(node))
    return _evenly_spaced(float(a), float(b), int(n))


def _evenly_spaced(a: float, b: float, n: int) -> np.ndarray:
    """NumPy's linspace, unless b - a overflows: then a*(1 - t) + b*t, as jnp.linspace computes it.

    NumPy steps by (b - a)/(n - 1), so linspace(-1e308, 1e308, 3) is [nan, inf, 1e308] with
    overflow warnings; JAX gives [-1e308, 0, 1e308]. Where b - a is finite NumPy's numbers are
    kept (linspace(-3, 3, 7) has an exact 2.0, JAX's formula 1.9999999999999998)."""
    if not has_numpy():  # the browser page: the same numbers as a SymPy vector of floats (pure_points.py)
        from gradlang.core.pure_points import linspace

        return linspace(a, b, n)
    with np.errstate(all="ignore"):  # inf and nan as IEEE says; NumPy's warnings are not the user's
        if n == 1 or np.isfinite(b - a):
            return np.linspace(a, b, n)
        t = np.arange(n - 1) / (n - 1)
        return np.append(a * (1 - t) + b * t, b)


# --- algebra ------------------------------------------------------------------


def _algebra(name: str, function):
    """A builtin f(e) applying a SymPy algebra function to each component up to a size bound.

    A formula is simplified as a formula, whatever its sizes are spelled (at R^3 as at R^n); at literal
    sizes, where its components simplify to numbers, those numbers are the answer (the taste program's
    two softmax Jacobians differ by the zero matrix, which the formula's algebra does not prove)."""
    def apply(call):
        value = call.services.bounded(function, call.args[0], name)
        return proved_constant(value, lambda parts: tidy_each(parts, function))

    return apply


for _name, _function, _doc, _example in (
    ("simplify", sp.simplify, "simplify (components up to a size bound)", "simplify(sin(x)^2 + cos(x)^2)"),
    ("expand", sp.expand, "multiply out products and powers", "expand((x + 1)^2)"),
    ("factor", sp.factor, "factor a polynomial", "factor(x^2 - 1)"),
):
    builtin(_name, 1, 1, _doc, _example, "algebra")(_algebra(_name, _function))


@builtin("N", 1, 1, "to floating point", "N(pi)", "algebra")
def _numeric(call: Call):
    value = call.args[0]
    if isinstance(value, np.ndarray):
        return value
    value = elementwise(_evalf, value)
    return proved_constant(value, lambda parts: elementwise(_evalf, parts))  # a formula of numbers: them


def _evalf(e):
    return e.evalf(15) if isinstance(e, sp.Expr) else e


# The builtins of section 6 that are compositions live in their own modules (this one is full);
# importing them registers them in TABLE.
from gradlang.core import builtins_vectors  # noqa: E402,F401
from gradlang.core import builtins_axes  # noqa: E402
from gradlang.core import builtins_joins  # noqa: E402,F401
from gradlang.core import builtins_shapes  # noqa: E402,F401  (broadcast_to, expand_dims, squeeze, transpose)
from gradlang.core.loading import READS_TEXT  # noqa: E402,F401  (the evaluator asks builtins)
from gradlang.core import builtins_tools  # noqa: E402,F401  (gradcheck, plot)
from gradlang.core import builtins_products  # noqa: E402,F401  (einsum, reshape, take, scatter_add)
from gradlang.core import builtins_filled  # noqa: E402,F401  (components, ones, zeros)

builtins_axes.give_axes()
