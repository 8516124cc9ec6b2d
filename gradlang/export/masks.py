"""The "double where": an exported where(c, a, b) whose untaken branch passes no nan to a gradient.

gradlang differentiates where(c, a, b) as where(c, a', b'): the branch that
is not taken contributes nothing. A framework's where has that gradient too
(its VJP is a select), but it multiplies: in `where(t > 0, sqrt(t), 0)` at
t < 0 the select gives sqrt's node an adjoint of 0, and 0 times sqrt'(t) =
nan is nan (JAX, PyTorch; the exported adjoint of adjoint.py alike).

The standard cure feeds the branch's inputs through a mask whose value is
unchanged and whose VJP is a select: `where(c, t, stop_gradient(t))` in branch
a, `where(c, stop_gradient(t), t)` in branch b (op "mask", data: whether it
is branch a). The adjoint reaching t through it is selected, not multiplied,
so the nan is dropped. That is right only where the mask lines up with the
output: component j of the mask may only carry component j of the branch's
adjoint. So a use is masked
- under a scalar condition: every argument (leaf) of the branch, through any
  operation (the whole branch is taken or not);
- under an array condition: where the path from the use to the branch's
  result is elementwise (`neg`, `add`, `mul`, `pow`, the elementwise
  primitives, where's branches, masks) and the used node has the condition's
  shape: an argument, or the result of a sum, `@`, index, softmax, ... (its
  own inputs are not masked: their components mix).
Anything else (a scalar subexpression broadcast against an array condition,
a leaf under a reduction) is left as it is; there the framework may still
give nan where gradlang gives a number (docs/decisions.md). The unrolled
export (text.py) masks its SymPy components the same way: there every
condition is a scalar, so every symbol of a branch is masked; a tensor formula
printed as itself (formula.py) is masked by the same rule (`masked_formula`).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.relational import Relational
from sympy.logic.boolalg import BooleanAtom, BooleanFunction

from gradlang.expr import primitives
from gradlang.expr.functions import Where
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor.nodes import TensorOp, shape_of as tensor_shape
from gradlang.expr.tensor.shapes import is_size
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import dag_has, dag_nodes, rebuild, rebuilt
from gradlang.export.ir import Graph, Node, resolved

ELEMENTWISE = {"neg", "add", "mul", "pow", "prim", "mask"}  # "prim" nodes are elementwise (or where)


def masked(graph: Graph, condition: Node, branch: Node, taken: bool) -> Node:
    """`branch` of where(condition, …) with each use that lines up with `condition` fed through a mask."""
    memo: dict = {}
    scalar = not condition.shape

    def visit(node: Node) -> Node:
        if id(node) not in memo:
            memo[id(node)] = _visited(node)
        return memo[id(node)]

    def _visited(node: Node) -> Node:
        if node.op == "const" or node.condition or _constant_to_derivatives(node):
            return node
        if not scalar and not _same_shape(node.shape, condition.shape):
            return node
        if node.op == "arg" or (not scalar and node.op not in ELEMENTWISE):
            return graph.node("mask", (node, condition), node.shape, taken)
        keep = _kept(node)
        args = tuple(a if k in keep else visit(a) for k, a in enumerate(node.args))
        return graph.node(node.op, args, node.shape, node.data, node.condition)

    return visit(branch)


def _kept(node: Node) -> set:
    """Positions of arguments that carry no gradient: where's condition, a mask's condition."""
    if node.op == "mask":
        return {1}
    if node.op == "prim" and node.data.name == "where":
        return {0}
    return set()


def _constant_to_derivatives(node: Node) -> bool:
    """stop_gradient, sign, floor, ...: no adjoint goes through them, so nothing under them needs a mask."""
    return node.op in ("prim", "whole") and node.data.zero_derivative or node.op in ("len", "size", "onehot")


def _same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def _same(x, y) -> bool:
    x, y = resolved(x), resolved(y)
    return x is y or (isinstance(x, int) and isinstance(y, int) and x == y)


def masked_components(items: list) -> list:
    """The unrolled export's components with each where's branches masked (SymPy, before printing).

    A component is a number, so every condition in it is a scalar: every
    symbol of a branch is masked (`Where(c, s, sg(s))`, made of the primitives
    the printers already spell), inner wheres first. The components are walked
    as one DAG, each distinct subexpression once: they share their parts (an
    unrolled scan's every step holds the one before, rlax's V-trace), and SymPy's
    own replace, free_symbols and xreplace walk a tree, a shared part once per
    path to it (that export took more than 60 s of CPU, and 340 s to finish).
    """
    exprs = [e for e in items if isinstance(e, sp.Basic)]
    if not dag_has(exprs, Where):
        return list(items)
    dag = build_dag(exprs)
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        args = [built[k] for k in kids]
        if kids and any(a is not b for a, b in zip(args, node.args)):
            node = node.func(*args)
        built.append(_masked_where(node) if isinstance(node, Where) else node)
    masked = iter(built[r] for r in dag.roots)
    return [next(masked) if isinstance(e, sp.Basic) else e for e in items]


def _masked_where(where):
    condition, taken, other = where.args
    return Where(condition, _masked_symbols(taken, condition, True), _masked_symbols(other, condition, False),
                 evaluate=False)


def _masked_symbols(branch, condition, taken: bool):
    """The branch with each of its free symbols masked, found and replaced over its DAG (see above)."""
    if not isinstance(branch, sp.Basic):
        return branch
    leaves = [node for node in dag_nodes(branch) if not node.args]
    symbols = sorted(set().union(*(leaf.free_symbols for leaf in leaves)), key=str)
    masks = {s: Where(condition, *((s, StopGradient(s)) if taken else (StopGradient(s), s)), evaluate=False)
             for s in symbols}
    return rebuild(branch, masks, lambda node, args: node.func(*args)) if masks else branch


def masked_formula(expr):
    """A tensor formula (export/formula.py) with each where's branches masked, as `masked` does for the
    array reader's graph: under a scalar condition every declared tensor and symbol of a branch, through any
    operation; under an array condition each use of the condition's shape reached by elementwise operations
    only (a tensor, or the result of `@`, softmax, … whose components would mix below it)."""
    return rebuilt(expr, (Where,), _formula_masked)


def _formula_masked(node):
    if not isinstance(node, Where):
        return node
    condition, taken, other = node.args
    return Where(condition, _FormulaMask(condition, True).of(taken), _FormulaMask(condition, False).of(other),
                 evaluate=False)


class _FormulaMask:
    """The uses of one branch of a where(condition, …) that go through a mask, each node rebuilt once."""

    def __init__(self, condition, taken: bool):
        self.condition, self.taken = condition, taken
        self.shape = tensor_shape(condition)
        self.memo: dict = {}

    def of(self, node):
        if id(node) not in self.memo:
            self.memo[id(node)] = (node, self._visited(node))
        return self.memo[id(node)][1]

    def _visited(self, node):
        if not getattr(node, "free_symbols", None) or _no_gradient(node):
            return node
        if self.shape and tensor_shape(node) != self.shape:
            return node
        if isinstance(node, sp.Symbol) or (self.shape and not _elementwise(node)):
            pair = (node, StopGradient(node)) if self.taken else (StopGradient(node), node)
            return Where(self.condition, *pair, evaluate=False)
        kept = 1 if isinstance(node, Where) else 0  # a where's own condition carries no gradient
        args = [a if k < kept else self.of(a) for k, a in enumerate(node.args)]
        return node.func(*args) if any(a is not b for a, b in zip(args, node.args)) else node


def _no_gradient(node) -> bool:
    """A condition, a size, stop_gradient and the constants to differentiation: nothing under them needs a mask."""
    if is_size(node) or isinstance(node, (Relational, BooleanFunction, BooleanAtom)):  # a Symbol is a Boolean too
        return True
    if isinstance(node, primitives.constant_classes()):
        return True
    rule = primitives.tensor_rules().get(type(node))
    return rule is not None and rule.constant


def _elementwise(node) -> bool:
    return isinstance(node, (sp.Add, sp.Mul, sp.Pow)) or (isinstance(node, sp.Function) and not isinstance(node, TensorOp))
