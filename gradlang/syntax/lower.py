"""The lark tree to the lowered form (lowered.py): the one place a lark tree is read.

`read(source)` parses and lowers a whole program. What the grammar accepts but
the language refuses in a statement's own syntax (a parameter that is not a
plain name or is named twice, a size of 0, an unknown type or explain option)
is found here and kept as a Faulty statement, raised when the session reaches
it, so the statements before it run first. Tree depth is bounded by the parser
(limits.MAX_TREE_DEPTH), so lowering recurses.
"""

from __future__ import annotations

from collections import OrderedDict

from gradlang import limits
from gradlang.errors import GradlangError, LimitError, Span, SyntaxError, ValueError
from gradlang.remembered import touch, trim
from gradlang.syntax import lowered as lo
from gradlang.syntax.parse import parse
from gradlang.syntax.standalone_parser import Token, Tree

OPTIONS = ("depth",)
KEYWORDS = ("axis", "keepdims")  # call keywords (section 3b)
FLAGS = ("unfold",)  # options without a value: explain[unfold] derives the builtins from their definitions
_MAX_DEPTH_DIGITS = 6


# Programs read lately, by their text: a statement run again (`g at W = …` in a loop, the REPL's history)
# is not parsed again. Bounded, least recently used first out; only programs of at most _READ_CHARS
# characters and without a Faulty statement (its error is an object that takes its statement's place).
_READ: OrderedDict = OrderedDict()
_READ_PROGRAMS = 64
_READ_CHARS = 4096


def read(source: str) -> lo.Program:
    """Parse and lower a whole program (a SyntaxError or LimitError for text the grammar refuses).

    The lowered form is immutable and a function of the text and the limits alone, so a text read lately
    is given its program again."""
    found = read_lately(source)
    if found is not None:
        return found
    result = program(parse(source), source)
    if len(source) <= _READ_CHARS and not any(isinstance(s, lo.Faulty) for s in result.statements):
        _READ[(source, _limits())] = result
        trim(_READ, _READ_PROGRAMS)
    return result


def read_lately(source: str) -> lo.Program | None:
    """The program of a text read lately under the same limits, or None: a lookup, no reading."""
    key = (source, _limits())
    found = _READ.get(key)
    if found is not None:
        touch(_READ, key)
    return found


def _limits() -> tuple:
    """The limits reading checks: a text accepted under one is read again under another."""
    return (limits.MAX_SOURCE_CHARS, limits.MAX_SOURCE_NESTING, limits.MAX_STATEMENTS, limits.MAX_TREE_DEPTH,
            limits.MAX_ELEMENTS)


def program(tree: Tree, source: str) -> lo.Program:
    return lo.Program(tuple(statement(node, source) for node in tree.children))


def statement(node: Tree, source: str) -> lo.Node:
    """One statement, or a Faulty one that carries the error its syntax causes."""
    try:
        return _STATEMENTS[node.data](node, _place(node))
    except GradlangError as error:
        return lo.Faulty(error, place=_place(node))


def _place(item) -> lo.Place:
    """Where a tree or token is written."""
    meta = item if isinstance(item, Token) else item.meta
    start, end = getattr(meta, "start_pos", 0), getattr(meta, "end_pos", 0)
    return lo.Place(Span.of(meta), start or 0, end or 0)


def _name(token: Token) -> lo.Name:
    return lo.Name(str(token), place=_place(token))


# --- statements -----------------------------------------------------------------


def _show(node, place):
    return lo.Show(_expression(node.children[0]), place=place)


def _assignment(node, place):
    target, body = node.children
    return lo.Assignment(_name(target), _expression(body), place=place)


def _definition(node, place):
    children = node.children
    target, body = children[0], children[-1]
    parameters = children[1].children if len(children) == 3 else []
    params = tuple(_parameter(p) for p in parameters)
    if len({p.name for p in params}) != len(params):
        raise SyntaxError(f"a parameter of '{target}' is named twice", place.span)
    return lo.Definition(_name(target), params, _expression(body), place=place)


