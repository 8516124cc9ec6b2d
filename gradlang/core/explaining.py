"""The explain statement's surface: the components it selects, its point.

Its options (`explain[depth=1]`, `explain[unfold]`) are read with the rest of
its syntax (syntax/lower.py). `explain grad(e, x)[1]` and
`explain jacobian(f, x)[i, j]` derive only the selected components (the
request is lowered to its components, then narrowed, before anything is
derived); `explain … at x = v` gives the point at which the closing check
(explain_check.py) shows numbers; the user's bindings to tensor formulas are
the names a tensor pass shows (explain_views.py chooses each request's view);
`jacobian(grad(L, x), x)` is shown as the hessian it is (of_gradients).
The session and the evaluator call these; nothing here evaluates the statement itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp
from gradlang.derive.requests import DerivativeRequest
from sympy import Basic

from gradlang.expr.engine import TensorList, Var, involves, is_size, is_tensor, lowered, nodes as t, symbolic

from gradlang import limits
from gradlang.errors import LimitError
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import tree_size
from gradlang.expr.values import elements, from_elements, is_scalar, shape_of, to_symbolic
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import FLAGS, OPTIONS

_SELECTABLE = ("diff", "grad", "jacobian", "hessian", "blocked")


# --- components ---------------------------------------------------------------


@dataclass(frozen=True)
class SelectedRequest(DerivativeRequest):
    """A derivative request narrowed to the components an index selects: grad(e, x)[1].

    whole is the request as written and indices the (non-negative) positions,
    so a derivation can be titled as the user wrote it.
    """

    whole: object = None
    indices: tuple = ()


def selected(body: lo.Node, derivations: list, evaluate) -> list:
    """The derivations, with the one the statement indexes narrowed to the selected components.

    Only an index applied directly to a derivative call narrows it (`grad(e, x)[1]`,
    possibly under `at`); `evaluate` evaluates an index node (already checked by the
    statement's own evaluation).
    """
    node = body.body if isinstance(body, lo.At) else body
    if not (isinstance(node, lo.Index) and isinstance(node.base, lo.Call)):
        return derivations
    call = node.base
    if call.name not in _SELECTABLE:
        return derivations
    span = call.span
    indices = [int(to_symbolic(evaluate(argument))) for argument in node.indices]
    return [_narrowed(r, indices) or r if r.span == span else r for r in derivations]


def _narrowed(request, indices: list):
    """The request for the selected components only (None: no narrower request; all are derived).

    A request on a tensor formula at literal sizes is lowered to its components first: a selected
    component is derived by the rule table (explain_views.py). Entry k of grad(L, [W, b]) is the
    gradient by its k-th variable, derived whole as grad(L, W) is."""
    if isinstance(request.wrt, TensorList):
        if len(indices) != 1:
            return None
        k = indices[0] % len(request.wrt.entries)
        return replace(request, wrt=request.wrt.entries[k], result=request.result.entries[k])
    if is_tensor(request.expr) and isinstance(request.wrt, Var) and t.shape_of(request.wrt):
        tensor = _tensor_selection(request, indices)
        if tensor is not None:
            return tensor
    return narrowed_to_components(request, indices)


def narrowed_to_components(request, indices: list):
    """The request lowered to its components, narrowed to the selected ones (the rule table derives them)."""
    request = replace(request, expr=lowered(request.expr), wrt=lowered(request.wrt), result=lowered(request.result))
    result = to_symbolic(request.result)
    indices = tuple(i % n for i, n in zip(indices, shape_of(result)))
    common = dict(result=_pick(result, indices), whole=request, indices=indices)
    if request.operation == "hessian":
        if len(indices) != 2:
            return None
        variables = to_symbolic(request.wrt)
        specs = tuple((variables[i], 1) for i in indices)
        return _selected(request, operation="diff", specs=specs, **common)
    expr = to_symbolic(request.expr)
    own = len(shape_of(expr))
    if request.operation == "diff":
        return _selected(request, expr=_pick(expr, indices), **common)
    wrt = to_symbolic(request.wrt)
    return _selected(request, expr=_pick(expr, indices[:own]), wrt=_pick(wrt, indices[own:]), **common)


def _tensor_selection(request, indices: list):
    """The selected entries of a derivative of a tensor formula by a declared tensor, kept as formulas: the
    tensor pass derives the whole and picks them (explain_views.py), at `R^3` as at `R^n`; `whole` is the
    request as written. None when the indices do not pick from the result as the language indexes."""
    from gradlang.core.tensor_values import index
    from gradlang.errors import GradlangError

    try:
        result = index(request.result, [sp.Integer(i) for i in indices])
    except GradlangError:
        return None
    positions = tuple(int(i % n) if getattr(n, "is_Integer", False) else i
                      for i, n in zip(indices, t.shape_of(request.result)))
    return _selected(request, result=result, whole=request, indices=positions)


def _selected(request, **changes) -> SelectedRequest:
    fields = {name: getattr(request, name) for name in DerivativeRequest.__dataclass_fields__}
    return SelectedRequest(**{**fields, **changes})


def _pick(value, indices: tuple):
    """value[i], value[i, j], or row i of a matrix, as the language indexes."""
    if not indices or is_scalar(value):
        return value
    shape = shape_of(value)
    if len(shape) == 1:
        return value[indices[0]]
    if len(indices) == 2:
        return value[indices[0], indices[1]]
    return from_elements((shape[1],), list(value.row(indices[0])))


def whole_request(request):
    """The request as the user wrote it (before any selection)."""
    return getattr(request, "whole", None) or request


# --- the point ----------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """Where `explain … at …` evaluates: (name as written, value) to show, (symbol, value) to substitute."""

    shown: tuple
    pairs: tuple


def point(body: lo.Node, evaluator) -> Point | None:
    """The statement's point, when it is `e at x = v, …` with one value per symbol."""
    if not isinstance(body, lo.At):
        return None
    bindings = body.bindings
    pairs, batch = evaluator._bindings(bindings, {})
    if batch:
        return None  # a list given to a scalar: many points, no single one to check at
    shown = tuple((_target_text(b.target), evaluator.evaluate(b.value)) for b in bindings)
    return Point(shown, tuple(pairs))


def _target_text(target: lo.Target) -> str:
    return f"{target.name}[{', '.join(target.indices)}]" if target.indices else target.name


__all__ = ["FLAGS", "OPTIONS", "Point", "SelectedRequest", "point", "selected", "whole_request"]


def check_printable(derivations: list) -> None:
    """Refuse early the derivations too large to derive or to print, by their DAGs: the distinct nodes of the
    expression derived (limits.MAX_EXPLAINED_NODES) and the arguments of the result (limits.MAX_PRINTED_NODES).

    Even with its shared parts named, a printed result writes every argument of
    every distinct subexpression once, so the arguments of its DAG are a lower
    bound on its printed size. softmax of 1000 components has a million (each
    component holds the whole row): explain used to derive and check it for
    minutes before the printer refused it (issue 29, row 19). The size as a tree
    is no bound here: the tensor passes and the printers work per distinct node,
    and SwAV's two unrolled Sinkhorns over shared logits are 2^30 nodes as a tree
    in a few hundred distinct ones (issue 39); the rule table's own bound is
    check_tree, asked here of a request over scalars (only the rule table and the backward view show one) and
    by the views by components after lowering."""
    for request in derivations:
        if not involves(request.expr):
            check_tree(request)
        items = [e for e in elements(to_symbolic(request.expr)) if isinstance(e, Basic)]
        distinct = len(build_dag(items).nodes) if items else 0
        if distinct > limits.MAX_EXPLAINED_NODES:
            raise LimitError(
                f"explain derives an expression of at most {limits.MAX_EXPLAINED_NODES} distinct subexpressions, "
                f"and this one has {distinct}; ask for the derivative without explain", request.span)
        items = [e for e in elements(to_symbolic(request.result)) if isinstance(e, Basic)]
        arguments = sum(len(kids) for kids in build_dag(items).children)
        if arguments > limits.MAX_PRINTED_NODES:
            raise LimitError(
                f"this derivative written out has at least {arguments} nodes even with its shared parts named, "
                f"above the limit of {limits.MAX_PRINTED_NODES}; explain selected components "
                "(explain grad(e, x)[0]) or a smaller size", request.span)


def check_tree(request) -> None:
    """The expression the rule table derives step by step, written out as a tree, within
    limits.MAX_EXPLAINED_TREE_NODES.

    The rule table applies SymPy's own arithmetic, whose assumptions walk a shared
    subexpression once per path to it: `explain diff(f30, x)` of a doubling
    chain (60 distinct subexpressions, 2^30 as a tree) never ended. A real bound
    of the rule table's work, not of the tensor passes' (check_printable)."""
    items = [e for e in elements(to_symbolic(request.expr)) if isinstance(e, Basic)]
    if items and tree_size(items, cap=limits.MAX_EXPLAINED_TREE_NODES + 1) > limits.MAX_EXPLAINED_TREE_NODES:
        raise LimitError(
            f"explain derives step by step an expression of at most {limits.MAX_EXPLAINED_TREE_NODES} nodes "
            "written out as a tree, and this one has more (its parts are shared); ask for the derivative "
            "without explain", request.span)


# --- the tensor formulas ------------------------------------------------------


def of_gradients(derivations: list) -> list:
    """jacobian(grad(L, x), x), a Hessian written that way, as the hessian of L: the forward pass over the
    gradient with the hessian's ledger, each stop of L's term what it removes from the second derivative
    (explain/ledger/higher.py); the Jacobian's own first-order ledger would take the gradient's stops as
    written in it, missing what they removed from the gradient. The grad's request, before it, stays; a
    selection of the entries kept as formulas (jacobian(grad(L, x), x)[0, 1]) selects from the hessian."""
    out = []
    for request in derivations:
        whole = getattr(request, "whole", None)
        gradient = next((r for r in out if _gradient_of(r, whole or request)), None)
        if gradient is not None and (whole is None or request.expr == whole.expr):
            changes = dict(operation="hessian", expr=gradient.expr, written=gradient.written, named=gradient.named,
                           text=gradient.text, of_gradient=True)
            request = replace(request, **changes, **({"whole": replace(whole, **changes)} if whole else {}))
        out.append(request)
    return out


def _gradient_of(gradient, request) -> bool:
    """Is `request` the Jacobian, by the same declared vector, of what the grad request `gradient` gave?"""
    return (request.operation == "jacobian" and gradient.operation == "grad"
            and not isinstance(gradient, SelectedRequest) and isinstance(request.wrt, Var) and t.rank(request.wrt) == 1 and gradient.wrt == request.wrt
            and is_tensor(gradient.expr) and t.rank(gradient.expr) == 0 and gradient.result == request.expr)


def as_written(explanation):
    """A hessian written jacobian(grad(L, x), x) checks against the jacobian written."""
    if getattr(getattr(explanation, "request", None), "of_gradient", False) and explanation.check is not None:
        return replace(explanation, check=replace(explanation.check, operation="jacobian"))
    return explanation


def by_symbolic(request) -> bool:
    """A grad, jacobian or hessian by a tensor of symbolic size of a formula that holds none (grad(b, z), z: R^n):
    the tensor passes derive it (zeros(n)); the components have no size to take it by."""
    return request.operation in ("grad", "jacobian", "hessian") and isinstance(request.wrt, Var) and symbolic(request.wrt)


def by_declared_scalars(expr, variables) -> bool:
    """A derivative (diff, blocked) of a formula holding tensors by declared scalars that no tensor part of it
    holds (diff(sum(x)*t^2, t)): each tensor part is a constant of the rule table, so it derives the formula
    as written, sum(x) as sum(x), the same words at `R^3` and `R^n` (issue 36)."""
    from gradlang.expr.walk import tensor_parts_hold

    variables = [to_symbolic(v) for v in variables if not isinstance(v, sp.Integer)]  # diff's orders aside
    if not variables or not all(type(v) is sp.Symbol for v in variables) or not involves(expr):
        return False
    return not tensor_parts_hold(to_symbolic(expr), variables)


def declared_scalar(value) -> bool:
    """A declared scalar (`a: R`): a real symbol of rank 0, not a size (n) nor a component (x[0]). The
    tensor passes take a derivative by one as by a tensor of rank 0 (core/explain_views.py)."""
    value = to_symbolic(value)
    return type(value) is sp.Symbol and bool(value.is_real) and not is_size(value) and "[" not in value.name


def diff_by_declared_scalars(arguments) -> bool:
    """diff's arguments after the formula are declared scalars, each perhaps followed by its order, from 1
    (diff(L, a), diff(L, a, 2), diff(L, a, b)); the engine has checked where an order may stand."""
    variables = [a for a in arguments if not isinstance(a, sp.Integer)]
    orders = [a for a in arguments if isinstance(a, sp.Integer)]
    return bool(variables) and all(declared_scalar(v) for v in variables) and all(n >= 1 for n in orders)


def named_values(env: dict) -> tuple:
    """(value, name) for each binding of the session to a tensor formula (z1 = W @ x1), in binding order:
    a derivation shows those subexpressions by the user's names (a tensor symbol of the value's shape, so
    every printer still knows the shapes around it)."""
    return tuple((value, Var(name, t.shape_of(value)) if t.shape_of(value) else sp.Symbol(name, real=True))
                 for name, value in env.items()
                 if isinstance(value, sp.Expr) and not isinstance(value, Var) and is_tensor(value) and value.args)


def named_as_in(names: tuple, formula) -> tuple:
    """The user's bindings, each also in the form a formula with a float in it holds it (its constants settled
    in float64, core/floats.py: mu = sg(mean(X, axis=-1)) is sg(0.25*sum(X, axis=2)) inside
    `(X - mu)/sqrt(s2 + 0.00001)` at d = 4), so a derivation shows it by the user's name at `R^4` as at `R^d`."""
    from gradlang.core.floats import fold_floats
    from gradlang.expr.walk import dag_has

    if not names or not isinstance(formula, sp.Basic) or not dag_has(formula, sp.Float):
        return names
    folded = fold_floats([value for value, _ in names])
    return names + tuple((new, name) for new, (value, name) in zip(folded, names) if new != value)


def shown_value(body: lo.Node, value, steps=()):
    """The value under the derivations (the printers choose its shorter form, as for show): numbers at a point; the
    derivation's own result when the statement is one derivative call shown by a tensor pass (its tidied
    form); else the statement's value."""
    if isinstance(body, lo.At):
        return value
    if isinstance(body, (lo.Call, lo.Index)) and len(steps) == 1 and _own_result(steps[0], body):
        return steps[0].derived
    return value


def _own_result(step, body) -> bool:
    """Is the statement's value the derivation's own result: one derivative call shown by a tensor pass
    (its tidied form), or the components a selection narrowed its request to?"""
    request = getattr(step, "request", None)
    if not isinstance(request, DerivativeRequest) or getattr(step, "derived", None) is None:
        return False
    if isinstance(body, lo.Index):
        return isinstance(request, SelectedRequest) and request.operation != "blocked" and isinstance(body.base, lo.Call)
    return is_tensor(request.expr) and request.operation != "blocked"  # a blocked pass derives the derivative


def by_scalars(name: str, args: list):
    """(formula, symbols) for grad(e, [a, b]) of a scalar tensor formula by a list of distinct real scalar
    symbols, which the component engine computes and explain's reverse pass shows whole; else None."""
    if name != "grad" or len(args) != 2 or not isinstance(args[1], (sp.NDimArray, list, tuple)):
        return None
    e, items = args[0], tuple(args[1])
    scalars = all(isinstance(s, sp.Symbol) and not isinstance(s, Var) and s.is_real and not is_size(s)
                  for s in items)
    if not items or not scalars or len(set(items)) != len(items) or not involves(e) or t.rank(e) != 0:
        return None
    return e, items


def by_list_jacobian(name: str, args: list) -> bool:
    """jacobian(v, [a, b]) or hessian(e, [a, b]): the forward pass shows one variable, so explain shows
    its value alone."""
    return name in ("jacobian", "hessian") and isinstance(args[1], (sp.NDimArray, t.Literal))


def recorded_whole(value, derivations: list, by_list):
    """The component engine's value; the request it recorded keeps the tensor formula and the symbols."""
    e, symbols = by_list
    derivations[-1] = replace(derivations[-1], expr=e, wrt=symbols)
    return value


def recorded(name: str, args: list) -> bool:
    """Does explain show this derivative of tensors? grad, jacobian and hessian at any size (one variable);
    diff and blocked by declared scalars that no tensor part holds at any size (the rule table, sum(x) a
    constant); blocked by a declared tensor at any size (the tensor pass of its derivative, core/explain_views.py),
    otherwise at literal sizes, by the rule table over its components."""
    if name in ("diff", "blocked") and len(args) > 1 and by_declared_scalars(args[0], args[1:]):
        return True
    if name == "diff" and diff_by_declared_scalars(args[1:]) and t.rank(args[0]) == 0:
        return True  # diff(sum(a^3*x), a, 2): grad's reverse passes by a scalar (core/explain_views._diff_as_grad)
    if name == "blocked":
        by_tensor = len(args) == 2 and is_tensor(args[1]) and isinstance(args[1], Var) and bool(t.shape_of(args[1]))
        return by_tensor or not any(symbolic(a) for a in args)
    if name == "backward":  # a tensor value only at a symbolic size (tensor_derivatives._backward)
        return True
    return name in ("grad", "jacobian", "hessian") and not by_list_jacobian(name, args)
