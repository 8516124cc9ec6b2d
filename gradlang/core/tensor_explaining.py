"""explain at literal sizes by the tensor passes, wherever the tensor engine takes the statement.

`explain grad(L, W)` with `W: R^(2,3)` reads as it does with `W: R^(m,n)`:
one adjoint rule per operation, and one ledger entry per stop the user
wrote (explain/tensor/reverse_pass.py); `explain jacobian(f, x)` is the
forward pass (explain/tensor/forward_pass.py). The statement is evaluated
twice: by the tensor engine for its derivative requests and its value, and
by components as before (core/session.py), whose requests keep what the
tensor engine does not take (diff, hessian, blocked, a selected component,
unfold, a grad by a scalar, a builtin with no tensor form). A grad by a list
of scalars is computed by components, and its request keeps the tensor
formula (by_scalars), so the reverse pass shows it too. The closing check
compares the tensor derivation, lowered to components, with the component
engine's own derivative: two engines, one answer.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.core.literal_sizes import involves, shorter, symbolic
from gradlang.expr.tensor.shapes import is_size
from gradlang.errors import GradlangError
from gradlang.expr.tensor import is_tensor
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.walk import dag_nodes
from gradlang.syntax import lowered as lo


def tensor_side(body: lo.Node, evaluator) -> tuple:
    """(value, requests) of the statement in the tensor engine; (None, []) when it does not take it.

    Of `e at x = v` only e is evaluated here: its derivatives are derived as formulas, and the numbers at
    the point are the component engine's (the closing check and the value)."""
    requests: list = []
    try:
        value = evaluator(requests).evaluate(body.body if isinstance(body, lo.At) else body)
    except GradlangError:
        return None, []
    return value, requests


def routed(requests: list, tensor_requests: list) -> list:
    """For each component request, its tensor twin when the reverse pass shows it, else None."""
    if len(requests) != len(tensor_requests):
        return [None] * len(requests)
    return [t if _takes(r, t) else None for r, t in zip(requests, tensor_requests)]


def stop_ledgers(requests: list, tensor_requests: list) -> list:
    """For each component request whose tensor twin is a grad the components derive (the formula picks the
    variable's own components), the twin's ledger at the tensor level: one entry per stop the user wrote
    (`sg(x)` is one stop, not one per component). None for any other request."""
    from gradlang.explain.ledger.tensor import tensor_ledger

    if len(requests) != len(tensor_requests):
        return [None] * len(requests)
    out = []
    for request, tensor in zip(requests, tensor_requests):
        entries = None
        if _whole_twin(request, tensor, ("grad",)) and _picks(tensor.expr, tensor.wrt) and _splits(tensor.expr):
            try:
                entries = tensor_ledger(tensor.expr, tensor.wrt, tensor.result) or None
            except GradlangError:
                entries = None
        out.append(entries)
    return out


def _splits(expr) -> bool:
    """Does the formula stop a whole vector or matrix (which the components would count once per component)?"""
    return any(isinstance(node, StopGradient) and t.rank(node) > 0 for node in dag_nodes([expr]))


def _takes(request, tensor) -> bool:
    """A grad of a tensor formula by a declared vector or matrix, or a jacobian of a vector formula by a
    vector that no vector identity derives, as written (no component selected), that does not pick the
    variable's own components (x[0]*sg(x[1]) reads best component by component)."""
    if isinstance(tensor.wrt, tuple):  # a grad by a list of scalars no vector identity derives
        return (request.operation == tensor.operation == "grad" and request.span == tensor.span
                and getattr(request, "whole", None) is None and _no_identity(request, lessons=True))
    return (_whole_twin(request, tensor, ("grad", "jacobian")) and not _picks(tensor.expr, tensor.wrt)
            and (request.operation == "grad" or _forward_shows(request, tensor)))


def _whole_twin(request, tensor, operations: tuple) -> bool:
    """The tensor engine's twin of the request, one of the operations, of a tensor formula by a declared
    vector or matrix, as written (no component selected)."""
    return (request.operation == tensor.operation and request.operation in operations
            and request.span == tensor.span and getattr(request, "whole", None) is None
            and isinstance(tensor.wrt, Var) and is_tensor(tensor.expr))


