"""The lowered form of a program: typed statements and expressions that every later stage reads.

lower.py builds it from the lark tree, once per program; nothing outside
`syntax/` sees a lark tree. Each node is a frozen class (Node) named for what it
is (`Product`, `Index`, `At`, `Declaration`), with its parts as typed fields
(an operator is a string, a name is a string, a declaration carries its shape
with each size literal or symbolic) and its place in the source, so an error
can point at the innermost syntax that caused it. An expression's own shape is
not known here: names get their shapes from the session, and the tensor nodes
(expr/tensor/) check them as the value is built.

`kind` is the name the evaluators dispatch on (`_product`, `_index`, ...);
nodes compare by identity, as syntax does (two `x` written twice are two nodes).
"""

from __future__ import annotations

from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field
from typing import ClassVar, Iterator

from gradlang.errors import GradlangError, Span
from gradlang.remembered import remembered


@dataclass(frozen=True)
class Place:
    """Where a node is written: its span (lines and columns) and its character offsets."""

    span: Span | None
    start: int = 0
    end: int = 0


class Node:
    """Any node of the lowered form: frozen, compared by identity, its fields the annotations of its class.

    Not a dataclass: creating its 25 classes as dataclasses generates and compiles five methods each,
    about 10 ms of every start-up (issue #41); a node class here reads its fields once, when it is defined
    (__init_subclass__), and shares one __init__, __repr__ and __setattr__. A field's default is its class
    attribute, or a dataclasses.field(default=…, repr=False) to leave it out of the repr; `place` is keyword-only."""

    kind: ClassVar[str] = "node"
    IMMUTABLE: ClassVar[bool] = True  # remembered.py keeps facts of it by identity
    FIELDS: ClassVar[tuple] = ()  # (name, default or _REQUIRED, shown in the repr), in the order written

    def __init_subclass__(cls, **options):
        super().__init_subclass__(**options)
        cls.FIELDS = cls.FIELDS + _own_fields(cls)

    def __init__(self, *given, place: Place, **named):
        if len(given) > len(self.FIELDS):
            raise TypeError(f"{type(self).__name__} takes {len(self.FIELDS)} fields, not {len(given)}")
        for (name, _, _), value in zip(self.FIELDS, given):
            object.__setattr__(self, name, value)
        for name, default, _ in self.FIELDS[len(given):]:
            value = named.pop(name, default)
            if value is _REQUIRED:
                raise TypeError(f"{type(self).__name__} needs its field '{name}'")
            object.__setattr__(self, name, value)
        if named:
            raise TypeError(f"{type(self).__name__} has no field '{next(iter(named))}'")
        object.__setattr__(self, "place", place)

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field '{name}'")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _, visible in self.FIELDS if visible)
        return f"{type(self).__qualname__}({shown})"

    @property
    def span(self) -> Span | None:
        return self.place.span

    def text(self, source: str) -> str:
        """The node as written in `source`."""
        return source[self.place.start : self.place.end]

    def parts(self) -> Iterator["Node"]:
        """The nodes directly below this one, in the order written."""
        for name, _, _ in self.FIELDS:
            value = getattr(self, name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, tuple):
                yield from (item for item in value if isinstance(item, Node))


_REQUIRED = object()  # a field without a default


def _own_fields(cls) -> tuple:
    """The fields a node class adds, from its annotations (strings: ClassVar ones are not fields); a default
    is taken off the class (a Field's, which may hide the field from the repr)."""
    added = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if str(annotation).startswith("ClassVar"):
            continue
        default, shown = cls.__dict__.get(name, _REQUIRED), True
        if isinstance(default, Field):
            default, shown = (_REQUIRED if default.default is MISSING else default.default), default.repr
            setattr(cls, name, default) if default is not _REQUIRED else delattr(cls, name)
        added.append((name, default, shown))
    return tuple(added)


# --- expressions ----------------------------------------------------------------


class Number(Node):
    kind: ClassVar[str] = "number"
    literal: str  # as written: 3, 2.5, 1e-3 (the evaluator decides exact or float)


class Name(Node):
    kind: ClassVar[str] = "name"
    name: str


class Text(Node):
    """A quoted file name, an argument of load("…") only; `value` is without its quotes."""

    kind: ClassVar[str] = "string"
    value: str


class Brackets(Node):
    """[a, b, c]: a vector, or a matrix when the items are vectors."""

    kind: ClassVar[str] = "brackets"
    items: tuple


class Tuple(Node):
    """(0, 1), (m, n), (0,): axes or a shape, an argument of a builtin only (section 3b)."""

    kind: ClassVar[str] = "tuple"
    items: tuple


class Neg(Node):
    kind: ClassVar[str] = "neg"
    operand: Node


class Pos(Node):
    kind: ClassVar[str] = "pos"
    operand: Node


class Power(Node):
    kind: ClassVar[str] = "power"
    base: Node
    exponent: Node


class Product(Node):
    """a * b / c @ d, flat and left to right: `operators[i]` stands between operands i and i + 1."""

    kind: ClassVar[str] = "product"
    operands: tuple
    operators: tuple  # "*", "/" or "@"


