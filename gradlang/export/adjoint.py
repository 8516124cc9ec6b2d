"""grad(e, x) of an exported definition as array operations: reverse mode over the export's graph (ir.py).

`g = grad(loss(x), x)` is read (vectorised.py) as the graph of `loss(x)`,
and its gradient by the argument node of x is built here as more nodes of
the same graph, printed like any other expression: so it takes any length,
NumPy computes it too, and its conventions are gradlang's, not the
framework's (docs/language.md, section 5):
- elementwise primitives differentiate by their records' own rules (the
  partials gradlang uses, gradlang/expr/primitives/): relu' and abs' are
  where(u > 0, 1, 0) and sign(u), 0 at the kink; max(a, b) gives each
  argument its share, ties share equally;
- a primitive on a whole array (max, softmax, logsumexp, norm of a
  vector) differentiates by its record's `whole_adjoint` (the maximum
  shares its gradient among the tied components); stop_gradient and the
  piecewise-constant functions pass
  nothing; where(c, a, b) selects (a mask of masks.py selects too, so an
  untaken branch's nan is dropped, not multiplied).
An index v[i] sends its adjoint to that place (`_onehot` of the prelude).
A node without a vector rule here (prod, softmax or logsumexp of a matrix,
...) raises NotVectorised, and the definition is exported
unrolled for the program's shapes, as before.

Every adjoint has exactly its node's shape: a contribution to a scalar from
an array is summed, one to an array from a scalar is broadcast (`fill`).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.relational import Relational

from gradlang.expr import primitives
from gradlang.export.ir import Graph, Node, NotVectorised, broadcast


def gradient(graph: Graph, value: Node, wrt: Node) -> Node:
    """The gradient of the scalar `value` by the argument node `wrt`, as a node of `graph`."""
    if value.shape or value.condition:
        raise NotVectorised("grad of something that is not a number")
    build = _Build(graph)
    order = _dependents(value, wrt)
    adjoints = {id(value): [build.const(1)]} if order else {}
    for node in reversed(order):
        parts = adjoints.pop(id(node), None)
        if not parts or node is wrt:
            adjoints[id(node)] = parts or []
            continue
        total = build.total(parts)
        for arg, part in _rule(node.op)(build, node, total):
            if id(arg) in order.ids:
                adjoints.setdefault(id(arg), []).append(build.fit(part, arg))
    parts = adjoints.get(id(wrt))
    return build.total(parts) if parts else build.fit(build.const(0.0), wrt)


class _Order(list):
    """Nodes that depend on `wrt`, children before parents, with their ids for lookups."""

    def __init__(self):
        super().__init__()
        self.ids: set = set()


def _dependents(root: Node, wrt: Node) -> _Order:
    """The nodes through which an adjoint reaches `wrt` (not under a stop or a condition), in topological order."""
    order, depends = _Order(), {}
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            depends[id(node)] = node is wrt or any(depends.get(id(a), False) for a in _carriers(node))
            if depends[id(node)]:
                order.append(node)
                order.ids.add(id(node))
            continue
        if id(node) in depends:
            continue
        depends[id(node)] = False  # visiting: the graph is acyclic, so this is never read as an answer
        stack.append((node, True))
        stack.extend((a, False) for a in _carriers(node) if id(a) not in depends)
    return order


def _carriers(node: Node) -> tuple:
    """The arguments an adjoint flows to: none through a stop, a condition or a length."""
    if node.condition or node.op in ("len", "size", "onehot") or node.op in ("prim", "whole") and node.data.zero_derivative:
        return ()
    if node.op == "mask":
        return node.args[:1]
    if node.op == "prim" and node.data.name == "where":
        return node.args[1:]
    if node.op == "fill":
        return node.args[:1]
    return node.args


class _Build:
    """Node constructors for adjoints, shapes broadcast as gradlang's elementwise rule says."""

    def __init__(self, graph: Graph):
        self.graph = graph

    def const(self, value) -> Node:
        """A constant of the adjoint graph: a number of the rules (0, 1, 0.0) or a SymPy value of the program."""
        if not isinstance(value, sp.Basic):
            value = sp.Integer(value) if isinstance(value, int) else sp.Float(value)
        return self.graph.node("const", (), (), value)

    def op(self, op: str, *args, data=None, shape=None) -> Node:
        shape = broadcast([a.shape for a in args]) if shape is None else shape
        return self.graph.node(op, args, shape, data)

    def mul(self, *factors) -> Node:
        one = self.const(1)
        factors = [f for f in factors if f is not one] or [one]  # the seed's 1 is not written
        value = factors[0]
        for factor in factors[1:]:
            value = self.op("mul", value, factor, data="*")
        return value

    def div(self, a, b) -> Node:
        return self.op("mul", a, b, data="/")

    def neg(self, a) -> Node:
        return self.op("neg", a)

    # the vocabulary of a record's whole_adjoint (expr/primitives/record.WholeArrays)

    def sub(self, a, b) -> Node:
        return self.op("add", a, b, data=("+", "-"))

    def sum_all(self, a) -> Node:
        return self.op("sum", a, shape=())

    def whole(self, name: str, a) -> Node:
        return self.op("whole", a, data=primitives.lookup(name), shape=a.shape)

    def ties(self, a, extremum) -> Node:
        return self.where(self.graph.node("compare", (a, extremum), a.shape, "==", True), self.const(1), self.const(0))

    def where(self, condition, a, b) -> Node:
        return self.op("prim", condition, a, b, data=primitives.lookup("where"))

    def total(self, parts: list) -> Node:
        return parts[0] if len(parts) == 1 else self.op("add", *parts, data=("+",) * len(parts))

    def fit(self, part: Node, like: Node) -> Node:
        """`part` in the shape of `like`: summed to a scalar, or a scalar broadcast to an array."""
        if len(part.shape) == len(like.shape):
            return part
        if not like.shape:
            return self.op("sum", part, shape=())
        if not part.shape:
            return self.op("fill", part, like, shape=like.shape)
        raise NotVectorised("an adjoint of another rank")