def _forward_shows(request, tensor) -> bool:
    """A Jacobian the forward pass shows: of a vector by a vector, and not one a vector identity derives
    in a line (the softmax Jacobian, diag(s) − s sᵀ, by its own identity)."""
    return t.rank(tensor.expr) == 1 and t.rank(tensor.wrt) == 1 and _no_identity(request)


def _no_identity(request, lessons: bool = False) -> bool:
    """No vector identity derives the request (the softmax Jacobian keeps its own; with lessons, only the
    identities a gradient by a list keeps: EM's weighted means, the TD target)."""
    from gradlang.explain.vector.derivation import vector_derivation

    return vector_derivation(request, lessons) is None


def tensor_explanation(request, depth=None, names=()):
    """The tensor-level derivation of a request: the forward pass of a jacobian, the reverse pass of a grad."""
    if request.operation in ("jacobian", "hessian"):
        from gradlang.explain.tensor.forward_pass import jacobian_explanation

        return jacobian_explanation(request, depth, names)
    from gradlang.explain.tensor.reverse_pass import tensor_explanation as reverse_explanation

    return reverse_explanation(request, depth, names)


def symbolic_statement(body: lo.Node, env: dict) -> bool:
    """Does the statement read a name of symbolic size (x: R^n), or give one a value at its point? Then it
    has no components to derive by, and explain evaluates it as the tensor engine does (and as the plain
    at does), its literal tensors beside whole (v: R^2 stays v, not v[0], v[1], which cannot meet x)."""
    names = set(lo.written_names(body))
    if isinstance(body, lo.At):
        names |= {binding.target.name for binding in body.bindings}
    return any(symbolic(env.get(name)) for name in names)


def by_symbolic(request) -> bool:
    """A grad or jacobian by a tensor of symbolic size of a formula that holds none (grad(b, z), z: R^n):
    the tensor passes derive it (zeros(n)); the components have no size to take it by."""
    return request.operation in ("grad", "jacobian") and isinstance(request.wrt, Var) and symbolic(request.wrt)


def _picks(expr, wrt) -> bool:
    """Does the formula index the variable itself (x[0], W[1, 2], a row or column of W) where a derivative
    flows? A pick inside a stop (sg(x[0])) is a constant of the formula."""
    picked = (t.Entry, t.Row, t.Column)
    stops = {node: sp.Dummy() for node in dag_nodes([expr]) if isinstance(node, StopGradient)}
    flowing = expr.xreplace(stops) if stops else expr
    return any(isinstance(node, picked) and node.args[0] == wrt for node in dag_nodes([flowing]))


def named_values(env: dict) -> tuple:
    """(value, name) for each binding of the session to a tensor formula (z1 = W @ x1), in binding order:
    a derivation shows those subexpressions by the user's names (a tensor symbol of the value's shape, so
    every printer still knows the shapes around it)."""
    import sympy as sp

    from gradlang.expr.tensor.nodes import shape_of

    return tuple((value, Var(name, shape_of(value)) if shape_of(value) else sp.Symbol(name, real=True))
                 for name, value in env.items()
                 if isinstance(value, sp.Expr) and not isinstance(value, Var) and is_tensor(value) and value.args)


def shown_value(body: lo.Node, value, tensor_value, steps=()):
    """The value under the derivations: numbers by components at a point; the derivation's own result when
    the statement is one derivative call shown by the reverse pass; else the tensor engine's formula,
    each in its shorter form."""
    if tensor_value is None or isinstance(body, lo.At):
        return value
    if isinstance(body, lo.Call) and len(steps) == 1 and getattr(steps[0], "derived", None) is not None:
        return shorter(steps[0].derived)
    return shorter(tensor_value)


def checked_against(explanation, request, point, check):
    """The tensor derivation's closing check, made against the component engine's request.

    `check` is explain_check.checked; the derived formula is lowered to the
    component engine's representation for it, and the explanation keeps its own
    request and formula."""
    from gradlang.core.tensor_at import components

    def lower(value):
        return sp.Array([components(d, {}) for d in value]) if isinstance(value, sp.NDimArray) else components(value, {})

    try:
        lowered = lower(explanation.derived)
        if involves(request.result):  # explain at a literal size by the tensor engine (argmax of components)
            request = replace(request, result=lower(request.result))
    except GradlangError:
        return explanation
    done = check(replace(explanation, request=request, derived=lowered), point)
    return replace(explanation, check=done.check)


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
