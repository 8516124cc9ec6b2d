"""A vectorised unit (vectorised.py) as Python: the shape check on entry and the body, one line per shared node.

Each operation is spelled for the target: the primitives as their records
say (the elementwise spelling, or `whole` for a reduction over a whole array
and softmax over the last axis: gradlang/expr/primitives/), the operations of
builtins.py (sum, mean, prod, @, transpose) from the table below. A node used
more than once is computed once, into a temporary. Constants are gradlang's
values printed as the unrolled export prints them.
"""

from __future__ import annotations

import re

from gradlang.expr import primitives
from gradlang.expr.values import elements, shape_of
from gradlang.export.ir import Length, resolved
from gradlang.export.printers import PRINTERS, stacked
from gradlang.export.vectorised import open_lengths

_TEMP = "_gl_v"
_PLAIN = re.compile(r"^[\w.]+$|^float\('[^']*'\)$")

# The operations of builtins.py that are not primitives, per target ({0}, {1}: the operands).
OPERATIONS = {
    "sum": {"numpy": "np.sum({0})", "jax": "jnp.sum({0})", "torch": "torch.sum(_t({0}))", "tf": "tf.reduce_sum({0})"},
    "mean": {"numpy": "np.mean({0})", "jax": "jnp.mean({0})", "torch": "torch.mean(_t({0}))",
             "tf": "tf.reduce_mean({0})"},
    "prod": {"numpy": "np.prod({0})", "jax": "jnp.prod({0})", "torch": "torch.prod(_t({0}))",
             "tf": "tf.reduce_prod({0})"},
    "matmul": {"numpy": "({0} @ {1})", "jax": "({0} @ {1})", "torch": "torch.matmul(_t({0}), _t({1}))",
               "tf": "tf.tensordot(_t({0}), _t({1}), axes=1)"},  # tf.matmul takes matrices only
    "transpose": {"numpy": "np.transpose({0})", "jax": "jnp.transpose({0})", "torch": "torch.t(_t({0}))",
                  "tf": "tf.transpose({0})"},
    # for gradients (adjoint.py): a scalar spread over an array's shape, the outer product, the number of components
    "fill": {"numpy": "np.broadcast_to(np.asarray({0}, dtype=float), np.shape({1}))",
             "jax": "jnp.broadcast_to(jnp.asarray({0}, dtype=float), jnp.shape({1}))",
             "torch": "torch.broadcast_to(_t({0}), _t({1}).shape)", "tf": "tf.broadcast_to(_t({0}), tf.shape({1}))"},
    "outer": {"numpy": "np.outer({0}, {1})", "jax": "jnp.outer({0}, {1})", "torch": "torch.outer(_t({0}), _t({1}))",
              "tf": "tf.tensordot(_t({0}), _t({1}), axes=0)"},
    "size": {"numpy": "np.size({0})", "jax": "jnp.size({0})", "torch": "_t({0}).numel()",
             "tf": "tf.cast(tf.size({0}), tf.float64)"},
}
_BINARY = {"mul": "({0} {op} {1})", "pow": "({0} ** {1})", "compare": "({0} {op} {1})"}


def vector_body(vectorised, target: str, table) -> str:
    """The shape check and the body of a vectorised unit, indented for a function."""
    printer = _Printer(target, table, vectorised.root)
    lines = [_check(vectorised.shapes, table)] if _arrays(vectorised.shapes) else []
    result = printer.text(vectorised.root)
    lines += [f"    {name} = {code}" for name, code in printer.lines]
    return "\n".join(lines + [f"    return {result}"]) + "\n"


def describe_open(shape: tuple, lengths: dict) -> str:
    """An argument's shape for the docstring: `any length n0` or `any shape (2, n0)`; '' when fixed."""
    dims = [resolved(d) for d in shape]
    if not any(isinstance(d, Length) for d in dims):
        return ""
    shown = [lengths[d] if isinstance(d, Length) else str(d) for d in dims]
    return f"any length {shown[0]}" if len(shown) == 1 else f"any shape ({', '.join(shown)})"