def _parameter(node) -> lo.Name:
    if not (isinstance(node, Tree) and node.data == "name"):
        raise SyntaxError("the parameters of a definition must be plain names", Span.of(node.meta))
    return _name(node.children[0])


def _declaration(node, place):
    *names, kind = node.children
    kind_token, *dims = kind.children
    written = tuple(_name(token) for token in names)
    if str(kind_token) == "size" and not dims:
        return lo.Declaration(written, "size", is_size=True, place=place)
    if str(kind_token) != "R":
        raise SyntaxError(f"unknown type '{kind_token}': declare R, R^n, R^(m,n), R^(b,t,d) or size", Span.of(kind_token))
    if len(dims) > limits.MAX_RANK:
        raise LimitError(f"a tensor of rank {len(dims)} is above the limit of {limits.MAX_RANK} axes", Span.of(kind_token))
    shape = tuple(_dimension(token) for token in dims)
    return lo.Declaration(written, "R", shape, place=place)


def _dimension(token: Token) -> lo.Dimension:
    """A literal size (a whole number within the limits) or a size name."""
    if token.type != "NUMBER":
        return lo.Dimension(str(token), place=_place(token))
    text = str(token)
    if not text.isdigit() or int(text) < 1:
        raise ValueError("a size must be a whole number of at least 1", Span.of(token))
    if len(text) > 9 or int(text) > limits.MAX_ELEMENTS:
        raise LimitError(f"{text} components is above the limit of {limits.MAX_ELEMENTS}", Span.of(token))
    return lo.Dimension(int(text), place=_place(token))


def _explain(node, place):
    options, body = (node.children[0], node.children[1]) if len(node.children) == 2 else (None, node.children[0])
    chosen = _chosen(options)
    depth = _depth(chosen["depth"]) if "depth" in chosen else lo.DEFAULT
    unfold = bool(chosen["unfold"]) if "unfold" in chosen else lo.DEFAULT
    names = tuple(_name(option.children[0]) for option in (options.children if options is not None else ()))
    return lo.Explain(_expression(body), depth, unfold, names, place=place)


def _chosen(options) -> dict:
    """Each option the list names, once: name -> its value node (a flag -> True)."""
    chosen: dict = {}
    for option in options.children if options is not None else ():
        if option.data == "explain_flag":
            name_token, value = option.children[0], True
        else:
            name_token, value = option.children
        name = str(name_token)
        if name not in OPTIONS + FLAGS:
            known = ", ".join(OPTIONS + FLAGS)
            raise SyntaxError(f"explain has no option '{name}' (it knows: {known})", Span.of(name_token))
        if name in chosen:
            raise SyntaxError(f"the option '{name}' is given twice", Span.of(name_token))
        chosen[name] = value
    return chosen


def _depth(node: Tree):
    """depth=N (a whole number of levels) or depth=all (None)."""
    token = node.children[0] if node.children else None
    text = str(token) if token is not None else ""
    if node.data == "name" and text == "all":
        return None
    if node.data == "number" and text.isdigit() and len(text) <= _MAX_DEPTH_DIGITS:
        return int(text)
    raise ValueError("depth is a whole number of levels (0, 1, 2, …) or all, as in explain[depth=2]",
                     Span.of(node.meta))


_STATEMENTS = {
    "show": _show, "assignment": _assignment, "definition": _definition,
    "declaration": _declaration, "explain": _explain,
}


# --- expressions ----------------------------------------------------------------


def _expression(node: Tree) -> lo.Node:
    return _EXPRESSIONS[node.data](node, _place(node))


def _all(nodes) -> tuple:
    return tuple(_expression(n) for n in nodes)


def _arguments(node) -> tuple:
    """The argument list of a call or an index (a sole argument may be an `at`)."""
    return _all(node.children) if node.data in ("arguments", "call_arguments") else (_expression(node),)


