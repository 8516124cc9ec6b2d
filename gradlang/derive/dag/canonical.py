"""Small results read as SymPy would print them; big ones keep their sharing.

The backward pass builds unevaluated sums and products so that a shared node
stays shared. For a result that is small as a tree, rebuilding it bottom-up
with SymPy's evaluation gives the canonical form a reader (and derive.py)
expects: `2*x*cos(x**2)`, not `1*(2*x)*cos(x**2)`. A where-factor is pushed
into its branches on the way (`a * where(c, 1, 0)` becomes `where(c, a, 0)`,
for the partials of a where, marked `Branch`), which is what the tree path
produces and keeps a NaN in the branch not taken out of the result.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.functions import Where
from gradlang.derive.dag.rules import Branch
from gradlang.expr.graph import build_dag, evaluated, rebuilt, tree_sizes

CANONICAL_TREE_LIMIT = 2000


def canonical(exprs: list, limit: int = CANONICAL_TREE_LIMIT) -> list:
    """The expressions rebuilt canonically when, printed as trees, they have at most `limit` nodes in all.

    The limit is on the whole result: 64 partials of a 64-factor product are
    small one by one, but canonically they are 64 flat products of 64 factors,
    the quadratic cost that the shared prefix and suffix products avoid.
    """
    if not exprs:
        return exprs
    dag = build_dag(exprs)
    branches = any(isinstance(n, Branch) for n in dag.nodes)  # only a where's partials make them
    sizes = tree_sizes(dag, cap=limit + 1)
    if sum(sizes[r] for r in dag.roots) <= limit:
        rebuilt = _rebuild_evaluated(dag)
        exprs = [rebuilt[r] for r in dag.roots]
    return _without_branches(exprs) if branches else exprs


def _rebuild(dag, make) -> list:
    """Every node of the DAG rebuilt from its rebuilt args, bottom-up."""
    rebuilt: list = []
    for node, kids in zip(dag.nodes, dag.children):
        args = [rebuilt[k] for k in kids]
        changed = any(a is not node_arg for a, node_arg in zip(args, node.args))
        rebuilt.append(node if node.is_Atom or not kids else make(node, args, changed))
    return rebuilt


def _rebuild_evaluated(dag) -> list:
    """Every node rebuilt with SymPy's evaluation, a product of products as one product.

    The chain rule builds adjoint * partial as nested products; evaluated one
    level at a time, SymPy would distribute a number over a sum on the way
    (2*(u - t) becomes 2*u - 2*t, then a*(2*u - 2*t)). Multiplying all the
    factors of a nest at once gives the form sympy.diff gives: 2*a*(u - t).
    """
    rebuilt: list = []
    factors: list = []
    for node, kids in zip(dag.nodes, dag.children):
        nest = None
        if node.is_Atom or not kids:
            value = node
        elif isinstance(node, sp.Mul):
            nest = [f for k in kids for f in (factors[k] or [rebuilt[k]])]
            if any(isinstance(f, Branch) for f in nest):
                nest = [rebuilt[k] for k in kids]
            value = _sink_branch(nest)
        elif isinstance(node, sp.Add):
            value = _merge_branches([rebuilt[k] for k in kids])
        else:
            value = evaluated(node, [rebuilt[k] for k in kids])
        rebuilt.append(value)
        factors.append(nest)
    return rebuilt


def _sink_branch(factors):
    """a * where(c, p, q) -> where(c, a*p, a*q), as the tree path writes it."""
    branch = next((f for f in factors if isinstance(f, Branch)), None)
    if branch is None:
        return sp.Mul(*factors)
    rest = sp.Mul(*[f for f in factors if f is not branch])
    condition, a, b = branch.args
    return Branch(condition, rest * a, rest * b)


def _merge_branches(terms):
    """where(c, a, b) + where(c, d, e) -> where(c, a + d, b + e) for branch adjoints."""
    by_condition: dict = {}
    others = []
    for t in terms:
        if isinstance(t, Branch):
            by_condition.setdefault(t.args[0], []).append(t)
        else:
            others.append(t)
    merged = [
        Branch(c, sp.Add(*[w.args[1] for w in ws]), sp.Add(*[w.args[2] for w in ws]))
        for c, ws in by_condition.items()
    ]
    return sp.Add(*others, *merged)


def _without_branches(exprs: list) -> list:
    """Replace the internal Branch marker by Where, keeping everything else as built."""
    dag = build_dag(exprs)
    if not any(isinstance(n, Branch) for n in dag.nodes):
        return exprs
    rebuilt = _rebuild(dag, _unbranch)
    return [rebuilt[r] for r in dag.roots]


def _unbranch(node, args, changed):
    if isinstance(node, Branch):
        return Where(*args)
    return rebuilt(node, args) if changed else node
