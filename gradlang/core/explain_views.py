"""One view per derivative request of an explain statement: the tensor passes, or the rule table over components.

The statement is evaluated once, by the ordinary (tensor) evaluator, which
records its derivative requests (core/services.py). Each request is then
shown by one view, chosen from the request alone:

- a grad, jacobian or hessian of a tensor formula by a declared vector or
  matrix, as written: the tensor reverse pass (grad) or forward pass
  (jacobian, hessian), at any size (explain/tensor/), with the stop ledger
  at the tensor level (one entry per stop the user wrote); so too backward
  (grad's pass), blocked (its derivative's pass and ledger) and a selection
  of any of them (the pass and a line that picks the entries);
- a grad of a tensor formula by a declared scalar (`alpha: R`): the reverse pass,
  a scalar being a tensor of rank 0, ending with the adjoint summed down to it;
- a grad of a tensor formula by a list of scalar symbols: the reverse pass too,
  unless a vector identity derives it (EM's weighted means keep theirs);
- anything else (unfold, diff, a formula that picks x's own components at a
  literal size, a jacobian or hessian by a scalar or a list, a request the tensor
  engine lowered itself because it holds x[0] beside x, or one the tensor
  passes have no rule for): the scalar rule table over the request lowered to
  its components (`lower`), with the component ledger; backward's is the tape.

`x: R^3` and `x: R^n` thus show the same derivation wherever the tensor passes
take the request, closing check included: one mechanism at every size
(explain_sizes.py), proved equal or equal at a random point; at the
statement's point, the lowered numbers.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.core.explaining import (SelectedRequest, as_written, by_symbolic, check_printable, check_tree,
                                      declared_scalar, named_as_in, of_gradients)
from gradlang.derive.requests import DerivativeRequest
from gradlang.expr.tensor.lower import literal, lowered, symbolic
from gradlang.errors import GradlangError, NeedsComponents, NeedsNumbers
from gradlang.expr.tensor import is_tensor
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import Var, shape_of

_PASSES = ("grad", "jacobian", "hessian")


def explanations(derivations: list, depth, point, unfold: bool, names: tuple, bound=frozenset()) -> tuple:
    """The step-by-step derivation of each derivative call inside an explain statement, each with its check.

    names are the user's bindings to tensor formulas (explaining.named_values), which a tensor pass shows
    by name."""
    from gradlang.explain.explanation import DEFAULT_DEPTH

    depth = DEFAULT_DEPTH if depth == "default" else depth
    derivations = derivations if unfold else of_gradients(derivations)
    return tuple(as_written(_explanation(_lettered(request, bound), depth, point, unfold,
                                         _Names(named_as_in(names, request.expr), bound)))
                 for request in derivations)


def _lettered(request, bound):
    """The request with the letter its derivation writes the loss by (explain/loss_letter.py), decided once here:
    every line, the ledger and its identity read it; a selection's whole request has the same."""
    from gradlang.explain.loss_letter import loss_letter

    if not isinstance(request, DerivativeRequest):
        return request
    whole = getattr(request, "whole", None)
    loss = loss_letter(whole or request, bound)  # a selection's title is its whole call's
    if isinstance(whole, DerivativeRequest):
        request = replace(request, whole=replace(whole, loss=loss))
    return replace(request, loss=loss)


class _Names(tuple):
    """The user's bindings a tensor pass shows ((value, name) pairs), and every name the session has bound
    (`bound`: a declared z beside the derivation's letter z would read as the user's)."""

    def __new__(cls, pairs, bound=frozenset()):
        made = super().__new__(cls, pairs)
        made.bound = frozenset(bound)
        return made


