"""The DAG view of SymPy expressions: each distinct subexpression once.

SymPy expressions are trees in name only: a model built by the evaluator
shares its subexpressions (the hidden layer of an MLP feeds every output), and
any recursive walk of such an expression (`free_symbols`, `count_ops`,
`xreplace`, `sympy.diff`) visits a shared node once per path to it, which is
exponential in the depth of sharing. Everything here walks the DAG instead:
distinct subexpressions (by SymPy equality) in topological order, found with
an explicit stack, since a chain of nested calls can be deeper than Python's
recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class Dag:
    """Distinct subexpressions of some roots, children before parents.

    nodes[i] is a SymPy object, children[i] the node indices of its args (in
    order, repeats kept), roots the indices of the expressions it was built from.
    """

    nodes: tuple
    children: tuple
    index: dict
    roots: tuple

    def __len__(self) -> int:
        return len(self.nodes)

    def parents(self) -> list[list[int]]:
        """For each node, the nodes that use it (once per use)."""
        users: list[list[int]] = [[] for _ in self.nodes]
        for i, kids in enumerate(self.children):
            for k in kids:
                users[k].append(i)
        return users


def build_dag(roots) -> Dag:
    """The DAG of one expression or a sequence of them (iterative post-order)."""
    roots = list(roots) if isinstance(roots, (list, tuple)) else [roots]
    index: dict = {}
    nodes: list = []
    children: list = []
    by_id: dict = {}
    for root in roots:
        _visit(root, index, nodes, children, by_id)
    return Dag(tuple(nodes), tuple(children), index, tuple(by_id[id(r)] for r in roots))


_FLOAT = object()  # the key of a Float in `index` is (_FLOAT, its mpf value)


def _visit(root, index, nodes, children, by_id) -> None:
    """Append root and its unseen descendants, each after its args.

    `by_id` maps the id of every object met to its node: a shared node is
    usually the same object, found without hashing (SymPy recomputes a
    Float's hash through mpmath at every lookup); an equal copy is then found
    in `index` by its key (`_key`), a Float by its mpf value. The objects stay alive in `nodes` or in the
    expressions walked, so their ids stay theirs.
    """
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in by_id:
            continue
        if expanded:
            kids = tuple(by_id[id(a)] for a in node.args)
            found = index.get(_key(node, kids))
            if found is None:
                found = index[_key(node, kids)] = len(nodes)
                index[node] = found
                nodes.append(node)
                children.append(kids)
            by_id[id(node)] = found
            continue
        stack.append((node, True))
        stack.extend((a, False) for a in reversed(node.args) if id(a) not in by_id)


def _key(node, kids: tuple):
    """The key an equal copy of `node` is found by: a Float by its mpf value (a tuple hashes without mpmath);
    a node that is its type over its args by its type and its children's nodes, so an equal copy is found
    without SymPy's __eq__, which walks the whole of both copies (CQL's explain spent a third of its time
    there, comparing the copies of one pass's parts at each of their levels); any other node by itself."""
    if node.is_Float:
        return (_FLOAT, node._mpf_)
    if kids and node._hashable_content() is node._args:
        return (type(node), kids)
    return node


def rebuilt(node, args):
    """node over new args as it stands: an Add, Mul or Pow is built unevaluated, so it is
    not re-sorted and re-merged (quadratic in a big sum) and a shared argument stays one node."""
    if isinstance(node, (sp.Add, sp.Mul, sp.Pow)):
        return node.func(*args, evaluate=False)
    return evaluated(node, args)


def evaluated(node, args):
    """node.func(*args); a comparison SymPy refuses to evaluate (a side that is not real, as
    sqrt(-1.5) in a where's condition once a derivative rebuilds it) is built unevaluated, and
    the float path reads it as IEEE does: a comparison with nan is false (differential fuzzer, seed 110)."""
    try:
        return node.func(*args)
    except TypeError:
        if not isinstance(node, sp.core.relational.Relational):
            raise
        return node.func(*args, evaluate=False)


def dag_size(exprs) -> int:
    """The number of distinct subexpressions (atoms included) of one or many expressions."""
    if isinstance(exprs, sp.MatrixBase | sp.NDimArray):
        exprs = list(exprs)
    return len(build_dag(exprs))


def dag_edges(exprs) -> int:
    """The number of argument slots of the distinct nodes: the work of evaluating the DAG once."""
    if isinstance(exprs, sp.MatrixBase | sp.NDimArray):
        exprs = list(exprs)
    return sum(len(kids) for kids in build_dag(exprs).children)


def tree_sizes(dag: Dag, cap: int | None = None) -> list[int]:
    """Node count of each node as a printed tree, computed on the DAG (capped to stay small)."""
    sizes: list[int] = []
    for kids in dag.children:
        size = 1 + sum(sizes[k] for k in kids)
        sizes.append(min(size, cap) if cap is not None else size)
    return sizes


def depends_on(dag: Dag, symbols, cut) -> list[bool]:
    """Whether each node depends on one of the symbols through uncut edges."""
    targets = set(symbols)
    result: list[bool] = []
    for node, kids in zip(dag.nodes, dag.children):
        if node in targets:
            result.append(True)
        elif cut(node):
            result.append(False)
        else:
            result.append(any(result[k] for k in kids))
    return result
