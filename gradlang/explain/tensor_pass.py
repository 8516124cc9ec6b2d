"""explain of a gradient at symbolic size: the tensor-level reverse pass, one line per operation.

Each line is the adjoint of one subexpression the gradient flows through,
`∂L/∂u = …`, tidied by the bounded rewrites, with the rule of the operation
that sent it (`matmul: Ā = Ȳ Bᵀ`, `softmax: z̄ = s ⊙ (s̄ − ⟨s̄, s⟩)`, as the
operation's record says it: record.TensorRule's `said`). Lines
for plain arithmetic that only passes the adjoint on (a sum, a sign) are
left out; the last line is the gradient itself. The records are explain's
own (formula.VectorDerivation), so every output form renders them.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor.reverse import trace
from gradlang.derive.tensor.rewrite import tidy
from gradlang.expr import primitives
from gradlang.expr.graph import build_dag
from gradlang.expr.tensor import nodes as t
from gradlang.explain.formula import Math, VectorDerivation, VectorLine, formula

MAX_LINES = 20  # a derivation longer than this shows its last lines (the ones nearest the variable)

def _bar(name: str) -> str:
    return rf"\bar{{{name}}}"


_ARITHMETIC = {
    sp.Add: ("sum rule: ū = ȳ", rf"{_bar('u')} = {_bar('y')}"),
    sp.Mul: ("product rule: ū = ȳ ⊙ v", rf"{_bar('u')} = {_bar('y')} \odot v"),
    sp.Pow: ("power rule: ū = ȳ ⊙ p u^(p−1)", rf"{_bar('u')} = {_bar('y')} \odot p u^{{p-1}}"),
}


def _rule(user) -> tuple:
    """The rule that sent the adjoint down from `user` (the node above), as a formula in both spellings."""
    if isinstance(user, t.TensorOp):
        rule = primitives.tensor_rules().get(type(user))
        plain, latex = rule.said if rule is not None and rule.said else (type(user).__name__, type(user).__name__)
    elif isinstance(user, sp.Function):
        name = user.func.__name__.lower()
        plain, latex = f"{name}: ū = ȳ ⊙ f′(u)", rf"{_bar('u')} = {_bar('y')} \odot f'(u)"
    else:
        plain, latex = _ARITHMETIC.get(type(user), ("chain rule", ""))
    head = plain.split(":")[0]
    return (Math(plain, rf"\text{{{head}}}" + (f": {latex}" if latex and ":" in plain else "")),)


def _shown(node, wrt) -> bool:
    """Every subexpression the gradient flows through gets a line; bare numbers and other symbols do not."""
    return node == wrt or bool(node.args)


def _lhs(node, wrt) -> tuple:
    """∂L/∂u, with u in brackets unless it is a name or a call."""
    if node == wrt:
        return formula(f"∂L/∂{wrt}")
    simple = isinstance(node, (sp.Symbol, sp.Function)) and not (isinstance(node, t.TensorOp) and node.spelling.infix)
    return formula("∂L/∂", node) if simple else formula("∂L/∂(", node, ")")


def tensor_derivation(expr, wrt, result) -> VectorDerivation:
    """The reverse pass of grad(expr, wrt) as numbered lines, output to variable."""
    steps = trace(expr, wrt)
    users = _users(expr)
    lines = []
    for node, adjoint in steps[1:]:
        if not _shown(node, wrt):
            continue
        lines.append(VectorLine(_lhs(node, wrt), (formula(tidy(adjoint)),), _rule(users.get(node))))
    if len(lines) > MAX_LINES:
        lines = lines[-MAX_LINES:]
    return VectorDerivation("the reverse pass at the tensor level, one adjoint rule per operation",
                            (), tuple(lines), result)


def _users(expr) -> dict:
    """For each subexpression, the node nearest the output that uses it (the DAG's last parent)."""
    dag = build_dag([expr])
    return {dag.nodes[i]: dag.nodes[max(users)] for i, users in enumerate(dag.parents()) if users}


def tensor_explanation(request, depth=None):
    """The Explanation of a grad at symbolic size: the reverse pass as its vector derivation (no component steps)."""
    from gradlang.explain.explanation import Explanation

    derivation = tensor_derivation(request.expr, request.wrt, request.result)
    return Explanation(request, "reverse pass at the tensor level", (), (), sp.S.Zero, depth=depth, vector=derivation)
