"""What an exported module defines: one unit per user function and per binding over symbols.

A unit is a gradlang definition evaluated to SymPy components, ready to be
printed as one Python function:

- a user function `f(v) = …` is evaluated with fresh symbolic parameters
  (shapes guessed by shapes.py); symbols of its body that are not parameters
  (declared `W`, an unbound `a`) become keyword-only arguments;
- a parameter used as an index (`surrogate(a) = log(pi[a])`) is an integer,
  not a number: the body is evaluated once per index value, and the function
  chooses among those branches;
- a binding whose value depends on symbols (`td = 1/2 * (… - q(s1)[0])^2`, the
  losses that are the point of a lesson) becomes a function of the symbols
  it uses, as positional parameters in declaration order (`def td(W)`).

Anything that cannot be a unit is a GradlangError naming the definition and
placed at it (see errors.py), never a silently missing function.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy as sp

from gradlang.core.evaluate import Evaluator, FunctionDef
from gradlang.expr.tensor.lower import involves, literal, lowered
from gradlang.errors import ShapeError, Span
from gradlang.errors import ValueError as GradlangValueError
from gradlang.expr.tensor.nodes import Var, shape_of as tensor_shape
from gradlang.expr.tensor.shapes import is_size
from gradlang.expr.values import elements, is_condition, shape_of, to_symbolic
from gradlang.expr.walk import dag_atoms
from gradlang.export.printers import refusal
from gradlang.export.shapes import INDEX, assignments, parameter_options
from gradlang.syntax import lowered as lo

MAX_INDEX = 64  # values an index parameter may take; the body is written once per value
MAX_BRANCHES = 64  # and once per combination of index parameters


@dataclass(frozen=True)
class Index:
    """A parameter used as an index: an integer in [-length, length), as gradlang's v[i] takes."""

    length: int


@dataclass
class Unit:
    """One Python function of the module, before printing."""

    name: str
    source: str  # gradlang source, copied as a comment
    span: Span | None  # where it is defined, for errors
    focus: Span | None  # where its value is written (a function's body), for the caret
    params: list = field(default_factory=list)  # (gradlang name, shape tuple or Index)
    branches: list = field(default_factory=list)  # (values of the index parameters, SymPy components)
    shape: tuple = ()
    symbols: dict = field(default_factory=dict)  # SymPy symbol -> (gradlang name, index suffix)
    keywords: list = field(default_factory=list)  # (gradlang name, shape to check or None)
    vector: object = None  # the body as array operations (vectorised.py), when it has one
    formula: bool = False  # its one branch is a tensor formula (a binding), printed as one (formula.py)


# --- user functions -------------------------------------------------------------------


def function_unit(session, definition: FunctionDef, names: dict, hints: dict) -> Unit:
    """The function evaluated with symbolic parameters, for the first parameter shapes that fit."""
    unit = Unit(definition.name, definition.source, definition.span, definition.body.span)
    _no_symbolic_size(session, definition)
    last = None
    for shapes in assignments(parameter_options(definition, names, hints)):
        unit.symbols = {}
        try:
            unit.branches, unit.params = _branches(session, definition, shapes, unit.symbols)
            break
        except ShapeError as error:
            last = error
    else:
        raise last or ShapeError("no parameter shapes fit")
    _components(unit)
    unit.keywords = _keywords(unit, names)
    return unit


def _no_symbolic_size(session, definition: FunctionDef) -> None:
    """A body that reads a tensor of symbolic size (x: R^n) is refused by that name, before any parameter
    shape is tried (else the message would be about the components the shapes try: lists never written)."""
    for node in lo.walk(definition.body):
        value = session.env.get(node.name) if isinstance(node, lo.Name) and node.name not in definition.params else None
        if isinstance(value, sp.Expr) and involves(value) and not literal(value):
            raise ShapeError(refusal(value, "numpy")).located(node.span)