class Sum(Node):
    """a + b - c, flat: `signs[i]` stands before term i + 1."""

    kind: ClassVar[str] = "sum"
    terms: tuple
    signs: tuple  # "+" or "-"


class Compare(Node):
    kind: ClassVar[str] = "compare"
    left: Node
    operator: str  # < <= > >= == !=
    right: Node


class Call(Node):
    """f(a, b): a builtin or a user function, by name; `name_span` is where the name is written."""

    kind: ClassVar[str] = "call"
    name: str
    args: tuple
    name_span: Span | None = field(default=None, repr=False)


class Keyword(Node):
    """name=value among a call's arguments, after its positional ones: sum(M, axis=1).

    Its value stands in the argument list where it is written, so a builtin reads
    `axis=` as its second argument; max and min read an axis only this way (section 6)."""

    kind: ClassVar[str] = "keyword"
    name: str
    value: Node


class Index(Node):
    """v[i], M[i, j], or M[i] (row i)."""

    kind: ClassVar[str] = "index"
    base: Node
    indices: tuple


class Column(Node):
    """M[:, j]."""

    kind: ClassVar[str] = "column"
    base: Node
    index: Node


class Row(Node):
    """M[i, :]."""

    kind: ClassVar[str] = "row"
    base: Node
    index: Node


class Last(Node):
    """X[..., k]: index k of the last axis (section 3b)."""

    kind: ClassVar[str] = "last"
    base: Node
    index: Node


class Along(Node):
    """X[:, :, k]: index k of axis 2 or later (one more than the colons before it), section 3b."""

    kind: ClassVar[str] = "along"
    base: Node
    axis: int
    index: Node


class Range(Node):
    """v[a:b], M[a:b] (axis 0), M[:, a:b] (axis 1), X[:, :, a:b] (axis 2, …) or X[..., a:b] (axis -1, the last):
    the entries a to b - 1 along the axis."""

    kind: ClassVar[str] = "range"
    base: Node
    axis: int
    start: Node
    stop: Node


class Target(Node):
    """What an `at` binding gives a value to: a name, or one component `x[1]` (`indices` as written)."""

    kind: ClassVar[str] = "target"
    name: str
    indices: tuple = ()


class Binding(Node):
    kind: ClassVar[str] = "binding"
    target: Target
    value: Node


class At(Node):
    """e at x = 1, y = 2."""

    kind: ClassVar[str] = "at"
    body: Node
    bindings: tuple


# --- statements -----------------------------------------------------------------


class Dimension(Node):
    """One size of a declared shape: a literal (`3`) or a size name (`n`)."""

    kind: ClassVar[str] = "dimension"
    size: int | str


class Declaration(Node):
    """x, y: R^n — or m, n: size, where `is_size` is set and `shape` is empty.

    `shape` is () for a scalar, one Dimension for a vector, two for a matrix;
    `type_name` is the type as written (R or size), for messages."""

    kind: ClassVar[str] = "declaration"
    names: tuple  # Name nodes
    type_name: str
    shape: tuple = ()
    is_size: bool = False


class Assignment(Node):
    kind: ClassVar[str] = "assignment"
    target: Name
    value: Node


class Definition(Node):
    """f(a, b) = body: a user function, its body evaluated at each call."""

    kind: ClassVar[str] = "definition"
    target: Name
    params: tuple  # Name nodes, distinct
    body: Node


DEFAULT = "default"  # an explain option the statement does not set


class Explain(Node):
    """explain[depth=2, unfold] e: depth is a number of levels, None for all, or DEFAULT."""

    kind: ClassVar[str] = "explain"
    body: Node
    depth: object = DEFAULT
    unfold: object = DEFAULT
    option_names: tuple = ()  # Name nodes of the options written


class Show(Node):
    """An expression on its own: its value is printed."""

    kind: ClassVar[str] = "show"
    value: Node


class Faulty(Node):
    """A statement the grammar reads but the language refuses (f(1) = …): its error, raised when it runs,
    so the statements before it run first, as they would in the REPL."""

    kind: ClassVar[str] = "faulty"
    error: GradlangError


@dataclass(frozen=True)
class Program:
    statements: tuple


def walk(node: Node) -> Iterator[Node]:
    """Every node at or below `node` (iteratively: trees may be wide and deep)."""
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        stack.extend(reversed(list(item.parts())))


def written_names(node: Node) -> frozenset:
    """Every name written at or below a node (names, called names, declared and bound names),
    but the targets an `at` gives values to (`x` in `at x = 2`); walked once per node (remembered.py)."""
    return remembered("written names", node, _written_names)


def _written_names(node: Node) -> frozenset:
    found = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Target):
            continue
        name = getattr(item, "name", None)
        if isinstance(item, (Name, Call)):
            found.add(name)
        elif isinstance(item, Declaration):
            found.add(item.type_name)
        elif isinstance(item, Dimension) and isinstance(item.size, str):
            found.add(item.size)
        stack.extend(item.parts())
    return frozenset(found)
