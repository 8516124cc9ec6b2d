"""A definition read from its syntax tree into array operations (ir.py), so its export works at any length.

The unrolled export (units.py) evaluates a definition for the shapes of the
program and prints every component. Where the program's meaning does not fix
a length, the same definition is read here from what the user wrote:
`softmax(v)` is one softmax over the axis, `sum(v)` one reduction, `W @ v`
one product, `v[0]` one index, a user function's body is read with its
arguments bound, a binding over symbols is read from its own statement, and a
part that depends on no argument is evaluated by gradlang itself (so numbers
mean exactly what they mean in the program).

Names are read as gradlang read them: a function's body when it is called
(late binding: the session's last bindings, since an exported function is
called after the program ran), a binding's statement when it ran. A name
bound again after the statement that reads it would be read wrongly from the
session, so such a binding is left to the unrolled export, as is everything
this reader does not know (diff, at over arguments, a grad through a node
without a vector rule in adjoint.py, an index parameter, ...):
`NotVectorised`, and the unit keeps its unrolled body.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang import limits
from gradlang.core import builtins
from gradlang.core.builtins_axes import AXIS_NAMES, is_axis_call
from gradlang.core.evaluate import Evaluator, FunctionDef
from gradlang.expr.tensor.lower import lowered
from gradlang.errors import GradlangError
from gradlang.expr import primitives
from gradlang.expr.values import elements, is_condition, shape_of, to_symbolic
from gradlang.export.adjoint import gradient
from gradlang.export.ir import (
    Graph, Length, Node, NotVectorised, at_least, broadcast, matmul_shape, program_shape, resolved, unify_shapes,
)
from gradlang.export.masks import masked
from gradlang.syntax import lowered as lo

REDUCTIONS = {"sum": "sum", "reduce_sum": "sum", "mean": "mean", "reduce_mean": "mean", "prod": "prod"}


@dataclass
class Vectorised:
    """A unit's body as a graph: its root and the shapes its array arguments must have."""

    root: Node
    shapes: dict  # gradlang name -> shape (numbers and Lengths) of each argument, positional then keyword


def vectorise(session, unit, program, definition: FunctionDef | None = None) -> Vectorised | None:
    """The unit as array operations, or None where it keeps its unrolled body (see the module docstring)."""
    if any(not isinstance(kind, tuple) for _, kind in unit.params):
        return None  # an index parameter: one branch per value
    try:
        read = _read(session, unit, program, definition)
        if read is None:
            return None
        root, reader = read
        lost = _reached_unused(root)
        if lost and definition is not None:
            root, reader = _with_keywords(session, unit, program, definition, lost)
        elif lost:
            return None  # a binding's value is its symbolic value: the unrolled body is exact
        if root.condition or program_shape(root.shape) != tuple(unit.shape):
            return None
        return Vectorised(root, reader.all_shapes())
    except (NotVectorised, GradlangError, RecursionError):
        return None


def _read(session, unit, program, definition: FunctionDef | None):
    """(root, reader) of the unit's body, or None for a binding whose statement is not in the program."""
    reader = _Reader(session, program, unit, definition is not None)
    if definition is not None:
        frame = {p: reader.argument(p, "param") for p in definition.params}
        return reader.read(definition.body, frame, None), reader
    if unit.name not in program.trees:
        return None
    time, tree = program.trees[unit.name]
    return reader.read(tree, {}, time), reader


def _with_keywords(session, unit, program, definition: FunctionDef, lost: dict):
    """The body read again with the symbols it reads made keywords of the function.

    SymPy may cancel a symbol from the symbolic value that the body still
    reads at a call: `where(u > u - pi, u, x - u)` is `u`, yet at u = inf
    the condition is false and the call gives `x - inf`, as JAX's
    `jnp.where` does. So the exported function takes `x` too.
    """
    before = list(unit.keywords)
    unit.keywords = before + [(name, shape or None) for name, shape in lost.items()]
    try:
        root, reader = _read(session, unit, program, definition)
        if _reached_unused(root):
            raise NotVectorised("the body reads a symbol that is not an argument")
        return root, reader
    except BaseException:
        unit.keywords = before  # the unit keeps its unrolled body and its own keywords
        raise


def _reached_unused(root: Node) -> dict:
    """name -> declared shape of each symbol the value reads that is not an argument of the unit."""
    stack, seen, found = [root], set(), {}
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            if node.op == "arg" and node.data[0] == "unused":
                found[node.data[1]] = program_shape(node.shape)
            stack.extend(node.args)
    return found


