"""Naming the shared subexpressions of a big result: t1 = ..., t2 = ..., then the result.

Computed on the DAG: a node used more than once (by other nodes or as one of
the results) gets a name when what it stands for, with its own named parts
already replaced, has at least `min_size` nodes. Every printed piece is then
at most the unshared part of the DAG, so the printout grows with the DAG, not
with the tree. With min_size=1 every shared non-atom is named, which is the
common-subexpression elimination a code generator wants (lambdify's `cse=`
accepts `named_subexpressions` directly, through `lambdify_cse`), and with
`shared_only=False` every compound node is named, one operation per line, as
the compiled evaluation of numeric.py prints it. This is gradlang's one
common-subexpression routine: printers, numeric.py and export/ all use it.
"""

from __future__ import annotations

import itertools

import sympy as sp

from gradlang.expr.graph import build_dag


def named_subexpressions(exprs, min_size: int = 8, prefix: str = "t", symbols=None, shared_only: bool = True,
                         rename: dict | None = None):
    """([(t_k, expr_k), ...], reduced exprs): shared subexpressions named in topological order.

    `symbols` gives the names instead of prefix1, prefix2, ...: an iterator (as
    for sympy.cse) or a function of the node's index in the DAG;
    `shared_only=False` names used-once nodes too; `rename` replaces atoms.
    """
    exprs = list(exprs) if isinstance(exprs, (list, tuple, sp.MatrixBase, sp.NDimArray)) else [exprs]
    dag = build_dag(exprs)
    uses = [0] * len(dag)
    for kids in dag.children:
        for k in kids:
            uses[k] += 1
    for r in dag.roots:
        uses[r] += 1
    reduced: list = []
    sizes: list[int] = []
    named: list = []
    roots = set(dag.roots)
    names = symbols if symbols is not None else (sp.Symbol(f"{prefix}{k}", real=True) for k in itertools.count(1))
    for i, (node, kids) in enumerate(zip(dag.nodes, dag.children)):
        expr = (rename or {}).get(node, node) if not kids else _with_args(node, [reduced[k] for k in kids])
        size = 1 + sum(sizes[k] for k in kids)
        if kids and (uses[i] > 1 or not shared_only) and size >= min_size and i not in roots:
            name = names(i) if callable(names) else next(names)
            named.append((name, expr))
            expr, size = name, 1
        reduced.append(expr)
        sizes.append(size)
    return named, [reduced[r] for r in dag.roots]


def _with_args(node, args):
    """node with new args, built as it stands (no re-canonicalisation) when they changed."""
    if all(a is b for a, b in zip(args, node.args)):
        return node
    if isinstance(node, (sp.Add, sp.Mul, sp.Pow)):
        return node.func(*args, evaluate=False)
    return node.func(*args)


def lambdify_cse(exprs):
    """A `cse=` callable for sympy.lambdify: every shared node computed once, no search."""
    return named_subexpressions(exprs, min_size=1, prefix="_t")
