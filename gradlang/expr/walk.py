"""Walks over SymPy expressions that visit each distinct subexpression once.

The evaluator shares subexpressions (a function applied to itself, a hidden
layer feeding every output), so an expression can be small as a DAG and
astronomically large as a tree. SymPy's own `has`, `atoms` and `xreplace` walk
the tree; these helpers walk the DAG (`gradlang.dag.graph.build_dag`).
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.expr.graph import build_dag, tree_sizes
from gradlang.expr.engine import kept_shape, shape_of


def dag_nodes(exprs) -> tuple:
    """The distinct subexpressions of one expression or a list of them."""
    return build_dag(list(exprs) if isinstance(exprs, (list, tuple)) else [exprs]).nodes


def dag_atoms(exprs, *classes) -> set:
    """The distinct subexpressions that are instances of the classes."""
    return {node for node in dag_nodes(exprs) if isinstance(node, classes)}


def dag_has(exprs, *targets) -> bool:
    """True when a subexpression equals one of the targets or is an instance of a target class."""
    classes = tuple(t for t in targets if isinstance(t, type))
    values = {t for t in targets if not isinstance(t, type)}
    return any((classes and isinstance(n, classes)) or n in values for n in dag_nodes(exprs))


def tensor_parts_hold(expr, variables) -> bool:
    """Does a tensor operation of the formula hold one of the scalar variables (sum(a^3*x) holds a)? The
    component rules take a tensor part as a constant, so only the tensor engine derives such a formula by them."""
    from gradlang.expr.tensor.nodes import TensorOp

    held = set(variables)
    return any(isinstance(node, TensorOp) and node.free_symbols & held for node in dag_nodes([expr]))


def tree_size(exprs, cap: int = 10**18) -> int:
    """How many nodes one expression or a list of them has when printed as trees (at most `cap`)."""
    exprs = list(exprs) if isinstance(exprs, (list, tuple)) else [exprs]
    dag = build_dag(exprs)
    sizes = tree_sizes(dag, cap=cap)
    return min(sum(sizes[r] for r in dag.roots), cap)


def rebuild(expr, mapping: dict, combine=None):
    """`expr.xreplace(mapping)` over the DAG; `combine(node, args)` builds each new node."""
    return rebuild_all([expr], mapping, combine)[0]


def rebuild_all(exprs: list, mapping: dict, combine=None) -> list:
    """`rebuild` of many expressions at once: a node they share is rebuilt once."""
    if not mapping:
        return list(exprs)
    dag = build_dag(list(exprs))
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        if node in mapping:
            built.append(mapping[node])
        elif not kids:
            built.append(node)
        else:
            args = [built[k] for k in kids]
            if all(a is b for a, b in zip(args, node.args)):
                built.append(node)
            else:
                built.append((combine or build)(node, args))
    return [built[r] for r in dag.roots]


def unwrap(expr, cls, combine=None):
    """expr with every application of the one-argument class `cls` replaced by its argument;
    `combine(node, args)` builds each new node."""
    if not isinstance(expr, sp.Basic):
        return expr
    dag = build_dag([expr])
    if not any(isinstance(n, cls) for n in dag.nodes):
        return expr
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        args = [built[k] for k in kids]
        if isinstance(node, cls):
            built.append(args[0])
        elif not kids or all(a is b for a, b in zip(args, node.args)):
            built.append(node)
        else:
            built.append((combine or build)(node, args))
    return built[dag.roots[0]]


def shaped_replace(expr, mapping: dict):
    """`rebuild(expr, mapping)` with each rebuilt part keeping its shape: a tensor formula given numbers
    (`argmax(b*y) at b = 0`, `onehot(k, n) - onehot(0, n) at k = 0`) is not a scalar where SymPy's algebra
    made it one (zeros(n), not 0)."""
    return rebuild(expr, mapping, shaped_build)


def shaped_build(node, args):
    """node rebuilt from new arguments, with node's shape kept where SymPy's algebra dropped it."""
    rebuilt = build(node, args)
    try:
        return kept_shape(rebuilt, shape_of(node))
    except RecursionError:  # a formula too deep to walk for its shape is a scalar one in practice
        return rebuilt


def build(node, args):
    """node.func(*args), with comparisons built as IEEE has them (see `relation`), and the
    real domain kept: new arguments must not let SymPy rewrite sqrt(u)^2 as u (expr/domain.py)."""
    if isinstance(node, sp.Rel):
        return relation(node.func, *args)
    from gradlang.expr.domain import kept

    return kept(node.func, list(args))


def relation(func, a, b, shaped: bool = True):
    """A comparison with nan, or with a non-real float number (nan in float arithmetic), is false (!= true), as
    in IEEE; SymPy raises TypeError for both.

    A comparison with an exact non-real number (`sqrt(-4) > 0`) is kept undecided: the statement's
    value then ends in an error, as `sqrt(-4)` does, or, once a float makes it floating, the number
    is nan and the comparison false (core/substitute.py). A comparison of tensors is kept undecided too
    unless `shaped` is False (see `_shaped_truth`)."""
    if any(_not_a_number(side) and side not in (sp.nan, sp.zoo) and not side.has(sp.Float) for side in (a, b)):
        return func(a, b, evaluate=False)
    if _not_a_number(a) or _not_a_number(b):
        return sp.true if func is sp.Ne else sp.false
    if tree_size([a, b], cap=limits.DECIDED_COMPARISON_NODES + 1) > limits.DECIDED_COMPARISON_NODES:
        # SymPy decides a comparison by asking its sides' signs, walking their trees once per path
        # through shared parts (`f30 > 0` of a doubling chain never ends); a large one waits for numbers
        return func(a, b, evaluate=False)
    try:
        decided = func(a, b)
    except TypeError:  # SymPy wrongly judged a symbolic side non-real: keep the comparison as written
        return func(a, b, evaluate=False)
    return func(a, b, evaluate=False) if shaped and _shaped_truth(decided, a, b) else decided


def _shaped_truth(decided, a, b) -> bool:
    """A comparison of tensors that SymPy decides (z > z is false) would lose its shape: true or false has
    none, and `where(z > z, 1, t)` of a vector z is t 𝟙. It is kept as written, for where to decide knowing
    the shape (core/tensor_values.py); a where rebuilt from it then still has the shape of its condition."""
    if not isinstance(decided, sp.logic.boolalg.BooleanAtom):
        return False
    try:
        return bool(shape_of(a) or shape_of(b))
    except RecursionError:
        return False


def _not_a_number(u) -> bool:
    return u is sp.nan or (isinstance(u, sp.Expr) and u.is_number and u.is_extended_real is False)


def rebuilt(expr, kinds: tuple, step):
    """The formula rebuilt over its DAG with `step` applied to each node, bottom up, each shared node once (a
    tree walk would redo a shared part at every use); the formula itself where it holds no node of `kinds`."""
    if not dag_has([expr], *kinds):
        return expr
    dag = build_dag([expr])
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        args = [built[k] for k in kids]
        if kids and any(a is not b for a, b in zip(args, node.args)):
            node = node.func(*args)
        built.append(step(node))
    return built[dag.roots[0]]
