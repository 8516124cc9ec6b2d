"""Names for a derivation's lines: the user's bindings, and the repeated tensor parts a teacher would name.

`z1 = W @ x1` in the program is shown as z1, its adjoint as ∂L/∂z1. When the
program named nothing, a tensor part the expression uses more than once (`P @ x`
in a cosine loss) gets a textbook letter, as the value printer names it: `z`
for a linear map, `s` softmax, `p` sigmoid, `h` tanh, `u` anything else,
numbered when a letter repeats, and never a name the expression or the session
already uses.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.graph import build_dag
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import Var, rank, shape_of

_LETTERS = ((t.MatMul, "z"), (t.SoftmaxOf, "s"))
_FUNCTIONS = {"sigmoid": "p", "tanh": "h"}


def user_names(expr, names) -> tuple:
    """The user's bindings (value, name) that occur inside the expression (not the whole of it)."""
    inside = set(build_dag([expr]).nodes)
    return tuple((value, name) for value, name in names if value in inside and value != expr)


def repeated_parts(expr, taken: set) -> tuple:
    """(value, name) for each tensor part used more than once, outermost last; none when the user named parts."""
    dag = build_dag([expr])
    used = set(taken) | {s.name for s in dag.nodes if isinstance(s, sp.Symbol)}
    return lettered([node for node, users in zip(dag.nodes, dag.parents()) if len(set(users)) > 1], used)


def lettered(nodes, used: set) -> tuple:
    """(value, name) for each of the nodes a reader would name, in order, each a fresh textbook letter."""
    used, chosen = set(used), []
    for node in nodes:
        if _worth(node):
            name = _fresh(_letter(node), used)
            used.add(name)
            chosen.append((node, Var(name, shape_of(node))))
    return tuple(chosen)


def _worth(node) -> bool:
    """A composite tensor a reader would name: not a name, a constant, a stop or a mark over a name."""
    if not isinstance(node, sp.Expr) or isinstance(node, (sp.Symbol, StopGradient, t.Literal)) or not node.args:
        return False
    if isinstance(node, (t.OneHot, t.Eye, t.Ones, t.Zeros, t.Transpose, t.Entry)):
        return False
    return rank(node) > 0 and not (isinstance(node, sp.Mul) and len(node.args) == 2 and node.args[0] == -1)


def _letter(node) -> str:
    for cls, letter in _LETTERS:
        if isinstance(node, cls):
            return letter
    return _FUNCTIONS.get(type(node).__name__.lower(), "u")


def _fresh(letter: str, used: set) -> str:
    if letter not in used:
        return letter
    return next(f"{letter}{k}" for k in range(1, 1000) if f"{letter}{k}" not in used)