def _explanation(request, depth, point, unfold: bool, names: tuple):
    """The one view of one request (the module's docstring says which)."""
    from gradlang.explain.backward.view import backward_view

    if request.operation == "backward" and not unfold and _by_tensor_backward(request):
        return _backward_by_tensors(request, depth, point, names)
    if request.operation == "backward":
        return backward_view(_within_tree(lowered_request(request)), unfold)
    if isinstance(request, SelectedRequest) and is_tensor(request.expr):  # kept a formula: explaining.py
        return _selected(request, depth, point, unfold, names)
    if request.operation == "blocked" and not unfold and _by_tensor_backward(request):
        return _blocked_by_tensors(request, depth, point, names)
    request = _listed(request)
    if not unfold and _by_declared_scalars(request):
        return _by_rule_table(request, depth, point, unfold, lower=False)
    if not unfold and _diff_as_grad(request):
        return _diff_by_tensors(request, depth, point, names)
    tensor = _by_tensor_pass(request, unfold)
    if tensor and not (literal(request.wrt) and _picks(request.expr, request.wrt)):
        try:
            return _tensor_checked(tensor_explanation(request, depth, names), request, point)
        except NeedsComponents:  # no tensor-level rule (a matrix by a vector in the forward pass)
            if _symbolic(request):
                raise
    elif not tensor and (is_tensor(request.expr) or by_symbolic(request)) and _no_components(request):
        explanation = tensor_explanation(request, depth, names)  # unfold or a selection: no components to take
        return _tensor_checked(explanation, request, point)
    try:
        return _by_rule_table(request, depth, point, unfold)
    except NeedsNumbers:  # y[argmax(x)] has no components without numbers: the formula's pass, as at R^n
        if not tensor:
            raise
    return _tensor_checked(tensor_explanation(request, depth, names), request, point)


def _within_tree(request):
    """The request a view by components shows, once its size as a tree is checked: those views walk trees
    (SymPy's arithmetic and assumptions), the tensor passes distinct nodes (core/explaining.check_printable)."""
    check_printable([request])
    check_tree(request)
    return request


def _backward_by_tensors(request, depth, point, names):
    """backward(e, x) at a symbolic size: the reverse-mode computation at the tensor level, one adjoint rule
    per operation (the reverse pass of grad(e, x), which it equals), the call shown as written."""
    as_grad = replace(request, operation="grad")
    explanation = _tensor_checked(tensor_explanation(as_grad, depth, names), as_grad, point)
    return replace(explanation, request=request)


def _by_tensor_backward(request) -> bool:
    """backward(e, x) or blocked(e, x) by a declared vector or matrix: the tensor pass wherever grad(e, x)
    takes it, at `R^3` as at `R^n` (one engine); components where grad reads by components (a scalar
    variable, a formula picking the variable's components at a literal size, a selection, unfold)."""
    if getattr(request, "whole", None) is not None or not (isinstance(request.wrt, Var) and shape_of(request.wrt)):
        return False
    return _symbolic(request) or not _picks(request.expr, request.wrt)


def _selected(request, depth, point, unfold: bool, names):
    """grad(e, x)[1], jacobian(s, x)[0, 2]: where the tensor pass takes the whole request, its derivation
    and one line more that picks the entries asked for, at `R^3` as at `R^n`; else the selected components
    by the rule table (a selection of a formula that picks x's own components, unfold)."""
    from gradlang.core.explaining import narrowed_to_components

    whole = request.whole
    componentwise = not _by_tensor_pass(whole, unfold) or _picks(whole.expr, whole.wrt)
    if componentwise and not _no_components(whole):
        return _explanation(narrowed_to_components(whole, list(request.indices)) or whole, depth, point, unfold, names)
    from gradlang.explain.tensor.selection import picked

    return _tensor_checked(picked(tensor_explanation(whole, depth, names), request), request, point)


def _blocked_by_tensors(request, depth, point, names):
    """blocked(e, x): the tensor pass of the derivative (grad's reverse pass, a Jacobian's forward pass) with
    its ledger, whose removed terms are what blocked gives (true = kept + removed); the call shown as written,
    its value the statement's."""
    from gradlang.core.tensor_derivatives import TABLE

    operation = "grad" if t.rank(request.expr) == 0 else "jacobian"
    derivative = replace(request, operation=operation, result=TABLE[operation]([request.expr, request.wrt]))
    explanation = _tensor_checked(tensor_explanation(derivative, depth, names), derivative, point)
    return replace(explanation, request=request)


def _listed(request):
    """grad(L, [W, b]): the variables of a list of tensors as a tuple, as a grad by a list of scalars has them,
    so one reverse pass takes them all (its result stays the engine's list, one gradient per variable)."""
    if isinstance(request.wrt, TensorList):
        return replace(request, wrt=tuple(request.wrt.entries))
    return request


def _no_components(request) -> bool:
    """A request whose variables have no components to derive by: a symbolic size, or a list of tensors."""
    return _symbolic(request) or by_tensors(request)


