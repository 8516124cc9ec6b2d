"""Derivatives with stop_gradient: diff, grad, jacobian, hessian and blocked.

The one idea: before SymPy differentiates, every stopped subexpression and
every piecewise-constant function application is swapped for a fresh constant
placeholder symbol (`freeze`); after, the placeholders are swapped back
(`thaw`). So `stop_gradient(u)` contributes nothing and its argument is never
differentiated (SymPy would otherwise differentiate it and multiply by zero,
which is ruinously slow on large arguments), while the stop itself survives
into the result, so higher derivatives come out right.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang import limits
from gradlang.derive import dag
from gradlang.derive.requests import BLOCKED_SIMPLIFY_SIZE, DerivativeRequest, _READABLE, readable  # noqa: F401 (read here too)
from gradlang.errors import DiffError, LimitError, ShapeError
from gradlang.expr.functions import RealAbs
from gradlang.expr.primitives import constant_classes
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.engine import TensorList
from gradlang.expr.source import to_source
from gradlang.expr.values import elements, from_elements, is_scalar, shape_of, describe_shape
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import dag_atoms, dag_has, rebuild, tree_size

TREE_WORK_LIMIT = 2_000  # tree nodes x variables that sympy.diff may be asked to walk in one call

_CONSTANT_CLASSES = constant_classes()  # stop_gradient and the piecewise-constant functions


@dataclass(frozen=True)
class Frozen:
    """An expression with its constant parts replaced by placeholder symbols."""

    expr: sp.Expr
    thaw_map: dict

    def thaw(self, expr: sp.Expr) -> sp.Expr:
        return rebuild(expr, self.thaw_map) if self.thaw_map else expr


def freeze(expr: sp.Expr) -> Frozen:
    """Swap stopped and piecewise-constant subexpressions for constant symbols."""
    constants = dag_atoms(expr, *_CONSTANT_CLASSES)
    if not constants:
        return Frozen(expr, {})
    placeholders = {e: sp.Dummy("c", real=True) for e in constants}
    return Frozen(rebuild(expr, placeholders), {d: e for e, d in placeholders.items()})


def derivative(expr: sp.Expr, symbol: sp.Symbol, order: int = 1) -> sp.Expr:
    """The order-th derivative of a scalar expression, stops treated as constants."""
    return _repeated([expr], [symbol] * order)[0]


def _repeated(items: list, symbols: list) -> list:
    """The items differentiated by each symbol in turn, each derivative within the size bound before the next.

    A first derivative is linear in the size of what it differentiates (one pass
    over the DAG), but each further order multiplies the size by a constant:
    the 34th derivative of x^x has 150 000 distinct subexpressions and the 100th
    would never finish. So a derivative that is to be differentiated again may
    have at most limits.MAX_DERIVATIVE_NODES distinct subexpressions more than
    the expression it came from: a size, so the answer does not depend on the machine."""
    allowed = limits.MAX_DERIVATIVE_NODES + len(build_dag(items)) if len(symbols) > 1 else None
    for order, symbol in enumerate(symbols, 1):
        items = _derivatives_by(items, symbol)
        size = len(build_dag(items)) if allowed is not None and order < len(symbols) else 0
        if size and size > allowed:
            raise LimitError(
                f"the derivative of order {order} has {size} distinct subexpressions, and one is differentiated "
                f"again only up to {limits.MAX_DERIVATIVE_NODES} more than the expression had ({allowed}); "
                "give numbers first for a derivative at a point"
            )
    return items


def _derivatives_by(items: list, symbol: sp.Symbol) -> list:
    """d e / d symbol for each e: sympy.diff when small, else one forward or backward pass on the DAG."""
    if _on_tree(items, 1):
        return [tree_derivative(e, symbol) for e in items]
    if not dag_has(items, symbol):
        return [sp.S.Zero] * len(items)
    return [row[0] for row in dag.jacobian_rows(items, [symbol])]


def _gradient(expr: sp.Expr, symbols: list) -> list:
    """First derivatives of a scalar by many symbols: one backward pass unless tiny."""
    if _on_tree([expr], len(symbols)):
        return tree_gradient(expr, symbols)
    return dag.gradient_list(expr, symbols)


def _on_tree(items: list, variables: int) -> bool:
    """A derivative by one variable whose tree is small: sympy.diff, whose forms explain's derivations share.

    sympy.diff differentiates each component by each variable separately and
    repeats every shared node once per path to it. So it is used only for the
    derivatives a reader checks by hand, by one variable, at most
    TREE_WORK_LIMIT tree nodes; a derivative by several variables (grad,
    jacobian, hessian) is always one reverse (or forward) pass per output (or
    input) on the DAG, linear in its size whatever the size. Inside
    `readable()`, any derivative whose tree work is bounded takes the tree path.
    Never with an infinity: SymPy's Leibniz rule multiplies a factor's zero
    derivative by the others, and 0*oo is nan (diff(y/0.0*z, y) would be nan,
    not inf*z; the DAG's product rule multiplies only the varying factors).
    """
    if variables != 1 and not _READABLE.get():
        return False
    budget = TREE_WORK_LIMIT // max(variables, 1)
    return tree_size(items, cap=budget + 1) <= budget and not dag_has(items, sp.oo, -sp.oo, sp.zoo)


def tree_derivative(expr: sp.Expr, symbol: sp.Symbol) -> sp.Expr:
    """sympy.diff with the stops frozen: the tree path (and the oracle of the DAG engine's tests)."""
    return tree_gradient(expr, [symbol])[0]


def tree_gradient(expr: sp.Expr, symbols) -> list[sp.Expr]:
    """First derivatives by many symbols on the tree path, freezing once.

    An abs whose argument SymPy cannot prove real is differentiated as
    gradlang's RealAbs (sign(u)*u', expr/functions.py), never through re and im.
    """
    frozen = freeze(expr)
    present = dag_atoms(frozen.expr, sp.Symbol)
    real = _real_abs(frozen.expr)
    return [_plain_abs(frozen.thaw(sp.diff(real, s))) if s in present else sp.S.Zero for s in symbols]


def _real_abs(expr: sp.Expr) -> sp.Expr:
    if not expr.has(sp.Abs):
        return expr
    return expr.replace(lambda e: isinstance(e, sp.Abs) and not e.args[0].is_extended_real,
                        lambda e: RealAbs(e.args[0]))


def _plain_abs(expr: sp.Expr) -> sp.Expr:
    return expr.replace(RealAbs, sp.Abs) if expr.has(RealAbs) else expr


def check_symbol(value, operation: str) -> sp.Symbol:
    """A scalar symbol or component to differentiate by, or a DiffError."""
    if isinstance(value, sp.Symbol) and not isinstance(value, sp.Dummy):
        return value
    raise DiffError(f"{operation} differentiates with respect to a symbol, not {_show(value)}")


def check_variables(value, operation: str):
    """A scalar symbol, or a vector/matrix whose every component is a symbol (or, for grad, a list of those)."""
    if isinstance(value, TensorList) and operation == "grad":
        return TensorList(*(check_variables(v, operation) for v in value.entries))
    if is_scalar(value):
        return check_symbol(value, operation)
    if hasattr(value, "shape") and all(isinstance(e, sp.Symbol) for e in elements(value)):
        return value
    raise DiffError(f"{operation} differentiates with respect to symbols, and {_show(value)} has non-symbols")


def _show(value) -> str:
    if is_scalar(value):
        return f"'{to_source(value)}'"
    return describe_shape(shape_of(value))


def diff(expr, specs: list[tuple[sp.Symbol, int]]):
    """diff(e, x, n, y, ...): mixed partials left to right, elementwise on arrays (forward mode)."""
    total = sum(n for _, n in specs)
    if total > limits.MAX_DERIVATIVE_ORDER:
        raise LimitError(f"derivative order {total} is above the limit of {limits.MAX_DERIVATIVE_ORDER}")
    items = _repeated(elements(expr), [symbol for symbol, n in specs for _ in range(n)])
    return items[0] if is_scalar(expr) else from_elements(shape_of(expr), items)


def grad(expr, wrt):
    """Gradient of a scalar, shaped like the variables."""
    if not is_scalar(expr):
        raise ShapeError(f"grad needs a scalar expression, got {describe_shape(shape_of(expr))}; use jacobian")
    if isinstance(wrt, TensorList):
        return _by_list(expr, wrt.entries)
    if is_scalar(wrt):
        return derivative(expr, wrt)
    return from_elements(shape_of(wrt), _gradient(expr, elements(wrt)))


def _by_list(expr, variables: tuple) -> TensorList:
    """grad(L, [W, b]) by components: one reverse pass by all their components, split back per variable."""
    symbols = [elements(v) for v in variables]
    flat = _gradient(expr, [s for group in symbols for s in group])
    out, start = [], 0
    for variable, group in zip(variables, symbols):
        part = flat[start:start + len(group)]
        out.append(part[0] if is_scalar(variable) else from_elements(shape_of(variable), part))
        start += len(group)
    return TensorList(*out)


def jacobian(expr, wrt):
    """d expr_i / d x_j: of a rank-r value by a rank-s variable a tensor of rank r + s, its axes expr's then x's
    (section 3b; a scalar expr or scalar x gives x's or expr's shape, as in JAX)."""
    if is_scalar(expr):
        return grad(expr, wrt)
    if is_scalar(wrt):
        return diff(expr, [(wrt, 1)])
    items, symbols = elements(expr), elements(wrt)
    _check_size(len(items) * len(symbols))
    if _on_tree(items, len(symbols)):
        rows = [tree_gradient(e, symbols) for e in items]
    else:
        rows = dag.jacobian_rows(items, symbols)
    shape = tuple(shape_of(expr)) + tuple(shape_of(wrt))
    if len(shape) == 2:
        return sp.ImmutableMatrix(rows)
    return sp.ImmutableDenseNDimArray([e for row in rows for e in row], shape)


def hessian(expr, wrt):
    """Matrix of second partials of a scalar expression (forward over reverse on the DAG)."""
    if not is_scalar(expr):
        raise ShapeError(f"hessian needs a scalar expression, got {describe_shape(shape_of(expr))}")
    if len(shape_of(wrt)) == 2:
        raise ShapeError(f"hessian takes a scalar or vector of variables, got {describe_shape(shape_of(wrt))}")
    if is_scalar(wrt):
        return derivative(expr, wrt, 2)
    symbols = elements(wrt)
    _check_size(len(symbols) ** 2)
    if _on_tree([expr], len(symbols) ** 2):
        return sp.ImmutableMatrix([tree_gradient(d, symbols) for d in tree_gradient(expr, symbols)])
    return sp.ImmutableMatrix(dag.hessian_rows(expr, symbols))


def derivative_like(expr, wrt):
    """The derivative in the shape blocked() promises: diff, grad or jacobian."""
    if is_scalar(wrt):
        return diff(expr, [(wrt, 1)])
    if is_scalar(expr):
        return grad(expr, wrt)
    return jacobian(expr, wrt)


def blocked(expr, wrt, simplify, take=None):
    """The part of the true derivative that the stops removed, simplified.

    It is a value, not something to differentiate further, so the stops left in
    the surrogate derivative are removed too: for x*sg(x) it is 2x - x = x.
    `take(e)` is the derivative compared (default: derivative_like(e, wrt));
    explain passes its own for diff(e, x, y, ...) and hessian.
    """
    take = take or (lambda e: derivative_like(e, wrt))
    with readable():
        true = take(unstopped(expr))
        surrogate = take(expr)
    difference = from_elements(shape_of(true), [unstopped(a - b) for a, b in zip(elements(true), elements(surrogate))])
    if sum(tree_size(e) for e in elements(difference)) > BLOCKED_SIMPLIFY_SIZE:
        return difference  # bounded by size, so the printed result does not depend on the machine
    return simplify(difference)


def _check_size(count: int) -> None:
    if count > limits.MAX_ELEMENTS:
        raise LimitError(f"the result would have {count} components, above the limit of {limits.MAX_ELEMENTS}")