class _Reader:
    """Reads trees into a Graph; one per unit, so a binding read twice is one subgraph."""

    def __init__(self, session, program, unit, function: bool):
        self.session, self.program, self.graph = session, program, Graph()
        self.tables = {"param": dict(unit.params), "keyword": {k: shape or () for k, shape in unit.keywords}}
        self.function = function  # a function's other symbols are keywords; a loss's are its parameters
        self.shapes: dict = {}
        self.unstopped = False
        self.depth = 0
        self._bindings: dict = {}
        self.names = _Names(session.env)

    def argument(self, name: str, role: str) -> Node:
        """The node of an argument (a parameter, a keyword, or a loss's symbol), with open lengths."""
        if role == "symbol":
            role = "keyword" if self.function else "param"
            if name not in self.tables[role]:
                return self._unused(name)
        if name not in self.tables[role]:
            raise NotVectorised(f"{name} is not an argument of the unit")
        if (role, name) not in self.shapes:
            self.shapes[(role, name)] = tuple(Length(n) for n in self.tables[role][name])
        return self.graph.node("arg", (), self.shapes[(role, name)], (role, name))

    def _unused(self, name: str) -> Node:
        """A symbol gradlang's value does not depend on (W in grad(sum(W @ x), W) = rows of x): a node the
        result must not reach (see vectorise), so the graph may still be read and differentiated through it."""
        value = self.session.env.get(name)
        shape = shape_of(to_symbolic(value)) if value is not None and _is_declaration(name, value) else ()
        return self.graph.node("arg", (), tuple(Length(int(n)) for n in shape), ("unused", name))

    def all_shapes(self) -> dict:
        """(role, name) -> shape of every argument, positional first, the unused ones with open lengths."""
        for role in ("param", "keyword"):
            for name in self.tables[role]:
                self.argument(name, role)
        return {key: self.shapes[key] for role in ("param", "keyword") for key in self.shapes if key[0] == role}

    def name(self, name: str, frame: dict, time) -> Node:
        if name in frame:
            return frame[name]
        self._check_time(name, time)
        value = self.session.env.get(name)
        if isinstance(value, FunctionDef) or name in builtins.CORE:
            raise NotVectorised(f"{name} is a function")
        if value is None:
            if name in builtins.CONSTANTS:
                return self.const(builtins.CONSTANTS[name])
            return self.argument(name, "symbol")
        if _is_declaration(name, value):
            return self.argument(name, "symbol")
        if not _free(value):
            return self.const(value)
        return self._binding(name)

    def _check_time(self, name: str, time) -> None:
        """A binding's statement reads a name as it was then: the session's value only if not bound again since."""
        if time is None:
            return
        if not self.program.known:
            raise NotVectorised("the program's text is not known")
        last = self.program.last.get(name)
        if (last is not None and last >= time) or (last is None and name in self.session.env):
            raise NotVectorised(f"{name} was bound again after it was read")

    def _binding(self, name: str) -> Node:
        key = (name, self.unstopped)
        if key not in self._bindings:
            if name not in self.program.trees:
                raise NotVectorised(f"the statement of {name} is not known")
            time, tree = self.program.trees[name]
            self._bindings[key] = self.read(tree, {}, time)
        return self._bindings[key]

    def const(self, value) -> Node:
        value = to_symbolic(value)
        condition = any(is_condition(e) for e in elements(value))
        return self.graph.node("const", (), tuple(int(n) for n in shape_of(value)), value, condition)

    # --- trees ---------------------------------------------------------------

    def read(self, node, frame: dict, time) -> Node:
        method = getattr(self, "_" + node.kind, None)
        if not isinstance(node, lo.Name):
            folded = self._fold(node, frame, time)
            if folded is not None:
                return folded
        if method is None:
            raise NotVectorised(f"{node.kind} is not read as array operations")
        return method(node, frame, time)

    def _fold(self, node, frame: dict, time):
        """A subtree that depends on no argument, as gradlang's own value of it (a constant)."""
        values = {}
        for name in self.names(node):
            if name in frame:
                if frame[name].op != "const":
                    return None
                values[name] = frame[name].data
                continue
            self._check_time(name, time)
            value = self.session.env.get(name)
            symbol = value is None and name not in builtins.CONSTANTS and name not in builtins.TABLE
            if symbol or (value is not None and not isinstance(value, FunctionDef) and _free(value)):
                if self.function and name not in self.tables["keyword"]:
                    continue  # a symbol the function's value lost (u*(x - x)): folded if it cancels, as a call does
                return None  # a symbol, or a value of symbols
        try:
            value = lowered(Evaluator(self.session.env, []).evaluate(node, values))
        except GradlangError as error:
            raise NotVectorised(error.message) from None
        if isinstance(value, FunctionDef) or _free(value):
            return None
        return self.const(value)

    def _number(self, node, frame, time):
        raise NotVectorised("a number is folded")  # unreachable: _fold evaluates every number

    def _name(self, node, frame, time):
        return self.name(node.name, frame, time)

    def _numeric(self, node, frame, time) -> Node:
        value = self.read(node, frame, time)
        if value.condition:
            raise NotVectorised("a condition outside where")
        return value

    def _neg(self, node, frame, time):
        value = self._numeric(node.operand, frame, time)
        return self.graph.node("neg", (value,), value.shape)

    def _pos(self, node, frame, time):
        return self._numeric(node.operand, frame, time)

    def _power(self, node, frame, time):
        base, exponent = (self._numeric(n, frame, time) for n in (node.base, node.exponent))
        return self.graph.node("pow", (base, exponent), broadcast([base.shape, exponent.shape]))

    def _sum(self, node, frame, time):
        terms = [self._numeric(n, frame, time) for n in node.terms]
        signs = ("+",) + node.signs
        return self.graph.node("add", tuple(terms), broadcast([t.shape for t in terms]), signs)

    def _product(self, node, frame, time):
        value = self._numeric(node.operands[0], frame, time)
        for op, operand_node in zip(node.operators, node.operands[1:]):
            operand = self._numeric(operand_node, frame, time)
            if str(op) == "@":
                value = self.graph.node("matmul", (value, operand), matmul_shape(value.shape, operand.shape))
            else:
                value = self.graph.node("mul", (value, operand), broadcast([value.shape, operand.shape]), str(op))
        return value

    def _compare(self, node, frame, time):
        op = node.operator
        a, b = self._numeric(node.left, frame, time), self._numeric(node.right, frame, time)
        return self.graph.node("compare", (a, b), broadcast([a.shape, b.shape]), str(op), condition=True)

    def _brackets(self, node, frame, time):
        items = [self._numeric(n, frame, time) for n in node.items]
        shape = items[0].shape
        if len(shape) > 1 or any(len(i.shape) != len(shape) for i in items):
            raise NotVectorised("a list of mixed shapes")
        for item in items[1:]:
            unify_shapes(item.shape, shape)
        return self.graph.node("stack", tuple(items), (len(items),) + shape)

    def _index(self, node, frame, time):
        base = self._numeric(node.base, frame, time)
        indices = [self.read(n, frame, time) for n in node.indices]
        if any(i.op != "const" or not isinstance(i.data, sp.Integer) for i in indices):
            raise NotVectorised("an index that is not a whole number of the program")
        if not base.shape or len(indices) > len(base.shape):
            raise NotVectorised("too many indices")
        positions = tuple(int(i.data) for i in indices)
        for position, dim in zip(positions, base.shape):
            at_least(dim, position + 1 if position >= 0 else -position)
        return self.graph.node("index", (base,), base.shape[len(positions):], positions)

    def _call(self, node, frame, time):
        name = node.name
        argument_nodes = list(node.args)
        bound = frame.get(name)
        if bound is None:
            self._check_time(name, time)
            bound = self.session.env.get(name)
        if isinstance(bound, FunctionDef):
            return self._call_user(bound, argument_nodes, frame, time)
        if bound is not None:
            raise NotVectorised(f"{name} is a value")
        if name == "unstopped":
            return self._unstopped(argument_nodes, frame, time)
        if name == "grad":
            return self._grad(argument_nodes, frame, time)
        args = [self.read(n, frame, time) for n in argument_nodes]
        if name == "where" and len(args) == 3 and args[0].condition:
            shape = broadcast([a.shape for a in args])
            condition, taken, other = args
            args = (condition, masked(self.graph, condition, taken, True), masked(self.graph, condition, other, False))
            return self.graph.node("prim", args, shape, primitives.lookup("where"))
        if any(a.condition for a in args):
            raise NotVectorised("a condition outside where")
        if name in AXIS_NAMES and len(args) == 2 and is_axis_call(name, args, argument_nodes):
            raise NotVectorised(f"{name} along an axis")  # max(M, axis=1) is not the elementwise max
        return self._builtin(name, args)

    def _call_user(self, definition: FunctionDef, argument_nodes, frame, time):
        if len(argument_nodes) != len(definition.params) or self.depth >= limits.MAX_CALL_DEPTH:
            raise NotVectorised(f"a call of {definition.name} gradlang refuses")
        args = [self.read(n, frame, time) for n in argument_nodes]
        self.depth += 1
        try:
            return self.read(definition.body, dict(zip(definition.params, args)), time)
        finally:
            self.depth -= 1

    def _unstopped(self, argument_nodes, frame, time):
        if len(argument_nodes) != 1:
            raise NotVectorised("unstopped takes one argument")
        was, self.unstopped = self.unstopped, True
        try:
            return self.read(argument_nodes[0], frame, time)
        finally:
            self.unstopped = was

    def _grad(self, argument_nodes, frame, time):
        """grad(e, x) by a symbol or parameter x: reverse mode over the graph of e (adjoint.py)."""
        if len(argument_nodes) != 2:
            raise NotVectorised("grad takes two arguments here")
        value, wrt = (self._numeric(n, frame, time) for n in argument_nodes)
        if wrt.op != "arg":
            raise NotVectorised("grad by something that is not an argument")
        return gradient(self.graph, value, wrt)

    def _builtin(self, name: str, args: list) -> Node:
        record = primitives.lookup(name)
        if record is not None and record.export:
            return self._primitive(record, args)
        if name in REDUCTIONS and len(args) == 1:
            return self.graph.node(REDUCTIONS[name], (args[0],), ())
        if name == "dot" and len(args) == 2 and len(args[0].shape) == 1:
            unify_shapes(args[0].shape, args[1].shape)
            product = self.graph.node("mul", tuple(args), args[0].shape, "*")
            return self.graph.node("sum", (product,), ())
        if name == "len" and len(args) == 1 and args[0].shape:
            return self.graph.node("len", (args[0],), ())
        if name == "transpose" and len(args) == 1:
            if len(args[0].shape) < 2:
                return args[0]
            return self.graph.node("transpose", (args[0],), args[0].shape[::-1])
        if name == "N" and len(args) == 1:
            return args[0]
        raise NotVectorised(f"{name} is not read as array operations")

    def _primitive(self, record, args: list) -> Node:
        one = len(args) == 1
        if record.name == "stop_gradient" and self.unstopped and one:
            return args[0]
        if record.apply == "elementwise" and one:
            return self.graph.node("prim", (args[0],), args[0].shape, record)
        if record.apply == "extremum" and not one:
            return self.graph.node("prim", tuple(args), broadcast([a.shape for a in args]), record)
        if record.apply in ("extremum", "reduction") and one:
            return self.graph.node("whole", (args[0],), (), record)
        if record.apply == "rows" and one and args[0].shape:
            return self.graph.node("whole", (args[0],), args[0].shape, record)
        raise NotVectorised(f"{record.name} with {len(args)} arguments")