# --- rules: node, its adjoint -> [(argument, contribution)] ------------------------------------------


def _rule(op: str):
    rule = RULES.get(op)
    if rule is None:
        raise NotVectorised(f"no vector derivative of {op}")
    return rule


def _add(build, node, g):
    return [(t, g if sign == "+" else build.neg(g)) for t, sign in zip(node.args, node.data)]


def _mul(build, node, g):
    a, b = node.args
    if node.data == "*":
        return [(a, build.mul(g, b)), (b, build.mul(g, a))]
    return [(a, build.div(g, b)), (b, build.neg(build.div(build.mul(g, node), b)))]


def _pow(build, node, g):
    """a^b: b*a^(b - 1) by a (the exponent a number where it is one), a^b*log(a) by b."""
    a, b = node.args
    if b.op == "const" and not b.shape:
        lower = build.const(b.data - 1)
    else:
        lower = build.op("add", b, build.const(1), data=("+", "-"))
    log = build.op("prim", a, data=primitives.lookup("log"))
    return [(a, build.mul(g, b, build.op("pow", a, lower))), (b, build.mul(g, node, log))]


def _matmul(build, node, g):
    a, b = node.args
    if len(a.shape) == 1 and len(b.shape) == 1:
        return [(a, build.mul(g, b)), (b, build.mul(g, a))]
    if len(b.shape) == 1:  # W @ v
        return [(a, build.op("outer", g, b, shape=a.shape)), (b, _product(build, _transposed(build, a), g))]
    if len(a.shape) == 1:  # v @ W
        return [(a, _product(build, b, g)), (b, build.op("outer", a, g, shape=b.shape))]
    return [(a, _product(build, g, _transposed(build, b))), (b, _product(build, _transposed(build, a), g))]


def _product(build, a, b) -> Node:
    return build.op("matmul", a, b, shape=a.shape[:-1] + b.shape[1:])


def _transposed(build, a) -> Node:
    return build.op("transpose", a, shape=a.shape[::-1])


def _outer(build, node, g):
    a, b = node.args
    return [(a, _product(build, g, b)), (b, _product(build, a, g))]