def _branches(session, definition: FunctionDef, shapes: tuple, symbols: dict):
    """[(index values, value)] for these shapes; a ShapeError if they do not fit the body."""
    frame = {p: _parameter(p, s, symbols) for p, s in zip(definition.params, shapes) if s != INDEX}
    indices = [p for p, s in zip(definition.params, shapes) if s == INDEX]

    def value_at(values):
        return lowered(Evaluator(session.env, []).evaluate(definition.body, {**frame, **dict(zip(indices, map(sp.Integer, values)))}))

    first = value_at([0] * len(indices))
    lengths = [_index_length(value_at, k, len(indices), p) for k, p in enumerate(indices)]
    combos = list(itertools.product(*[range(n) for n in lengths]))
    if len(combos) > MAX_BRANCHES:
        raise GradlangValueError(f"its index parameters take {len(combos)} combinations of values; "
                                 f"at most {MAX_BRANCHES} can be written out")
    branches = [(c, first if not any(c) else value_at(c)) for c in combos]
    lengths_of = dict(zip(indices, lengths))
    params = [(p, Index(lengths_of[p]) if s == INDEX else s) for p, s in zip(definition.params, shapes)]
    return branches, params


def _index_length(value_at, k: int, count: int, name: str) -> int:
    """How many values index parameter k takes: the first that is out of range ends them."""
    for value in range(1, MAX_INDEX + 1):
        try:
            value_at([value if j == k else 0 for j in range(count)])
        except ShapeError:
            return value
    raise GradlangValueError(f"its index parameter {name} takes more than {MAX_INDEX} values")


def _parameter(name: str, shape: tuple, symbols: dict):
    """Fresh symbols for a parameter: a scalar, or the components of a vector, a matrix or a tensor of any rank.

    Symbols, not Dummies, so a body may differentiate by its parameter
    (`f(x) = diff(x^3, x)`); the `#` in their names cannot be written in
    gradlang, so they never meet a user's symbol.
    """
    if not shape:
        s = sp.Symbol(f"{name}#param", real=True)
        symbols[s] = (name, "")
        return s
    parts = []
    for index in itertools.product(*[range(n) for n in shape]):
        suffix = f"[{', '.join(map(str, index))}]"
        s = sp.Symbol(f"{name}{suffix}#param", real=True)
        symbols[s] = (name, suffix)
        parts.append(s)
    if len(shape) == 2:
        return sp.ImmutableMatrix(shape[0], shape[1], parts)
    return sp.ImmutableDenseNDimArray(parts, shape)  # a vector, or a list of matrices (rank 3 and more, section 3b)


def _components(unit: Unit) -> None:
    """Each branch's value as SymPy components of one shape; anything else is refused."""
    shapes = set()
    for k, (values, value) in enumerate(unit.branches):
        value = to_symbolic(value)
        items = [to_symbolic(e) for e in elements(value)]
        wrong = [e for e in items if not isinstance(e, sp.Expr)]
        if wrong:
            what = "a condition" if is_condition(wrong[0]) else "not a number"
            raise GradlangValueError(f"its value {_shown(wrong[0])} is {what}; only numbers and arrays of numbers "
                                     "can be exported")
        shapes.add(shape_of(value))
        unit.branches[k] = (values, items)
    if len(shapes) > 1:
        raise ShapeError("its value has a different shape for different values of its index parameters")
    unit.shape = shapes.pop()


def _keywords(unit: Unit, names: dict) -> list:
    """Symbols the body uses besides its parameters become keyword-only arguments (W[0, 1] -> W)."""
    free = dag_atoms([e for _, items in unit.branches for e in items], sp.Symbol) - set(unit.symbols)
    return [(base, declared_shape(names, base)) for base in _bases(free, unit.symbols)]


# --- bindings over symbols (losses) ---------------------------------------------------