def by_tensors(request) -> bool:
    """A grad by a list that holds a whole tensor (grad(L, [W, b])): no array of components holds its
    gradients, so only the reverse pass shows it."""
    return isinstance(request.wrt, tuple) and any(shape_of(v) for v in request.wrt)


def _by_declared_scalars(request) -> bool:
    """A diff or blocked by declared scalars of a formula whose tensor parts do not hold them (explaining.py)."""
    from gradlang.core.explaining import by_declared_scalars

    if request.operation not in ("diff", "blocked") or getattr(request, "whole", None) is not None:
        return False
    variables = [v for v, _ in request.specs] if request.operation == "diff" else [request.wrt]
    return by_declared_scalars(request.expr, variables)


def _diff_as_grad(request) -> bool:
    """diff(L, a), diff(L, a, 2), diff(L, a, b) by declared scalars, one of which a tensor part of L holds
    (diff(sum(a^3*x), a)): grad by a scalar, a tensor of rank 0, so each order takes grad's reverse pass, at
    `R^3` as at `R^n`."""
    if request.operation != "diff" or not request.specs or any(n < 1 for _, n in request.specs):
        return False
    variables = [v for v, _ in request.specs]
    return all(declared_scalar(v) for v in variables) and _tensor_formula(request.expr) and t.rank(request.expr) == 0


def _tensor_formula(expr) -> bool:
    """Over a declared tensor, or a size alone (sum(a*ones(n)): the rule table left its derivative a Subs)."""
    return is_tensor(expr) or symbolic(expr)


def _diff_by_tensors(request, depth, point, names):
    """diff(L, a) by the reverse pass of grad(L, a) (the same derivative), shown as the call written. At order
    two or more, the reverse pass of the order before's simplified form by the last variable, as a hessian is
    the forward pass over the simplified gradient; the ledger has an entry per stop of L, its terms what each
    removes from the derivative written (explain/ledger/higher.py)."""
    from gradlang.derive.tensor import reverse
    from gradlang.derive.tensor.rewrite import tidy

    variables = _flat_variables(request)
    before = request.expr
    for variable in variables[:-1]:
        before = tidy(reverse.grad(before, variable))
    as_grad = replace(request, operation="grad", expr=before, wrt=variables[-1], specs=())
    explanation = tensor_explanation(as_grad, depth, names)
    if len(variables) == 1:
        explanation = _tensor_checked(explanation, as_grad, point)
    else:
        explanation = _diff_checked(_of_higher_order(explanation, request, before), request, point)
    from gradlang.explain.ledger.closing import closing

    check = explanation.check and replace(explanation.check, operation="diff")
    explanation = replace(explanation, request=request, check=check)
    return replace(explanation, identity=closing(explanation) if explanation.ledger else ())


def _of_higher_order(explanation, request, before):
    """The reverse pass over the order before (`before`), under the diff's own request: one ledger entry per
    stop of L, each term found in the ledger's order (explain/ledger/higher.py) by what D, the diff written,
    gives with the stops made transparent one by one; `blocked` is their sum, D(unstopped L) less the kept, a
    value (its stops removed, as `blocked` gives it)."""
    from gradlang.derive.tensor.rewrite import tidy
    from gradlang.explain.explanation import said
    from gradlang.explain.ledger.components import outermost_stops, reached
    from gradlang.explain.ledger.higher import derivative_taken
    from gradlang.explain.ledger.words import phrase
    from gradlang.explain.tensor.reverse_pass import SUMMARY
    from gradlang.explain.text import plain
    from gradlang.expr.stopgrad import unstopped

    variables = tuple(dict.fromkeys(v for v, _ in request.specs))
    entries = tuple(reached(stop, variables, "tensor") for stop in outermost_stops([request.expr]))
    over = f"{SUMMARY} over {_ORDINALS.get(len(_flat_variables(request)) - 1, 'the derivative')} {plain(before)}"
    summary = "; ".join(p for p in (over, phrase(entries)) if p)
    blocked = sp.S.Zero
    if entries:
        blocked = tidy(unstopped(derivative_taken(request)(unstopped(request.expr)) - explanation.derived))
    return said(replace(explanation, request=request, summary=summary, ledger=entries, blocked=blocked))


_ORDINALS = {1: "the first derivative", 2: "the second derivative", 3: "the third derivative"}