def _whole(build, node, g):
    """A primitive on one whole array (max(v), softmax(v)): the rule its record holds (`whole_adjoint`)."""
    (v,) = node.args
    record = node.data
    if record.whole_adjoint is None:
        raise NotVectorised(f"no vector derivative of {record.name}")
    part = record.whole_adjoint(build, node, v, g)
    if part is None:
        raise NotVectorised(f"{record.name} of a matrix")
    return [(v, part)]


def _prim(build, node, g):
    record = node.data
    if record.name == "where":
        c, a, b = node.args
        return [(a, build.where(c, g, build.const(0))), (b, build.where(c, build.const(0), g))]
    dummies, parts = _partials(record, len(node.args))
    leaves = dict(zip(dummies, node.args))
    return [(arg, build.mul(g, _from_sympy(build, part, leaves))) for arg, part in zip(node.args, parts)]


def _mask(build, node, g):
    value, condition = node.args
    zero = build.const(0)
    return [(value, build.where(condition, g, zero) if node.data else build.where(condition, zero, g))]


def _fill(build, node, g):
    return [(node.args[0], g)]


def _stack(build, node, g):
    return [(item, build.graph.node("index", (g,), g.shape[1:], (k,))) for k, item in enumerate(node.args)]


def _index(build, node, g):
    """v[i] (a component, or a row): g at that place, 0 elsewhere (g broadcasts over the row)."""
    (v,) = node.args
    place = build.graph.node("onehot", (v,), v.shape, node.data)
    return [(v, build.op("mul", place, g, data="*", shape=v.shape))]


def _sum(build, node, g):
    return [(node.args[0], g)]  # fit() broadcasts it to the argument's shape


def _mean(build, node, g):
    (v,) = node.args
    return [(v, build.div(g, build.op("size", v, shape=())))]


RULES = {
    "neg": lambda build, node, g: [(node.args[0], build.neg(g))], "add": _add, "mul": _mul, "pow": _pow,
    "matmul": _matmul, "outer": _outer, "transpose": lambda build, node, g: [(node.args[0], _transposed(build, g))],
    "whole": _whole, "prim": _prim, "mask": _mask, "fill": _fill, "stack": _stack, "index": _index, "sum": _sum, "mean": _mean,
}


# --- an elementwise primitive's partials, from its record ------------------------------------------


def _partials(record, count: int) -> tuple:
    """(dummies, partial by each): the record's own rule, or SymPy's derivative of its value (sqrt)."""
    key = (record.name, count)
    if key not in _PARTIALS:
        _PARTIALS[key] = _partials_of(record, count)
    return _PARTIALS[key]


_PARTIALS: dict = {}


def _partials_of(record, count: int) -> tuple:
    dummies = tuple(sp.Dummy(f"u{k}", real=True) for k in range(count))
    value = record.build(*dummies)
    if record.partial is not None and sorted(value.args, key=str) == sorted(dummies, key=str):
        by_argument = {a: record.partial(primitives.SYMPY, value, k) for k, a in enumerate(value.args)}
        return dummies, tuple(by_argument[d] for d in dummies)  # SymPy may have reordered the arguments
    return dummies, tuple(sp.diff(value, d) for d in dummies)


def _from_sympy(build, expr, leaves: dict) -> Node:
    """A partial (SymPy, over the dummies) as nodes over the primitive's argument nodes."""
    if expr in leaves:
        return leaves[expr]
    if not expr.free_symbols:
        return build.const(expr)
    args = [_from_sympy(build, a, leaves) for a in expr.args]
    if isinstance(expr, sp.Add):
        return build.op("add", *args, data=("+",) * len(args))
    if isinstance(expr, sp.Mul):
        return build.mul(*args)
    if isinstance(expr, sp.Pow):
        return build.op("pow", *args)
    if isinstance(expr, Relational):
        return build.graph.node("compare", tuple(args), broadcast([a.shape for a in args]), expr.rel_op, True)
    record = primitives.by_class(type(expr))
    if record is None or not record.export:
        raise NotVectorised(f"no array spelling of {type(expr).__name__}")
    return build.op("prim", *args, data=record)
