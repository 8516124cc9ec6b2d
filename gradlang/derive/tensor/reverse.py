"""Reverse mode at the tensor level: the gradient of a scalar as one formula, whatever the sizes.

The expression's DAG is walked from the output back to the variable, each
distinct subexpression once. A node's adjoint is the sum of what its users
send it; a tensor operation sends what its record's rule says (adjoints.py), an
elementwise node sends ȳ ⊙ ∂f/∂u with ∂f/∂u from the primitive's own rule
(SymPy's `fdiff`, which the registry's records supply), and a stopped or
piecewise-constant node sends nothing, as `lax.stop_gradient` does. A scalar
used beside a vector (broadcast) receives the sum of its adjoint over the
broadcast shape: a scalar adjoint c there stands for c 𝟙, whose sum is the
size times c (`sum(x + t)` sends t the size n, not 1).

Nothing here expands a tensor into components: the work is proportional to
the size of the formula, not to the sizes of its tensors.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.tensor import adjoints
from gradlang.derive.tensor.rewrite import tidy
from gradlang.errors import DiffNeedsComponents, ShapeError
from gradlang.expr import primitives
from gradlang.expr.graph import build_dag
from gradlang.expr.source import to_source
from gradlang.expr.functions import Where
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.broadcast import full
from gradlang.expr.tensor.nodes import rank, shape_of
from gradlang.expr.tensor.shapes import describe


def grad(expr, wrt):
    """∂expr/∂wrt for a scalar `expr`, shaped like `wrt` (a declared tensor or a scalar symbol)."""
    return grads(expr, [wrt])[0]


def grads(expr, wrt: list) -> list:
    """∂expr/∂w for each w of `wrt`, each shaped like w, from one reverse pass: the sweep that reaches
    every variable gathers all their adjoints at once (grad(L, [W1, b1, W2]), as jax.grad(argnums=…))."""
    if rank(expr) != 0:
        raise ShapeError(f"grad needs a scalar expression, got {describe(shape_of(expr))}; use jacobian for a vector")
    found = adjoints_of(expr, list(dict.fromkeys(wrt)))
    return [full(tidy(found[w]), shape_of(w)) for w in wrt]


def trace(expr, wrt, tidy_each=None) -> list:
    """The reverse pass shown: (node, its adjoint) for each node the gradient flows through, output first
    (wrt: a variable, or a tuple of scalar variables taken in one pass)."""
    visited: list = []
    adjoints_of(expr, list(wrt) if isinstance(wrt, tuple) else [wrt], visited=visited, tidy_each=tidy_each)
    return visited


def adjoints_of(expr, variables: list, seed=sp.S.One, visited: list | None = None, tidy_each=None) -> dict:
    """The adjoint of each variable: the sum of the contributions that reach it from `expr`.

    `visited`, when given, receives (node, adjoint) for each node as the pass reaches it. `tidy_each`,
    when given, tidies each node's adjoint before it is sent on, as a reader does line by line: the
    formulas stay small where the raw adjoints of a long chain would compound."""
    dag = build_dag([expr])
    depends = _depends(dag, set(variables))
    arriving: dict = {dag.roots[0]: [seed]}
    for i in reversed(range(len(dag.nodes))):
        if not depends[i] or i not in arriving:
            continue
        node = dag.nodes[i]
        ybar = sp.Add(*arriving[i]) if tidy_each is None else tidy_each(sp.Add(*arriving[i]))
        if visited is not None:
            visited.append((node, ybar))
        if node in variables:
            continue
        for position, child in enumerate(dag.children[i]):
            if depends[child]:
                sent = _local(node, ybar, position)
                if sent is not None and sent != 0:
                    arriving.setdefault(child, []).append(_unbroadcast(sent, node, position))
    return {v: sp.Add(*arriving.get(dag.index.get(v, -1), [])) if v in dag.index else sp.S.Zero for v in variables}


def sent(node, ybar, k):
    """What `node` sends its argument k when its own adjoint is `ybar` (its operation's rule, instantiated)."""
    local = _local(node, ybar, k)
    return sp.S.Zero if local is None else _unbroadcast(local, node, k)


def _depends(dag, variables: set) -> list:
    """Which nodes change with the variables: not through a stop or a piecewise-constant function."""
    constant = (StopGradient, *primitives.constant_classes(), *adjoints.constant_nodes())
    depends = []
    for node, kids in zip(dag.nodes, dag.children):
        if node in variables:
            depends.append(True)
        elif isinstance(node, constant) or not isinstance(node, sp.Expr):
            depends.append(False)
        else:
            depends.append(any(depends[k] for k in kids))
    return depends


def _local(node, ybar, k):
    """What node sends its argument k, given its own adjoint ybar."""
    rule = adjoints.rule_for(node)
    if rule is not None:
        return rule(node, ybar, k)
    if isinstance(node, sp.Add):
        return ybar
    if isinstance(node, sp.Mul):
        return ybar * sp.Mul(*(node.args[:k] + node.args[k + 1 :]))
    if isinstance(node, sp.Pow):
        base, exponent = node.args
        return ybar * (exponent * base ** (exponent - 1) if k == 0 else node * sp.log(base))
    if isinstance(node, sp.Function):
        partial = _partial(node, k)
        return None if partial is None else ybar * partial
    raise DiffNeedsComponents(f"no tensor-level rule for {to_source(node)}; declare literal sizes to take it by components")


def _partial(node, k):
    """∂f/∂u_k of an elementwise function, from its record (SymPy's fdiff); where selects its branch's 1."""
    if isinstance(node, Where):
        condition = node.args[0]
        return None if k == 0 else Where(condition, sp.S.One, sp.S.Zero) if k == 1 else Where(condition, sp.S.Zero, sp.S.One)
    try:
        partial = node.fdiff(k + 1)
    except (sp.core.function.ArgumentIndexError, TypeError, NotImplementedError):
        partial = None
    if partial is None or partial.has(sp.Derivative, sp.Subs):
        raise DiffNeedsComponents(f"no tensor-level rule for {node.func}; declare literal sizes to take it by components")
    return partial


def _unbroadcast(sent, node, k):
    """What argument k receives of `sent`: a scalar used beside a vector receives the sum of its adjoint.

    An elementwise node broadcasts its scalar arguments over its own shape, and a scalar adjoint sent
    through it stands for that broadcast (c for c 𝟙), so the scalar receives the size times c. A tensor
    operation's rule already answers in its argument's shape (a scalar there broadcasts over the argument)."""
    if rank(node.args[k]) != 0:
        return sent
    if rank(sent) > 0:
        return t.Total(sent)
    if isinstance(node, t.TensorOp):
        return sent
    return sent * sp.Mul(*shape_of(node))
