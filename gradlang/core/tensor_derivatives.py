"""Derivatives at the tensor level: grad, jacobian, hessian, diff and blocked of tensor formulas.

The variables are declared tensors, real scalar symbols, or a list of scalar
symbols (`grad(e, [a, b])`, section 5): by a list each entry is taken in turn,
and the results are put in a list again, which `tensor_values.checked` makes
one tensor value where its entries hold tensors of symbolic size. By a list
that holds a whole tensor (`grad(L, [W1, b1, W2])`, section 3b) one reverse
pass gives every gradient, a `TensorList` (expr/tensor/listed.py). A component
as a variable (`diff(e, x[0])`) is taken at literal sizes, by components.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.core.literal_sizes import proved_constant
from gradlang.derive.requests import BLOCKED_SIMPLIFY_SIZE
from gradlang.errors import DiffError, DiffNeedsComponents, LimitError, ShapeError, ShapeNeedsComponents
from gradlang.expr.bounded import tidy_each
from gradlang.expr.walk import tree_size
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.tensor import nodes as t
from gradlang.expr.source import to_source
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor.nodes import Var, rank, shape_of
from gradlang.expr.values import from_elements


def _reverse():
    """derive/tensor/reverse.py, imported on the first tensor derivative: a program that takes none does not
    load the tensor passes (issue #41)."""
    from gradlang.derive.tensor import reverse

    return reverse


def _forward():
    from gradlang.derive.tensor import forward

    return forward


def _grad(args):
    e, x = args
    if isinstance(x, TensorList):  # grad(L, [W1, b1, W2]): one reverse pass, one gradient per entry
        return TensorList(*_reverse().grads(e, _tensors(x, "grad")))
    listed = _scalars(x, "grad")
    if listed is not None:
        return from_elements((len(listed),), [_reverse().grad(e, a) for a in listed])
    return _reverse().grad(e, _variable(x, "grad"))


def _jacobian(args):
    v, x = args
    listed = _scalars(x, "jacobian")
    if listed is not None:
        return _jacobian_by_list(v, listed)
    x = _variable(x, "jacobian")
    if rank(x) == 0:  # by a scalar: the tangent, shaped like v (jacobian(x*a, a) is x)
        return _forward().tangent(v, x)
    if rank(v) != 1 or rank(x) != 1:  # at literal sizes the component engine's jacobian takes any shape
        raise ShapeNeedsComponents(f"jacobian of {shapes.describe(shape_of(v))} by {shapes.describe(shape_of(x))} (a tensor of "
                                   f"rank {rank(v) + rank(x)}) is taken by components: declare the sizes as numbers")
    return _forward().tangent(v, x)


def _jacobian_by_list(v, listed: list):
    """jacobian(v, [a, b]): by each scalar, a list for a scalar v; for a vector v, column j is ∂v/∂a_j (Σ ∂v e_jᵀ)."""
    columns = [_forward().tangent(v, a) for a in listed]
    if rank(v) == 0:
        return from_elements((len(listed),), columns)
    if rank(v) != 1:
        raise ShapeNeedsComponents(f"jacobian by a list takes a scalar or a vector, got {shapes.describe(shape_of(v))}")
    count = len(listed)
    terms = [t.Outer(c, t.OneHot(j, count)) for j, c in enumerate(columns) if c != 0]
    return sp.Add(*terms) if terms else t.Zeros(shape_of(v)[0], count)


def _hessian(args):
    e, x = args
    if rank(e) != 0:  # the pass's own error would name grad, which the user did not write
        raise ShapeError(f"hessian needs a scalar expression, got {shapes.describe(shape_of(e))}")
    listed = _scalars(x, "hessian")
    if listed is not None:
        rows = [_reverse().grad(e, a) for a in listed]
        return sp.ImmutableMatrix([[_forward().tangent(g, b) for b in listed] for g in rows])
    x = _variable(x, "hessian")
    if rank(x) != 1:
        raise ShapeError(f"hessian takes a vector variable, got {shapes.describe(shape_of(x))}")
    return _forward().tangent(_reverse().grad(e, x), x)


def _diff(args):
    """diff(e, a, b, …) by scalars, left to right; a literal order after a variable repeats it (diff(e, a, 2))."""
    e, *rest = args
    specs: list = []  # [variable, order], as the component engine's _diff_specs reads them
    for position, variable in enumerate(rest, 1):
        if isinstance(variable, sp.Integer):
            _ordered(specs, variable, position)
            continue
        try:
            specs.append([_variable(variable, "diff", scalar=True), 1])
        except DiffError as error:
            error.argument = position  # placed at that argument by call()
            raise
    for variable, order in specs:
        for _ in range(order):
            e = _forward().tangent(e, variable)
    return e


def _ordered(specs: list, order, position: int) -> None:
    """The order of the variable before it: after a variable, once, from 0 (diff(e, a, 0) is e) to the limit."""
    if not specs or specs[-1][1] != 1 or order < 0:
        error = DiffError("the derivative order must follow a variable" if not specs
                          else "an order is a non-negative integer after a variable")
        error.argument = position
        raise error
    if order > limits.MAX_DERIVATIVE_ORDER:
        raise LimitError(f"derivative order {order} is above the limit of {limits.MAX_DERIVATIVE_ORDER}")
    specs[-1][1] = int(order)


def _blocked(args):
    """The part of the true derivative the stops removed; a value, so the stops left in it are removed too."""
    from gradlang.expr.tensor.broadcast import full
    from gradlang.derive.tensor.rewrite import tidy

    e, x = args
    x = _variable(x, "blocked")
    take = _reverse().grad if rank(e) == 0 else _forward().tangent
    difference = unstopped(take(unstopped(e), x) - take(e, x))
    if sp.count_ops(difference) <= _BLOCKED_EXPAND_OPS:
        difference = sp.expand(difference)
    value = full(tidy(difference), shape_of(e) + shape_of(x))  # a stop that blocks nothing: zeros of that shape
    return proved_constant(value, _components_simplified)


_BLOCKED_EXPAND_OPS = 200  # a bound by size, so the printed result does not depend on the machine


def _components_simplified(parts):
    """blocked's simplification of a literal-size difference's components; None above its size bound."""
    if sum(tree_size(e) for e in _entries(parts)) > BLOCKED_SIMPLIFY_SIZE:
        return None
    return tidy_each(parts, work=limits.BLOCKED_SIMPLIFY_WORK)


def _entries(value) -> list:
    return list(value) if isinstance(value, (sp.NDimArray, sp.MatrixBase)) else [value]


def _scalars(x, operation: str):
    """The scalar symbols of a list variable ([a, b]), or None for anything that is not a list."""
    if isinstance(x, t.Literal) and len(x.shape) == 1:
        entries = list(x.entries)
    elif isinstance(x, sp.NDimArray) and len(x.shape) == 1:
        entries = list(x)
    else:
        return None
    return [_variable(e, operation, scalar=True) for e in entries]


def _tensors(x: TensorList, operation: str) -> list:
    """The variables of a list that holds a whole tensor: declared tensors and scalar symbols, each once
    placed at its entry; a component beside a whole tensor is refused (take it by the whole tensor)."""
    variables = []
    try:
        for entry in x.entries:
            if isinstance(entry, t.Entry):
                raise DiffError(f"{operation} by a list of tensors takes declared tensors and scalar symbols, not "
                                f"the component {to_source(entry)}: take the whole tensor and index its gradient")
            variables.append(_variable(entry, operation))
    except DiffError as error:
        error.argument = 1  # placed at the list by call()
        raise
    return variables


def _variable(x, operation: str, scalar: bool = False):
    """A declared tensor or a real scalar symbol; a component at a symbolic size is refused."""
    if isinstance(x, Var) and not scalar:
        return x
    if isinstance(x, sp.Symbol) and x.is_real and not shapes.is_size(x) and not isinstance(x, Var):
        return x
    if isinstance(x, t.Entry):
        raise DiffNeedsComponents(f"{operation} by one component is taken at a literal size: declare the size as a number")
    if isinstance(x, Var):
        raise DiffError(f"{operation} takes scalar symbols and components, not {shapes.describe(x.shape)}; "
                        "use grad or jacobian for a whole vector")
    if isinstance(x, (sp.NDimArray, sp.MatrixBase, t.Literal)):
        raise DiffError(f"{operation} takes a list of scalar symbols, not a list of lists")
    raise DiffError(f"{operation} differentiates with respect to a declared vector, matrix or scalar symbol")


def _backward(args):
    """backward(e, x) is grad(e, x); by a declared vector or matrix, at any size, explain shows the tensor
    reverse pass (core/explain_views.py), so `R^3` reads as `R^n`; by a scalar or a component the tape of
    components answers (the component path)."""
    from gradlang.expr.tensor.lower import symbolic

    if not any(symbolic(a) for a in args) and not (isinstance(args[1], Var) and t.shape_of(args[1])):
        raise ShapeNeedsComponents("backward by a scalar or a component is the tape of components")
    return _grad(args)


TABLE = {"grad": _grad, "jacobian": _jacobian, "hessian": _hessian, "diff": _diff, "blocked": _blocked,
         "backward": _backward}