class _Names:
    """Every name a subtree reads, through the bodies of the user functions it calls (late binding).

    Memoised per node, so asking at every node of a wide tree costs its size once, not its size squared.
    """

    def __init__(self, env: dict):
        self.env, self.memo = env, {}

    def __call__(self, node, bound: frozenset = frozenset()) -> set:
        key = (id(node), bound)
        if key not in self.memo:
            self.memo[key] = set()  # a recursive function reads nothing more through itself
            self.memo[key] = self._read(node, bound)
        return self.memo[key]

    def _read(self, node, bound: frozenset) -> set:
        found = set()
        if isinstance(node, (lo.Name, lo.Call, lo.Target)):
            name = node.name
            found |= {name} - bound
            definition = self.env.get(name)
            if isinstance(node, lo.Call) and isinstance(definition, FunctionDef):
                found |= self(definition.body, frozenset(definition.params))
        for child in node.parts():
            found |= self(child, bound)
        return found


def _free(value) -> bool:
    return any(getattr(e, "free_symbols", None) for e in elements(to_symbolic(value)))


def _is_declaration(name: str, value) -> bool:
    items = elements(to_symbolic(value))
    return bool(items) and all(isinstance(e, sp.Symbol) and (e.name == name or e.name.startswith(name + "["))
                               for e in items)


def open_lengths(shapes: dict) -> list:
    """The distinct open lengths of the arguments, in order of first appearance."""
    found = []
    for shape in shapes.values():
        for dim in map(resolved, shape):
            if isinstance(dim, Length) and dim not in found:
                found.append(dim)
    return found