def _flat_variables(request) -> list:
    """diff's variables in the order taken, each repeated by its order: diff(L, a, 2, b) is [a, a, b]."""
    return [v for v, n in request.specs for _ in range(n)]


def _diff_checked(explanation, request, point):
    """The closing check of a diff by declared scalars against the engine's diff (a formula of rank 0, so
    the same mechanism at every size, explain_sizes.py), or at the statement's point by its numbers."""
    from gradlang.core.explain_check import checked
    from gradlang.core.explain_sizes import size_check

    if point is None:
        check = size_check("diff", explanation.derived, request.result)
        return replace(explanation, check=check) if check is not None else explanation
    try:
        return checked(_lowered_for_check(replace(explanation, request=request), request), point)
    except GradlangError:
        return explanation


def _by_rule_table(request, depth, point, unfold: bool, lower: bool = True):
    """The rule table over the request lowered to its components (or as written, its tensor parts
    constants), with its closing check."""
    from gradlang.core.explain_check import checked; from gradlang.core.explain_sizes import resized  # noqa: E702
    from gradlang.explain import explain

    entries = _stops_written(request) if not unfold else None
    request = _within_tree(lowered_request(request) if lower else request)
    return resized(checked(explain(request, depth, unfold, entries), point))  # explain_sizes: at sizes


def _by_tensor_pass(request, unfold: bool) -> bool:
    """Can a tensor pass show the request? A whole grad/jacobian/hessian of a tensor formula by a declared
    tensor, a grad of one by a declared scalar (a tensor of rank 0: grad(actor_loss, alpha) at `R^3` as at
    `R^n`), or a grad by a list of scalar symbols that no vector identity derives."""
    if unfold or getattr(request, "whole", None) is not None or request.operation not in _PASSES:
        return False
    if isinstance(request.wrt, Var):
        return is_tensor(request.expr) or by_symbolic(request)
    if declared_scalar(request.wrt) and request.operation == "grad":
        return _tensor_formula(request.expr)
    if isinstance(request.wrt, tuple) and request.operation == "grad" and is_tensor(request.expr):
        return _symbolic(request) or by_tensors(request) or not _has_lesson(request)
    return False


def _picks(expr, wrt) -> bool:
    """Does the formula index the variable itself (x[0], W[1, 2], a row or column of W) where a derivative
    flows? At literal sizes such a formula reads best component by component (x[0]*sg(x[1]) gives
    [sg(x[1]), 0], as a teacher writes it); a pick inside a stop (sg(x[0])) is a constant of the formula."""
    from gradlang.expr.graph import build_dag
    from gradlang.expr.tensor import nodes as t
    from gradlang.explain.ledger.components import outside_stops

    dag = build_dag([expr])  # walked, never rebuilt: a scalar put for a stopped K would break K's einsum shape
    flowing = [dag.nodes[i] for i in sorted(outside_stops(dag))]
    return any(isinstance(node, (t.Entry, t.Row, t.Column)) and node.args[0] == wrt for node in flowing)


def _stops_written(request):
    """For a grad of a tensor formula shown by components (by a tensor, or by a list of scalars as EM's
    grad(Q, [mu1, mu2])), the ledger at the tensor level when the formula stops a whole vector or matrix
    (sg(x) is one stop the user wrote, which the components would count once per component); else None
    (the component ledger)."""
    from gradlang.expr.stopgrad import StopGradient
    from gradlang.expr.tensor import nodes as t
    from gradlang.expr.walk import dag_nodes
    from gradlang.explain.ledger.tensor import tensor_ledger

    by_list = isinstance(request.wrt, tuple) and all(not shape_of(v) for v in request.wrt)  # EM's [mu1, mu2]
    if request.operation != "grad" or not (isinstance(request.wrt, Var) or by_list) or not is_tensor(request.expr):
        return None
    if getattr(request, "whole", None) is not None or _symbolic(request):
        return None
    if not any(isinstance(node, StopGradient) and t.rank(node) > 0 for node in dag_nodes([request.expr])):
        return None
    try:
        return tensor_ledger(request.expr, request.wrt, request.result) or None
    except GradlangError:
        return None


def _symbolic(request) -> bool:
    return symbolic(request.expr) or symbolic(request.wrt) or symbolic(request.result)


