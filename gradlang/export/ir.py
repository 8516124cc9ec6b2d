"""The vectorised form of an exported function: array operations on shapes whose lengths may be left open.

vectorised.py reads a definition's syntax tree into a graph of `Node`s (one
node per array operation: `sum`, `matmul`, softmax over the last axis, an
elementwise primitive, an index, ...), and vector_text.py prints it for a
target. A node's shape is a tuple of dimensions; a dimension is a number the
program fixes, or a `Length` left open: the length of a declared `x: R^3` or
of a vector parameter is open until an operation ties it to a number
(`x + [1, 2, 3]`, `W @ v` with `v` of length 2) or to another length
(`dot(a, b)`). An index `v[4]` leaves it open but at least 5 long. Lengths
are merged as in unification (union-find), and each remembers the length it
had in the program, so the graph can be checked against gradlang's own value.

Nodes are hash-consed: building the same operation on the same inputs twice
gives the same node, so a shared subexpression (`exp(v - sg(max(v)))`
written twice) is printed once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field


class NotVectorised(Exception):
    """The definition cannot be printed as array operations (a grad, an at, an index parameter, ...)."""


@dataclass(eq=False)
class Length:
    """An open dimension: merged with others (union-find), fixed to a number, or bounded below by indices."""

    program: int  # its length in the program, for checking the graph against gradlang's value
    parent: "Length | int | None" = None
    least: int = 0
    ident: int = field(default_factory=itertools.count().__next__)


def resolved(dim):
    """The representative of a dimension: a number, or the root Length of its class."""
    while isinstance(dim, Length) and dim.parent is not None:
        dim = dim.parent
    return dim


def unify(a, b) -> None:
    """Make two dimensions equal; NotVectorised if they cannot be (gradlang would refuse the shapes)."""
    a, b = resolved(a), resolved(b)
    if a is b or (isinstance(a, int) and isinstance(b, int) and a == b):
        return
    if isinstance(a, int) and isinstance(b, int):
        raise NotVectorised(f"lengths {a} and {b} do not match")
    if isinstance(a, int):
        a, b = b, a
    if a.program != (b if isinstance(b, int) else b.program):
        raise NotVectorised("lengths that differ in the program")
    if isinstance(b, Length):
        b.least = max(b.least, a.least)
    elif b < a.least:
        raise NotVectorised(f"an index past the end of length {b}")
    a.parent = b


def at_least(dim, count: int) -> None:
    """An index needs the dimension to hold `count` components."""
    dim = resolved(dim)
    if isinstance(dim, int):
        if dim < count:
            raise NotVectorised(f"an index past the end of length {dim}")
    else:
        dim.least = max(dim.least, count)


def unify_shapes(a: tuple, b: tuple) -> None:
    if len(a) != len(b):
        raise NotVectorised("shapes of different ranks")
    for x, y in zip(a, b):
        unify(x, y)


def broadcast(shapes: list) -> tuple:
    """gradlang's elementwise rule: scalars broadcast, other shapes must be equal."""
    result = ()
    for shape in shapes:
        if not shape:
            continue
        if not result:
            result = shape
        else:
            unify_shapes(result, shape)
    return result


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """The shape of a @ b (vectors and matrices), tying the inner lengths."""
    if not a or not b:
        raise NotVectorised("@ of a scalar")
    unify(a[-1], b[0])
    return a[:-1] + b[1:]


def program_shape(shape: tuple) -> tuple:
    """The shape in the program, for the check against gradlang's value."""
    return tuple(d if isinstance(d, int) else d.program for d in map(resolved, shape))


@dataclass(eq=False)
class Node:
    """One array operation of the graph (see the module docstring for `op`)."""

    op: str
    args: tuple
    shape: tuple
    data: object = None
    condition: bool = False  # a comparison: only where's first argument takes one


class Graph:
    """Builds nodes, hash-consed, so equal subexpressions are one node."""

    def __init__(self):
        self._nodes: dict = {}

    def node(self, op: str, args: tuple, shape: tuple, data=None, condition: bool = False) -> Node:
        key = (op, tuple(id(a) for a in args), _key(data))
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = Node(op, tuple(args), shape, data, condition)
        return found


def _key(data):
    try:
        hash(data)
    except TypeError:
        return ("id", id(data))
    return data