def binding_unit(name: str, value, names: dict, statements: dict) -> Unit | None:
    """A binding that depends on symbols, as a function of them; None for data, declarations and conditions."""
    if is_condition_value(value):
        return None
    if _is_formula(value):
        return _formula_unit(name, value, names, statements)
    value = to_symbolic(lowered(value))
    items = [to_symbolic(e) for e in elements(value)]
    free = set().union(*[getattr(e, "free_symbols", set()) for e in items])
    if not free or _is_declaration(name, items):
        return None
    source, span, focus = statements.get(name, (f"{name} = …", None, None))
    unit = Unit(name, source, span, focus, branches=[((), value)])
    _components(unit)
    order = {n: k for k, n in enumerate(names)}
    bases = sorted(_bases(free, unit.symbols),
                   key=lambda b: (order.get(b, len(order)), b))
    unit.params = [(b, declared_shape(names, b) or _shape_used(b, unit.symbols)) for b in bases]
    return unit


def is_condition_value(value) -> bool:
    """`mask = x > 0` at any size: a condition, which `where` reads inside the losses that use it (their
    functions hold it); not a number, so not a function of the module (the header names it as left out)."""
    return is_condition(value) or (isinstance(value, sp.NDimArray) and any(is_condition(e) for e in elements(value)))


def _is_formula(value) -> bool:
    """A tensor formula (`g = grad(loss, W1)`, at literal or symbolic sizes), as the session holds it; one
    holding the component symbol x[0] beside x (`sum(x) + components(x)[0]`) is read as its components."""
    if not isinstance(value, sp.Expr) or isinstance(value, (Var, sp.MatrixBase)) or not involves(value):
        return False
    return not any("[" in s.name for s in dag_atoms([value], sp.Symbol) if not isinstance(s, Var))


def _formula_unit(name: str, value, names: dict, statements: dict) -> Unit | None:
    """A binding whose value is a tensor formula: its parameters are the formula's declared tensors and
    scalar symbols, in declaration order, read from the formula itself (linear in its DAG). Its
    components are never taken: it is printed as its formula at every size (formula.py)."""
    free = [s for s in dag_atoms([value], sp.Symbol) if not is_size(s)]
    if not free:
        return None
    source, span, focus = statements.get(name, (f"{name} = …", None, None))
    unit = Unit(name, source, span, focus, branches=[((), value)], shape=_dims(tensor_shape(value)))
    order = {n: k for k, n in enumerate(names)}
    free.sort(key=lambda s: (order.get(s.name, len(order)), s.name))
    unit.params = [(s.name, _dims(s.shape) if isinstance(s, Var) else ()) for s in free]
    unit.formula = True
    return unit


def _dims(shape) -> tuple:
    """A shape as the export writes it: Python integers, and the size symbols a program leaves open (n)."""
    return tuple(int(d) if getattr(d, "is_Integer", False) else d for d in shape)


def _is_declaration(name: str, items: list) -> bool:
    """`x: R` or `W: R^(2,2)`: the binding is its own symbols, not something computed from them."""
    return all(isinstance(e, sp.Symbol) and (e.name == name or e.name.startswith(name + "[")) for e in items)


def _bases(free: set, symbols: dict) -> list:
    """The gradlang names of free symbols (x[0] -> x), recording each symbol's name and suffix."""
    bases = []
    for s in sorted(free, key=lambda s: s.name):
        base, bracket, rest = s.name.partition("[")
        symbols[s] = (base, bracket + rest)
        if base not in bases:
            bases.append(base)
    return bases


def declared_shape(names: dict, base: str):
    """The shape of a declared vector or matrix `base`, or None (a scalar, or not declared)."""
    value = names.get(base)
    if isinstance(value, sp.Basic) and shape_of(value) and _is_declaration(base, elements(value)):
        return shape_of(value)
    return None


def _shape_used(base: str, symbols: dict) -> tuple:
    """The smallest shape holding every component of `base` the value uses (x[2] -> (3,)); () for a scalar."""
    suffixes = [suffix for name, suffix in symbols.values() if name == base and suffix]
    if not suffixes:
        return ()
    indices = [tuple(int(i) for i in s.strip("[]").split(",")) for s in suffixes]
    return tuple(max(i[axis] for i in indices) + 1 for axis in range(len(indices[0])))


def _shown(value) -> str:
    text = str(value)  # SymPy's spelling: the render package is a sibling layer
    return text if len(text) <= 80 else text[:77] + "..."