def _has_lesson(request) -> bool:
    """A grad by a list of scalars that a lesson's vector identity derives (EM's weighted means, the TD target)."""
    from gradlang.explain.vector.derivation import vector_derivation

    try:
        return vector_derivation(lowered_request(request), True) is not None
    except GradlangError:
        return False


def lowered_request(request):
    """The request with its expression, variable and result as their components (literal sizes only;
    a request already in components, or at symbolic size, as it is)."""
    wrt = request.wrt
    if isinstance(wrt, tuple):
        wrt = sp.Array(list(wrt))
    return replace(request, expr=lowered(request.expr), wrt=lowered(wrt) if wrt is not None else None,
                   result=lowered(request.result))


def tensor_explanation(request, depth=None, names=()):
    """The tensor-level derivation of a request: the forward pass of a jacobian or hessian, the reverse
    pass of a grad."""
    if request.operation in ("jacobian", "hessian"):
        from gradlang.explain.tensor.forward_pass import jacobian_explanation

        return jacobian_explanation(request, depth, names)
    from gradlang.explain.tensor.reverse_pass import tensor_explanation as reverse_explanation

    return reverse_explanation(request, depth, names)


def _tensor_checked(explanation, request, point):
    """The tensor derivation with its closing check, one mechanism at every size (explain_sizes.py):
    proved equal (the same formula, or a difference the tensor rewrites reduce to 0), else equal at a random
    point (at a symbolic size with random sizes, the check naming them), so `R^3` and `R^n` end alike. At the
    statement's point, or at literal sizes when NumPy cannot tell or the random point says they differ, the
    lowered numbers decide (the engine's result may hold components, x[0], which the point takes apart from x)."""
    from gradlang.core.explain_check import checked, whole_operation
    from gradlang.core.explain_sizes import size_check

    if explanation.derived is None:
        return explanation
    if _symbolic(request):
        check = size_check(whole_operation(request), explanation.derived, request.result)
        return replace(explanation, check=check) if check is not None else explanation
    if point is None:
        check = _at_literal_size(whole_operation(request), explanation.derived, request.result)
        if check is not None and check.agrees:
            return replace(explanation, check=check)
    try:  # at the point, or when the formulas may not be compared whole: the lowered numbers
        done = checked(_lowered_for_check(explanation, request), point)
    except GradlangError:
        return explanation
    return replace(explanation, check=done.check)


def _at_literal_size(operation: str, derived, result):
    """The check at literal sizes as at a symbolic size; when the engine's result is already components (a
    grad by a list of scalars, [a, b]) and the formulas differ, the derived formula's components against it."""
    from gradlang.core.explain_sizes import size_check
    from gradlang.expr.tensor.lower import involves

    check = size_check(operation, derived, result)
    if (check is None or check.kind != "symbolic") and not involves(result) and involves(derived):
        lowered_check = size_check(operation, _lowered_result(derived), result)
        return lowered_check if lowered_check is not None and lowered_check.agrees else check
    return check


def _lowered_for_check(explanation, request):
    """The explanation with its result and request's result as components, each formula lowered once:
    the derived one is the engine's more often than not, and the expression is lowered only when a stop
    changes the gradient (the check shows the value and the true gradient then)."""
    if by_tensors(request):  # grad(L, [W, b]): the tensor engine takes the true gradient, the point its numbers
        return replace(explanation, request=request)
    result = _lowered_result(request.result)
    derived = result if _same(explanation.derived, request.result) else _lowered_result(explanation.derived)
    if any(entry.verdict in ("blocking", "inventing") for entry in explanation.ledger):
        request = replace(lowered_request(request), result=result)
    else:
        wrt = sp.Array(list(request.wrt)) if isinstance(request.wrt, tuple) else request.wrt
        request = replace(request, wrt=lowered(wrt), result=result)
    return replace(explanation, request=request, derived=derived)


def _lowered_result(value):
    if isinstance(value, sp.NDimArray):  # a grad by a list of scalars: one formula per scalar
        return sp.Array([lowered(d) for d in value])
    return lowered(value)


def _same(a, b) -> bool:
    if isinstance(a, sp.NDimArray) or isinstance(b, sp.NDimArray):
        return isinstance(a, sp.NDimArray) and isinstance(b, sp.NDimArray) and list(a) == list(b)
    return a == b