def length_names(shapes: dict) -> dict:
    """Length -> its name in the module (n0, n1, ...), in order of appearance."""
    return {length: f"n{k}" for k, length in enumerate(open_lengths(shapes))}


def _arrays(shapes: dict) -> dict:
    return {key: shape for key, shape in shapes.items() if shape}


def _check(shapes: dict, table) -> str:
    """One call of _gl_check_shapes: each array's pattern, lengths shared by name, and the least of each."""
    names = length_names(shapes)
    patterns, arguments = [], []
    for (_, name), shape in _arrays(shapes).items():
        dims = [resolved(d) for d in shape]
        patterns.append(f"{table[name]!r}: ({', '.join(repr(names[d]) if isinstance(d, Length) else str(d) for d in dims)},)")
        arguments.append(f"{table[name]!r}: {table[name]}")
    least = {names[d]: d.least for d in names if d.least > 0}
    return f"    _gl_check_shapes({{{', '.join(arguments)}}}, {{{', '.join(patterns)}}}, {least!r})"


class _Printer:
    """Prints the graph from its root; nodes used twice become temporaries."""

    def __init__(self, target: str, table, root):
        self.target, self.table = target, table
        self.constants = PRINTERS[target]({})
        self.uses = _uses(root)
        self.names: dict = {}
        self.lines: list = []

    def text(self, node) -> str:
        if id(node) in self.names:
            return self.names[id(node)]
        code = self._code(node)
        if self.uses.get(id(node), 0) > 1 and node.op not in ("arg", "const"):
            name = f"{_TEMP}{len(self.lines)}"
            self.lines.append((name, code))
            code = name
        self.names[id(node)] = code
        return code

    def _code(self, node) -> str:
        if node.op == "mask":
            return self._mask(node)
        args = [self.text(a) for a in node.args]
        op = node.op
        if op == "arg":
            return self.table[node.data[1]]
        if op == "const":
            return self._constant(node.data)
        if op == "neg":
            return f"(-{args[0]})"
        if op == "add":
            terms = [f"{sign} {a}" for sign, a in zip(node.data[1:], args[1:])]
            return f"({' '.join([args[0], *terms])})"
        if op in _BINARY:
            return _BINARY[op].format(*args, op=node.data)
        if op in OPERATIONS:
            return OPERATIONS[op][self.target].format(*args)
        if op == "prim":
            return node.data.export[self.target].call(", ".join(args))
        if op == "whole":
            return node.data.export[self.target].call_whole(args[0])
        if op == "index":
            return f"{args[0]}[{', '.join(map(str, node.data))}]"
        if op == "onehot":
            return f"_onehot({args[0]}, {node.data!r})"
        if op == "stack":
            return f"_stack({', '.join(args)})"
        if op == "len":
            return f"{args[0]}.shape[0]"
        raise ValueError(f"no spelling for {op}")  # a bug: vectorised.py builds only the ops above

    def _mask(self, node) -> str:
        """where(c, t, sg(t)) in branch a, where(c, sg(t), t) in b (masks.py); NumPy, with no gradient, keeps t."""
        value = self.text(node.args[0])
        if self.target == "numpy":
            return value
        stopped = primitives.lookup("stop_gradient").export[self.target].call(value)
        pair = (value, stopped) if node.data else (stopped, value)
        return primitives.lookup("where").export[self.target].call(", ".join([self.text(node.args[1]), *pair]))

    def _constant(self, value) -> str:
        shape = shape_of(value)
        printed = [self.constants.doprint(e) for e in (elements(value) if shape else [value])]
        code = stacked(printed, shape)
        return code if shape or _PLAIN.match(code) else f"({code})"


def _uses(root) -> dict:
    """How many parents each node has in the graph (id -> count)."""
    uses, stack, seen = {}, [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for child in node.args:
            uses[id(child)] = uses.get(id(child), 0) + (2 if node.op == "mask" and child is node.args[0] else 1)
            stack.append(child)
    return uses
