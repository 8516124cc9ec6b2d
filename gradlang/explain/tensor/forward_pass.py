"""explain of a Jacobian of a tensor formula, at any size: the forward pass, one tangent rule a line.

A Jacobian ∂f/∂x of a vector formula by a vector variable is what forward
mode computes (derive/tensor/forward.py): each subexpression's tangent, its
derivative by x, from its arguments' tangents by the operation's rule
(`∂(A v) = A ∂v`, `∂s = (diag(s) − s sᵀ) ∂u`, `∂f(u) = diag(f′(u)) ∂u`).
Each line is one subexpression's tangent, tidied by the bounded rewrites,
with that rule; a subexpression the program named (or a repeated part, as
names.py names it) is written ∂z/∂x in the lines above it, so
`jacobian(sigmoid(W @ x), x)` ends in `diag(p ⊙ (1 − p)) W`. The stops are
one ledger entry each (ledger/jacobian.py). The records are explain's own
(formula.VectorDerivation), so every output form renders them.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor import forward, reverse
from gradlang.derive.tensor.rewrite import Tidier, tidy
from gradlang.expr.graph import build_dag
from gradlang.expr.source import operation_name
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.broadcast import full
from gradlang.expr.tensor.nodes import Var, shape_of
from gradlang.explain.formula import Let, Math, VectorDerivation, VectorLine, formula, text_box
from gradlang.explain.ledger.components import outside_stops, removed_value
from gradlang.explain.ledger.jacobian import jacobian_ledger
from gradlang.explain.ledger.words import phrase
from gradlang.explain.tensor.names import lettered, repeated_parts, user_names
from gradlang.explain.text import plain

SUMMARY = "tensor forward pass"
IDENTITY = "the forward pass at the tensor level, one tangent rule per operation"
MAX_LINES = 16  # a longer pass shows its last lines (the ones nearest the output)

# The tangent rule of each operation, as a teacher states it, in both spellings.
_SAID = {
    t.MatMul: ("matmul: ∂(A v) = A ∂v", r"\text{matmul}: \partial(A v) = A\, \partial v"),
    t.Dot: ("dot: ∂⟨u, v⟩ = vᵀ ∂u + uᵀ ∂v", r"\text{dot}: \partial\langle u, v\rangle = v^{\top} \partial u + u^{\top} \partial v"),
    t.SoftmaxOf: ("softmax: ∂s = (diag(s) − s sᵀ) ∂u",
                  r"\text{softmax}: \partial s = (\operatorname{diag}(s) - s s^{\top})\, \partial u"),
    t.LogSumExpOf: ("logsumexp: ∂ logsumexp(u) = softmax(u)ᵀ ∂u",
                    r"\text{logsumexp}: \partial \operatorname{logsumexp}(u) = \operatorname{softmax}(u)^{\top} \partial u"),
    t.NormOf: ("norm: ∂‖u‖ = uᵀ ∂u / ‖u‖", r"\text{norm}: \partial\|u\| = u^{\top} \partial u / \|u\|"),
    t.Total: ("sum: ∂Σu = 𝟙ᵀ ∂u", r"\text{sum}: \partial \textstyle\sum u = \mathbf{1}^{\top} \partial u"),
    t.MaxOf: ("max: ∂max(u) = (its shares)ᵀ ∂u", r"\text{max}: \partial \max(u) = \text{(its shares)}^{\top} \partial u"),
    t.Entry: ("index: ∂uₖ = eₖᵀ ∂u", r"\text{index}: \partial u_{k} = e_{k}^{\top} \partial u"),
    sp.Add: ("sum rule: ∂(u + v) = ∂u + ∂v", r"\text{sum rule}: \partial(u + v) = \partial u + \partial v"),
    sp.Mul: ("product rule: ∂(u ⊙ v) = diag(v) ∂u + diag(u) ∂v",
             r"\text{product rule}: \partial(u \odot v) = \operatorname{diag}(v)\, \partial u + \operatorname{diag}(u)\, \partial v"),
    sp.Pow: ("power rule: ∂uᵖ = diag(p uᵖ⁻¹) ∂u", r"\text{power rule}: \partial u^{p} = \operatorname{diag}(p u^{p-1})\, \partial u"),
}


class TangentName(Var):
    """∂z/∂x: the tangent of a node the user named, standing for it in the lines above (a tensor symbol of
    the tangent's shape, so every rule takes it as it takes the tangent itself)."""

    def __new__(cls, name: str, wrt: str, shape: tuple):
        return Var.__new__(cls, f"∂{name}/∂{wrt}", shape)

    def _sympystr(self, printer):
        return self.name

    def _gradlang_line(self, printer):
        from sympy.printing.pretty.pretty_symbology import pretty_symbol

        top, bottom = self.name[1:].split("/∂")
        return f"∂{pretty_symbol(top)}/∂{pretty_symbol(bottom)}"  # as the let line writes them: δ, π

    def _pretty(self, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(self._gradlang_line(printer))

    def _latex(self, printer, exp=None):
        top, bottom = self.name[1:].split("/∂")
        text = rf"\frac{{\partial {printer._print(sp.Symbol(top))}}}{{\partial {printer._print(sp.Symbol(bottom))}}}"
        return text if exp is None else rf"\left({text}\right)^{{{exp}}}"


def _rule(node) -> tuple:
    """The tangent rule of the node's operation, as a formula in both spellings."""
    said = _SAID.get(type(node))
    if said is None and isinstance(node, sp.Function) and not isinstance(node, t.TensorOp):
        name = type(node).__name__.lower()
        said = (f"{name}: ∂f(u) = diag(f′(u)) ∂u", text_box(name) + r": \partial f(u) = \operatorname{diag}(f'(u))\, \partial u")
    plain, latex = said or (operation_name(node), text_box(operation_name(node)))
    return (Math(plain, latex),)


def _lhs(node, wrt, names) -> tuple:
    """∂u/∂x, with u in brackets unless it is a name or a call."""
    if node in names:
        return (TangentName(names[node].name, str(wrt), shape_of(node) + shape_of(wrt)),)  # δ, \delta, as each writes it
    simple = isinstance(node, (sp.Symbol, sp.Function)) and not (isinstance(node, t.TensorOp) and node.spelling.infix)
    return formula("∂", node, f"/∂{wrt}") if simple else formula("∂(", node, f")/∂{wrt}")


def jacobian_derivation(expr, wrt, names=None) -> VectorDerivation:
    """The forward pass of jacobian(expr, wrt) as numbered lines, variable to output.

    Each line is one node's tangent: the node's rule applied to its arguments'
    tangents (a named argument's written ∂z/∂x), tidied. Nodes that do not
    depend on the variable have no line; the last line is the Jacobian."""
    names = names or {}
    dag = build_dag([expr])
    depends = reverse._depends(dag, {wrt})
    outside = outside_stops(dag)
    tidier = Tidier()
    tangents: list = []  # each node's tangent, tidied
    written: list = []   # as the lines above write it: ∂z/∂x for a named node
    lines = []
    for i, node in enumerate(dag.nodes):
        if not depends[i] or node == wrt:
            tangents.append(sp.S.Zero if not depends[i] else t.Eye(shape_of(wrt)[0]) if shape_of(wrt) else sp.S.One)
            written.append(tangents[-1])
            continue
        children = dag.children[i]
        tangent = tidier(forward._tangent(node, [tangents[k] for k in children], wrt))
        shown = tidier(forward._tangent(node, [written[k] for k in children], wrt))
        tangents.append(tangent)
        written.append(TangentName(names[node].name, str(wrt), shape_of(tangent)) if node in names else shown)
        if i in outside and node.args and not (isinstance(node, sp.Pow) and node.args[1] == -1):
            lines.append(VectorLine(_lhs(node, wrt, names), (formula(shown),), _rule(node)))
    result = full(tangents[dag.roots[0]], shape_of(expr) + shape_of(wrt))
    return VectorDerivation(IDENTITY, (), tuple(lines[-MAX_LINES:]), result)


def _repeated_in(lines, expr) -> list:
    """The formula's composite parts that the lines write more than once, in the formula's order."""
    counts: dict = {}
    for line in lines:
        for part in line.rhs[0]:
            for node in sp.preorder_traversal(part) if isinstance(part, sp.Basic) else ():
                counts[node] = counts.get(node, 0) + 1
    return [node for node in build_dag([expr]).nodes if counts.get(node, 0) > 1 and node.args]


def _order(expr) -> dict:
    """Each subexpression's place in the formula's evaluation order (arguments first)."""
    return {node: i for i, node in enumerate(build_dag([expr]).nodes)}


def _symbols(expr) -> set:
    return {s.name for s in build_dag([expr]).nodes if isinstance(s, sp.Symbol)}


def jacobian_explanation(request, depth=None, names=()):
    """The Explanation of a jacobian of a vector formula by a vector, at any size: the forward pass as its
    derivation, one ledger entry per stop, and the Jacobian it derives (names: as reverse_pass's).

    A hessian is the Jacobian of the gradient (as derive/tensor computes it): the forward pass over
    grad(e, x), which the summary names (`softmax(x)` for logsumexp), so diag(s) − s sᵀ has its line."""
    from gradlang.explain.explanation import Explanation, said

    expr, wrt = request.expr, request.wrt
    if request.operation == "hessian":
        return _hessian_explanation(request, depth, names)
    bound = set(getattr(names, "bound", ()))  # every name of the session (core/explain_views._Names)
    users = user_names(expr, names)
    shown = users or repeated_parts(expr, {n.name for _, n in names} | bound)
    derivation = jacobian_derivation(expr, wrt, dict(shown))
    # the rules repeat what the formula says once (s in diag(s) − s sᵀ): named as a teacher names it
    taken = {n.name for _, n in (*names, *shown)} | _symbols(expr) | bound
    more = lettered([n for n in _repeated_in(derivation.lines, expr) if n not in dict(shown)], taken)
    if more:
        shown = tuple(sorted((*shown, *more), key=lambda pair: _order(expr)[pair[0]]))
        derivation = jacobian_derivation(expr, wrt, dict(shown))
    entries = jacobian_ledger(expr, wrt, derivation.result)
    summary = "; ".join(p for p in (SUMMARY, phrase(entries)) if p)
    removed = [removed_value(e) for e in entries if e.verdict in ("blocking", "inventing")]
    blocked = tidy(sp.Add(*removed)) if removed else full(sp.S.Zero, shape_of(expr) + shape_of(wrt))
    lets = tuple(Let(name, formula(value.xreplace({v: n for v, n in shown if v != value}))) for value, name in shown)
    derivation = VectorDerivation(IDENTITY, lets, derivation.lines, derivation.result, display=shown,
                                  own=frozenset(str(name) for _, name in users))
    return said(Explanation(request, summary, (), (), blocked, entries, depth=depth,
                            derived=derivation.result, vector=derivation))


def _hessian_explanation(request, depth, names):
    """The forward pass over the gradient, under the hessian's own request. A stop acts in the gradient
    already (the reverse pass), so the forward pass's own ledger would misstate what it removes: each stop
    of e gets its entry, and what it removes from the hessian is found once the entries are in the order
    the ledger lists them (explain/ledger/higher.py); `blocked` is the whole hessian's (of unstopped e, less
    this), their sum, a value (its stops removed, as `blocked` gives it)."""
    from dataclasses import replace

    from gradlang.explain.explanation import said
    from gradlang.explain.ledger.components import outermost_stops, reached
    from gradlang.expr.stopgrad import unstopped

    expr, wrt = request.expr, request.wrt
    gradient = tidy(reverse.grad(expr, wrt))
    inner = jacobian_explanation(replace(request, operation="jacobian", expr=gradient), depth, names)
    entries = tuple(reached(stop, (wrt,), "tensor") for stop in outermost_stops([expr]))
    summary = "; ".join(p for p in (f"{SUMMARY} over the gradient {plain(gradient)}", phrase(entries)) if p)
    blocked = full(sp.S.Zero, shape_of(inner.derived))
    if entries:
        blocked = tidy(unstopped(forward.tangent(tidy(reverse.grad(unstopped(expr), wrt)), wrt) - inner.derived))
    return said(replace(inner, request=request, summary=summary, ledger=entries, blocked=blocked))
