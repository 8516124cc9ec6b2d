"""Common subexpressions, named on the DAG: t1 = ..., t2 = ..., then the results.

gradlang's one common-subexpression routine; printers (render/shown.py), the
compiled evaluation (numeric.py), lambdify (`lambdify_cse`) and export/ all
use it. Computed on the DAG: a node used more than once (by other nodes or as
one of the results) gets a name when what it stands for, with its own named
parts already replaced, has at least `min_size` nodes. Every printed piece is
then at most the unshared part of the DAG, so the printout grows with the
DAG, not with the tree (SymPy's own `cse` walks the tree, exponential for
expressions that share deeply). With min_size=1 every shared non-atom is
named, which is what a code generator wants, and with `shared_only=False`
every compound node is named, results included: one operation per line, as
numeric.py compiles it.
"""

from __future__ import annotations

import itertools

import sympy as sp
from sympy.core.relational import Relational

from gradlang.expr.graph import build_dag, rebuilt
from gradlang.expr.engine import Var, is_size, is_tensor, shape_of


def named_subexpressions(exprs, min_size: int = 8, prefix: str = "t", symbols=None, shared_only: bool = True,
                         rename: dict | None = None):
    """([(t_k, expr_k), ...], reduced exprs): shared subexpressions named in topological order.

    `symbols` gives the names instead of prefix1, prefix2, ...: an iterator (as
    for sympy.cse) or a function of the node's index in the DAG;
    `shared_only=False` names every compound node, the results too; `rename`
    replaces nodes (the arguments of a compiled function) before anything is named.
    """
    exprs = list(exprs) if isinstance(exprs, (list, tuple, sp.MatrixBase, sp.NDimArray)) else [exprs]
    dag = build_dag(exprs)
    uses = _uses(dag)
    rename = rename or {}
    reduced: list = []
    sizes: list[int] = []
    named: list = []
    roots = set(dag.roots)
    names = symbols if symbols is not None else (sp.Symbol(f"{prefix}{k}", real=True) for k in itertools.count(1))
    for i, (node, kids) in enumerate(zip(dag.nodes, dag.children)):
        if node in rename or not kids:
            reduced.append(rename.get(node, node))
            sizes.append(1)
            continue
        expr, size = _with_args(node, [reduced[k] for k in kids]), 1 + sum(sizes[k] for k in kids)
        if (not shared_only or (uses[i] > 1 and i not in roots)) and size >= min_size and not _size_of_shape(expr):
            name = names(i) if callable(names) else next(names)
            name = _shaped_name(name, expr) if symbols is None else name
            named.append((name, expr))
            expr, size = name, 1
        reduced.append(expr)
        sizes.append(size)
    return named, [reduced[r] for r in dag.roots]


def _size_of_shape(expr) -> bool:
    """A sum or product of sizes (m + n, 2*m: a bound of a range, a length): part of a shape, never named,
    so every node keeps a shape its own arguments say."""
    return bool(expr.free_symbols) and all(is_size(s) for s in expr.free_symbols) and expr.is_integer is True


def _shaped_name(name, expr):
    """A name for a part of the tensor engine keeps its shape (a Var), so a product that uses it still has one."""
    shape = shape_of(expr) if is_tensor(expr) else ()
    return Var(name.name, shape) if shape else name


def _uses(dag) -> list[int]:
    """How often each node is used: as an argument of another node, or as a result."""
    uses = [0] * len(dag)
    for kids in dag.children:
        for k in kids:
            uses[k] += 1
    for r in dag.roots:
        uses[r] += 1
    return uses


def _with_args(node, args):
    """node with new args, built as it stands (no re-canonicalisation) when they changed.

    A NaN argument (numeric.py renames a non-real constant to NaN) makes the
    node NaN, and a comparison with NaN is false except `!=`, as in IEEE 754
    (SymPy refuses to compare with NaN).
    """
    if all(a is b for a, b in zip(args, node.args)):
        return node
    if sp.nan in args:
        if isinstance(node, Relational):
            return sp.true if isinstance(node, sp.Ne) else sp.false
        return node.func(*args)
    return rebuilt(node, args)


def lambdify_cse(exprs):
    """A `cse=` callable for sympy.lambdify: every shared node computed once, no search."""
    return named_subexpressions(exprs, min_size=1, prefix="_t")
