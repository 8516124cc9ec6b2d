"""What a primitive is: one frozen record, and the small vocabulary records are written in.

A `Primitive` holds everything gradlang knows about one function of the
language: its names, how the builtin table applies it, the SymPy class that
stands for it in values, its derivative (one rule, used by SymPy's `fdiff`,
by the DAG engine and, through `fdiff`, by explain), its NumPy
implementation, its LaTeX spelling, its kink and its spelling in each export
target. Every table that lists primitives is derived from these records
(JAX keeps `tanh_p` with its rules in the same way).

A derivative rule is written once against `Ops`, a handful of constructors:
SymPy's evaluated ones here (`SYMPY`), the DAG engine's sharing-preserving
ones in dag/rules.py. So the rule that SymPy uses and the rule reverse mode
uses cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import sympy as sp

from gradlang.expr.function_bases import SpelledAsGradlang, ZeroDerivative  # noqa: F401  (ZeroDerivative: read here)

from gradlang.lazy import Deferred

TARGETS = ("numpy", "jax", "torch", "tf")


@dataclass(frozen=True)
class Ops:
    """Constructors a derivative rule builds its result with."""

    add: Callable
    mul: Callable
    power: Callable
    call: Callable  # call(function, *args)

    def neg(self, expr):
        return self.mul(sp.S.NegativeOne, expr)

    def reciprocal(self, expr):
        return self.power(expr, sp.S.NegativeOne)

    def sub(self, a, b):
        return self.add(a, self.neg(b))


SYMPY = Ops(add=sp.Add, mul=sp.Mul, power=sp.Pow, call=lambda function, *args: function(*args))


@dataclass(frozen=True)
class Kink:
    """Where the derivative is a convention, for kinks.py.

    `kind` says how kinks.py reads the arguments: "point" (one argument, hit
    when `hit(u)` holds), "tie" (max/min and their shares: hit when two
    arguments attain the extremum) or "boundary" (where: its condition holds
    with equality). `what` names the place ("at its kink", "at a jump"),
    `convention` is what gradlang and the frameworks give there.
    """

    kind: str
    convention: str
    what: str = ""
    hit: Callable | None = None  # NumPy: argument array -> boolean mask


@dataclass(frozen=True)
class Export:
    """How one export target spells a primitive.

    `spelling` is a function name (`"jnp.exp"`) called with the arguments, or
    a template with `{args}` (`"({args}).detach()"`). `helper` is Python code
    the module's prelude must define first (for the conventions of section 5
    that the framework's own function does not follow). `whole` spells the
    primitive applied to one whole array (a reduction over all its
    components, softmax over the last axis), for vectorised export
    (export/vectorised.py); empty for the elementwise ones, whose spelling
    already takes arrays.
    """

    spelling: str
    helper: str = ""
    whole: str = ""

    def call(self, args: str) -> str:
        return _spelled(self.spelling, args)

    def call_whole(self, args: str) -> str:
        return _spelled(self.whole, args)


def _spelled(spelling: str, args: str) -> str:
    return spelling.format(args=args) if "{args}" in spelling else f"{spelling}({args})"


@dataclass(frozen=True)
class Primitive:
    """One function of the language, everything about it in one place."""

    name: str  # the gradlang spelling: builtin name, plain output, lexer word
    cls: type | None  # the SymPy class of its values (None: it builds another class's value, like sqrt)
    doc: str
    example: str
    build: Callable  # SymPy value from SymPy arguments
    group: str = "elementwise"  # the row of the builtin table in docs/language.md
    apply: str = "elementwise"  # how builtins.py maps it over arguments (see builtins.APPLY)
    aliases: tuple = ()
    arity: tuple = (1, 1)  # (min, max); max None for any number
    partial: Callable | None = None  # partial(ops, node, k): d node / d node.args[k]
    zero_derivative: bool = False  # piecewise constant or stopped: a constant to differentiation
    numpy: str | Callable | None = None  # a numpy function name, or an implementation
    latex: str | None = None  # LaTeX name, for SymPy classes whose own LaTeX is not gradlang's
    form: str = "call"  # plain form: "call" f(a, b), "vector" f([a, b]), "component" f([a, b])[k]
    kink: Kink | None = None
    export: dict = field(default_factory=dict)  # target -> Export
    rule: str = ""  # the derivative in words, for explain (one-argument functions show f'(u) instead)
    tensor: tuple = ()  # TensorRule per tensor-engine node of the function (softmax: SoftmaxOf, SoftmaxAxis)
    pure: Callable | "NotOnPage" | None = None  # `numpy` on Python floats, for the browser page (where it is callable)
    unfold: tuple = ()  # (definition, as a reader sees it): explain[unfold]'s definition in primitives below it
    whole_adjoint: Callable | None = None  # vectorised export's rule on one whole array (WholeArrays below)

    @property
    def names(self) -> tuple:
        return (self.name, *self.aliases)


class WholeArrays:
    """The constructors a `whole_adjoint` rule builds with: export/adjoint.py's builder of array nodes.

    `whole_adjoint(build, node, v, g)` is the adjoint of the array `v` of
    `node`, the primitive applied to all of `v` at once (`max(v)`,
    `softmax(v)` in an exported definition), given the node's adjoint `g`;
    None where the rule has no array form for that shape (a matrix), and the
    definition is exported unrolled. The builder offers `mul(*factors)`,
    `div(a, b)`, `sub(a, b)`, `sum_all(a)` (a scalar), `whole(name, a)` (the
    primitive `name` on all of `a`) and `ties(a, extremum)` (1 where `a`
    attains it, else 0). Written here as a protocol, so a record states the
    rule without importing the export layer.
    """


@dataclass(frozen=True)
class NotOnPage:
    """A primitive's `pure`: the browser page (no NumPy, expr/pure_numeric.py) cannot compute it, and why.

    Its numbers there are a gradlang ValueError that says `reason`, placed at
    the statement, never a NameError of a missing helper (numeric.py)."""

    reason: str


@dataclass(frozen=True)
class TensorRule:
    """How reverse mode at symbolic size (derive/tensor/reverse.py) passes an adjoint through one tensor node.

    `node` is a `TensorOp` class of expr/tensor/nodes.py. `adjoint(node, ybar,
    k)` is the contribution to the adjoint of the node's argument k, given the
    adjoint `ybar` of the node itself (shaped like the node, or a scalar that
    stands for a broadcast), or None where the argument is not differentiated
    (an index, an axis): the transpose rule of a JAX `lax` primitive written as
    a formula. `tangent(node, d, vector)` is its rule for forward mode
    (derive/tensor/forward.py; the vocabulary is tangents.py). `said` is the
    rule as explain's tensor pass names it, plain and LaTeX
    (`("trace: Ā = ȳ I", r"\bar{A} = \bar{y} I")`).

    `constant=True` declares the node a constant to differentiation (onehot,
    eye, the shares of max): it has neither adjoint nor tangent, and neither
    pass enters it. Every other node has both (tests/tensor/test_primitive_records.py).
    The node class itself holds the rest of the operation: its shape, its
    `Spelling` (plain, LaTeX, pretty, NumPy); `spelling` reads it here. Where
    the NumPy template calls a helper of its own (`_gl_softmax_vector({0})`),
    `numpy` is that helper (expr/tensor/numbers.py reads it from here).

    `export` spells the node in each framework's own operations for
    `--export jax|torch|tf` of a tensor formula (export/formula.py): target ->
    `Export` whose spelling is a template over the node's arguments (`{0}`,
    `{1}`, `{all}`, `{rest}`; `{i0}` and `{rest_int}` as integers, for
    indices), or a function of the node giving one (a list's, by its number
    of entries: the formula is printed after its nodes are named, so the
    arguments' shapes are not known there), and whose `helper` is the code of a function the template
    calls, for the module's prelude. A `numpy` entry holds only a helper
    NumPy's spelling calls that numbers.py cannot lend (`_gl_logdet`).
    """

    node_class: type  # the class, or the engine's Deferred of it (expr/engine.py): `node` reads it
    adjoint: Callable | None = None
    said: tuple = ()  # (plain, latex); empty: explain names the node's class
    tangent: Callable | None = None
    constant: bool = False
    numpy: Callable | None = None  # the whole-array NumPy helper its spelling calls (`_gl_softmax_vector`), if any
    export: dict = field(default_factory=dict)  # target -> Export: the node in jax, torch, tf (see above)

    @property
    def node(self) -> type:
        """The TensorOp class. The records are made at start-up and the engine on first use (issue #41), so a
        record names its class by a Deferred; the first reader of a rule imports the engine."""
        written = self.node_class
        return written.resolved() if isinstance(written, Deferred) else written

    @property
    def spelling(self):
        return getattr(self.node, "spelling", None)


@dataclass(frozen=True)
class TensorOperation:
    """An operation of the tensor engine that is not a function of the registry: `@`, indexing, dot, det, ….

    Its builtin is a composition (core/builtins_vectors.py) or a subscript, so
    it has no `Primitive`; this record is the one place of its adjoint rules,
    as a primitive's `tensor` field is of its own (tensor_ops.py).
    """

    name: str
    tensor: tuple  # TensorRule per node


def unary(rule: Callable) -> Callable:
    """A partial rule for a one-argument function, from rule(ops, node, u)."""
    return lambda ops, node, k: rule(ops, node, node.args[0])


def same(name: str, **overrides) -> dict:
    """The export spelling when every framework has the function under one name."""
    spelled = {"numpy": f"np.{name}", "jax": f"jnp.{name}", "torch": f"torch.{name}", "tf": f"tf.{name}"}
    spelled.update(overrides)
    return {target: Export(spelled[target]) if isinstance(spelled[target], str) else spelled[target] for target in TARGETS}


def helpers(name: str, code: dict, whole: dict | None = None) -> dict:
    """Export through a helper `name` whose code is given per target (and how each spells it on a whole array)."""
    return {target: Export(name, code[target], (whole or {}).get(target, "")) for target in TARGETS}


def frameworks(jax, torch, tf, /, **code) -> dict:
    """A tensor node's `TensorRule.export`: its template in each framework, and the helpers (target -> code) they call."""
    spelled = {"jax": jax, "torch": torch, "tf": tf, "numpy": ""}
    return {target: Export(spelled[target], code.get(target, "")) for target in TARGETS if spelled[target] or target in code}


class GradlangFunction(SpelledAsGradlang, sp.Function):
    """Base of gradlang's own SymPy functions: the derivative comes from the class's record."""

    def fdiff(self, argindex=1):
        from gradlang.expr.primitives import by_class

        return by_class(type(self)).partial(SYMPY, self, argindex - 1)