def _call(node, place):
    name, *rest = node.children
    args = _arguments(rest[0]) if rest else ()
    written = [a.name for a in args if isinstance(a, lo.Keyword)]
    if len(set(written)) != len(written):
        twice = [a for a in args if isinstance(a, lo.Keyword) and written.count(a.name) > 1][-1]
        raise SyntaxError(f"the keyword '{twice.name}' is given twice", twice.span)
    return lo.Call(str(name), args, Span.of(name), place=place)


def _keyword(node, place):
    """name=value in a call; only the keywords the language knows (KEYWORDS) are read."""
    name, value = node.children
    if str(name) not in KEYWORDS:
        raise SyntaxError(f"no builtin takes the keyword '{name}=' (the keywords gradlang reads are axis= and "
                          "keepdims=, as in max(W, axis=0, keepdims=true))", Span.of(name))
    return lo.Keyword(str(name), _expression(value), place=place)


def _sum(node, place):
    children = node.children
    return lo.Sum(_all(children[0::2]), tuple(str(op) for op in children[1::2]), place=place)


def _product(node, place):
    children = node.children
    return lo.Product(_all(children[0::2]), tuple(str(op) for op in children[1::2]), place=place)


def _power(node, place):
    base, _, exponent = node.children
    return lo.Power(_expression(base), _expression(exponent), place=place)


def _compare(node, place):
    left, op, right = node.children
    return lo.Compare(_expression(left), str(op), _expression(right), place=place)


def _at(node, place):
    body, *bindings = node.children
    return lo.At(_expression(body), tuple(_binding(b) for b in bindings), place=place)


def _binding(node) -> lo.Binding:
    target, value = node.children
    name, *indices = target.children
    written = lo.Target(str(name), tuple(str(i) for i in indices), place=_place(target))
    return lo.Binding(written, _expression(value), place=_place(node))


def _brackets(node, place):
    return lo.Brackets(_arguments(node.children[0]) if node.children else (), place=place)


def _ranged(node, axis: int) -> tuple:
    base, start, stop = (_expression(child) for child in node.children)
    return base, axis, start, stop


def _lead(node) -> tuple:
    """X[:, :, …]: the axis (one more than the `:, ` counted as `lead`) and the other children as expressions."""
    leads = [c for c in node.children if getattr(c, "data", None) == "lead"]
    rest = [_expression(c) for c in node.children if getattr(c, "data", None) != "lead"]
    return 1 + len(leads), rest


def _along(node, place):
    axis, (base, index) = _lead(node)
    return lo.Along(base, axis, index, place=place)


def _along_range(node, place):
    axis, (base, start, stop) = _lead(node)
    return lo.Range(base, axis, start, stop, place=place)


_EXPRESSIONS = {
    "number": lambda node, place: lo.Number(str(node.children[0]), place=place),
    "name": lambda node, place: lo.Name(str(node.children[0]), place=place),
    "string": lambda node, place: lo.Text(str(node.children[0])[1:-1], place=place),
    "neg": lambda node, place: lo.Neg(_expression(node.children[0]), place=place),
    "pos": lambda node, place: lo.Pos(_expression(node.children[0]), place=place),
    "index": lambda node, place: lo.Index(_expression(node.children[0]), _arguments(node.children[1]), place=place),
    "column": lambda node, place: lo.Column(_expression(node.children[0]), _expression(node.children[1]), place=place),
    "row": lambda node, place: lo.Row(_expression(node.children[0]), _expression(node.children[1]), place=place),
    "last": lambda node, place: lo.Last(_expression(node.children[0]), _expression(node.children[1]), place=place),
    "rows_range": lambda node, place: lo.Range(*_ranged(node, 0), place=place),
    "columns_range": lambda node, place: lo.Range(*_ranged(node, 1), place=place),
    "last_range": lambda node, place: lo.Range(*_ranged(node, -1), place=place),
    "along": _along, "along_range": _along_range,
    "call": _call, "sum": _sum, "product": _product, "power": _power, "compare": _compare,
    "at": _at, "brackets": _brackets, "keyword": _keyword,
    "tuple": lambda node, place: lo.Tuple(_all(node.children), place=place),
}
