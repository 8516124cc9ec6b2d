"""The gradlang program a trace becomes: declarations, one binding per meaningful intermediate, the loss.

A translator (trace_jax.py, trace_torch.py) walks the framework's graph and
hands each result to a `Writer` as a `Value`: gradlang source text with the
framework's shape. The writer decides what gets a name of its own (a stop, a
value used twice, a long expression) and what is written inline, and keeps the
comments that say where each stop came from. The text it writes goes through
gradlang's parser like any program; nothing here evaluates it.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from dataclasses import dataclass, field, replace

from gradlang import limits
from gradlang.errors import GradlangError, LimitError, Span, source_lines

# Precedence of the text a Value holds: a sum, a product, a unary minus, a power, an atom.
SUM, PRODUCT, UNARY, POWER, ATOM = range(5)
LONG = 60  # an expression longer than this gets a name of its own
SIMPLE = re.compile(r"^-?[A-Za-z_0-9.]+$")  # a name or a number: never worth a name of its own


class TranslateError(GradlangError):
    """A framework operation gradlang cannot write, placed at the user's source line.

    Its message often quotes the user's names; they are made inert (no newline of theirs starts a line of ours)."""

    kind = "TranslateError"

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(inert(message), span)


def inert(text: str) -> str:
    """Text a third party chose (a function's __name__, a dict key, a parameter's name, a file's path), safe in a comment.

    A comment ends at a newline, and a name with one in it would end the comment and start a statement
    of its own choosing; so every control, line-separator, paragraph-separator and format character
    (\\n, \\r, U+2028, \\x0b, \\x0c, NUL, a bidi override) is written as its escape. Every writer of
    comments and messages goes through this one function.
    """
    return "".join(ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in HIDDEN else ch
                   for ch in str(text))


HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs")  # control, format, line and paragraph separators, lone surrogates


def placed(message: str, where: "Where | None", kind: type = TranslateError) -> GradlangError:
    """The error (a TranslateError unless `kind` says), with the user's file, line and the source line for the
    caret when they are known."""
    message = inert(message)
    if where is None or where.line is None:
        return kind(message + ("" if where is None else f" ({where.note})"))
    error = kind(message, Span(where.line, where.column or 1, where.line, where.end_column or 2))
    try:
        with open(where.file, encoding="utf-8") as handle:
            error.attach_source(handle.read(), where.file)
    except OSError:
        error.filename = where.file
    return error


@dataclass(frozen=True)
class Where:
    """A place in the user's source: file, line, columns, and a note (the library function it is inside)."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None
    note: str = ""

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line is not None else "an unknown line"
        return inert(f"{place}{f' ({self.note})' if self.note else ''}")


@dataclass(frozen=True)
class Value:
    """A translated value: gradlang text of a given precedence, the framework's shape, and its kind.

    `scalar` is set for a scalar broadcast to `shape` (it is written as the scalar where gradlang
    broadcasts it, and filled with ones(n) elsewhere); `condition` for a comparison (only where takes it);
    `root` for a Euclidean norm, the sum of squares it is the square root of (PyTorch's
    `clamp_min(norm, eps)` is written `sqrt(max(root, eps^2))`, whose gradient is finite at 0, as PyTorch's);
    `argmax` for indices fixed at the point that are an argmax (a one-hot of them is written onehot(argmax(…))).
    """

    text: str
    shape: tuple
    prec: int = ATOM
    scalar: "Value | None" = None
    condition: bool = False
    number: float | None = None
    root: "Value | None" = None
    argmax: tuple | None = None  # an index fixed at the point that is argmax(source, axis): (source, axis)
    stopped: bool = False  # the name of a stop_gradient line (a case of rlax's select(c, sg(x), x))
    entry: tuple | None = None  # one entry of a vector, v[i]: (v, i) (a join writes it as the slice v[i:i+1])

    @property
    def sizes(self) -> tuple:
        """The shape as gradlang sees it: every axis of length 1 dropped."""
        return tuple(d for d in self.shape if d != 1)


def wrap(value: Value, at_least: int) -> str:
    """The text, parenthesised unless its precedence is at least `at_least`."""
    return value.text if value.prec >= at_least else f"({value.text})"


def number(x: float, shape: tuple = ()) -> Value:
    """A float literal as gradlang reads it back exactly (repr is the shortest round-tripping form)."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise TranslateError(f"the constant {x} has no gradlang spelling")
    text = repr(x)
    return Value(text, shape, UNARY if x < 0 or text.startswith("-") else ATOM, number=x)


def array_text(values) -> str:
    """A nested list of floats as a gradlang vector or matrix literal."""
    if isinstance(values, (list, tuple)):
        return "[" + ", ".join(array_text(v) for v in values) + "]"
    x = float(values)
    if math.isnan(x) or math.isinf(x):
        raise TranslateError(f"the value {x} at the traced point has no gradlang spelling")
    return repr(x)


@dataclass(frozen=True)
class Origin:
    """What wrote a statement: the framework's operation, the user's line, its value at the traced point."""

    op: str
    where: Where
    point: object = None


@dataclass
class Line:
    """One statement of the program (of the grammar's `kind`: declaration, assignment, show, explain) with its
    comment; `name` is what a declaration or an assignment binds. The comment is made inert when written."""

    text: str
    comment: str = ""
    kind: str = ""
    name: str = ""
    origin: Origin | None = None

    def __str__(self) -> str:
        comment = inert(self.comment)
        return f"{self.text}   # {comment}" if comment and self.text else (f"# {comment}" if comment else self.text)


@dataclass
class Writer:
    """Collects the program's lines; names intermediates as t1, t2, … (never a declared name)."""

    header: list = field(default_factory=list)
    declarations: list = field(default_factory=list)
    body: list = field(default_factory=list)
    taken: set = field(default_factory=set)
    count: int = 0
    stops: int = 0
    bindings: int = 0  # statements bound so far (bounded by MAX_TRANSLATED_STATEMENTS)
    lines: list = field(default_factory=list)  # the last program written, line by line
    point: str = ""  # the traced point as `at` bindings (x = x_at, W = W_at), once the tail is written
    suspects: list = field(default_factory=list)  # (operation, Where): values fixed at the point, custom rules
    draws: list = field(default_factory=list)  # (name, value at the point): random draws, declared as data
    places: list = field(default_factory=list)  # (file, line, column, operation) of each traced operation, in order

    def note(self, text: str) -> None:
        if all(line.comment != text for line in self.header):  # one note per fact (relu's rule at two calls)
            self.header.append(Line("", text))

    def fixed(self, op: str, where: Where, text: str) -> None:
        """A comment in the body saying that `op` is written as its value at the traced point; a suspect if it differs."""
        self.suspects.append((op, where))
        self.body.append(Line("", text))

    def declare(self, name: str, shape: tuple, comment: str = "") -> Value:
        """`name: R^(m,n)` (axes of length 1 dropped, as every shape here); the name's Value."""
        sizes = tuple(d for d in shape if d != 1)
        if 0 in sizes:
            raise TranslateError(f"{comment or name} has shape {tuple(shape)}: an empty array has no gradlang value")
        kind = "R" if not sizes else f"R^{sizes[0]}" if len(sizes) == 1 else f"R^({','.join(map(str, sizes))})"
        self.taken.add(name)
        self.declarations.append(Line(f"{name}: {kind}", comment, "declaration", name))
        return Value(name, tuple(shape))

    def draw(self, hint: str, label: str, value, where: Where) -> Value:
        """A random draw as a named data input: declared, given its traced value in the program's point, and not
        differentiated by (the framework's gradient is by the leaves only)."""
        import numpy as np

        from gradlang.frameworks.shapes_arg import gradlang_name

        array = np.asarray(value, dtype=np.float64)
        name = gradlang_name(hint or "draw", self.taken)
        declared = self.declare(name, tuple(array.shape), f"{label} at {where}: a random draw, data (its traced "
                                                          "value is in the point)")
        self.draws.append((name, array))
        return declared

    @property
    def leaves(self) -> list:
        """The names of the declarations that are leaves (the gradient is by them): every one but the draws."""
        drawn = {name for name, _ in self.draws}
        return [line.name for line in self.declarations if line.name not in drawn]

    def fresh(self, hint: str = "t") -> str:
        while True:
            self.count += 1
            name = f"{hint}{self.count}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def bind(self, value: Value, uses: int = 1, comment: str = "", force: bool = False,
             origin: Origin | None = None) -> Value:
        """A name for `value` when it deserves one (forced, used twice, or long); else the value inline."""
        if not force and (value.scalar is not None or SIMPLE.match(value.text)):
            return value
        if not (force or uses > 1 or len(value.text) > LONG):
            return value
        self.bound(origin.where if origin is not None else None)
        written(value)
        name = self.fresh()
        self.body.append(Line(f"{name} = {value.text}", comment, "assignment", name, origin))
        return Value(name, value.shape, ATOM, condition=value.condition, argmax=value.argmax, entry=value.entry)

    def bound(self, where: Where | None = None) -> None:
        """Count one more binding; past MAX_TRANSLATED_STATEMENTS, refuse before the program is written.

        gradlang inlines every binding into the next, and SymPy flattens sums, so a chain of n bindings (a
        loop of stops: y = y + stop(y) * x) holds n sums of up to n terms; checking the program and running
        it costs far more than linear in n (100 stops: 20 s; 300 stops: 7 minutes). A count of statements,
        not seconds: the same model is refused on every machine, at the operation that crosses the bound."""
        self.bindings += 1
        if self.bindings > limits.MAX_TRANSLATED_STATEMENTS:
            raise placed(f"the translation needs more than {limits.MAX_TRANSLATED_STATEMENTS} statements (the "
                         "limit of bound intermediates and stops of a translated program; docs/limits.md): "
                         f"{self.stops} stop(s) so far", where, LimitError)

    def stop(self, value: Value, where: Where, what: str) -> Value:
        """stop_gradient(value) on a line of its own, with the user's source line in its comment."""
        self.stops += 1
        inner = fill(value)
        bound = self.bind(Value(f"stop_gradient({inner.text})", value.shape), comment=f"{what} at {where}", force=True,
                          origin=Origin(what, where))
        return replace(bound, stopped=True)

    def final(self, name: str, value: Value, comment: str = "") -> None:
        if value.sizes:
            raise TranslateError(f"the function returns shape {tuple(value.shape)}: a loss is a scalar")
        self.taken.add(name)
        self.body.append(Line(f"{name} = {written(fill(value)).text}", comment, "assignment", name))

    def text(self, tail: list) -> str:
        """The program, checked by gradlang's parser to be exactly the statements written (see `read_back`)."""
        lines = self.header + [Line("")] + self.declarations + [Line("")] + self.body + [Line("")] + tail
        while lines and not str(lines[-1]):
            lines.pop()
        program = "\n".join(str(line) for line in lines) + "\n"
        read_back(program, [line for line in lines if line.text])
        self.lines = lines
        return program


NAN = re.compile(r"(?<![A-Za-z0-9_.])nan(?![A-Za-z0-9_])")


def written(value: Value) -> Value:
    """The value, unless it holds a NaN constant: gradlang has no spelling for one (a NaN the framework computes
    from constants is a case its select_n never takes; one that reaches the loss is refused here)."""
    if NAN.search(value.text):
        raise TranslateError("a NaN constant reaches the loss: it has no gradlang spelling")
    return value


def read_back(program: str, written: list) -> None:
    """Refuse a program whose statements, as the parser reads them, are not the ones the writer wrote.

    Names and comments come from the user's code; inert() and gradlang_name() keep them from ever
    starting a statement, and this check is the proof for the whole text: same number of statements,
    same kinds, same names bound, in order.
    """
    from gradlang.syntax.parse import parse

    try:
        statements = parse(program).children
    except GradlangError as error:
        raise TranslateError(f"the written program does not read back: {error.kind}: {error.message}") from None
    read = [(s.data, _bound(s)) for s in statements]
    expected = [(line.kind, line.name) for line in written]
    if read != expected:
        raise TranslateError(f"the written program reads back as {len(read)} statements, not the {len(expected)} "
                             "written: a name from the traced code changed it")


def _bound(statement) -> str:
    """The name a declaration or assignment binds ('' for the others)."""
    if statement.data in ("declaration", "assignment"):
        return str(statement.children[0])
    return ""


def ones(sizes: tuple) -> str:
    """All-ones of gradlang sizes: ones(n) or outer(ones(m), ones(n))."""
    if len(sizes) == 1:
        return f"ones({sizes[0]})"
    if len(sizes) > 2:  # three or more axes (section 3b); broadcast_to(1.0, …) sums to 1 (a core bug, reported)
        return f"reshape(ones({math.prod(sizes)}), ({', '.join(map(str, sizes))}))"
    return f"outer(ones({sizes[0]}), ones({sizes[1]}))"


def fill(value: Value) -> Value:
    """A broadcast scalar written out at its shape (c * ones(n)); any other value as it is."""
    if value.scalar is None:
        return value
    if not value.sizes:
        return value.scalar
    return Value(f"{wrap(value.scalar, PRODUCT)} * {ones(value.sizes)}", value.shape, PRODUCT)


def source_line(file: str, line: int) -> str:
    """The user's source line (for comments), or '' when it cannot be read."""
    try:
        with open(file, encoding="utf-8") as handle:
            lines = source_lines(handle.read())
    except OSError:
        return ""
    return lines[line - 1].strip() if 1 <= line <= len(lines) else ""


def shown_path(path: str) -> str:
    """A file as the user would name it: relative to the current folder when it is inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def constant(array, shape: tuple) -> Value:
    """A constant of the program (a literal, a closed-over array, a value fixed at the point) as gradlang text."""
    import numpy as np

    array = np.asarray(array, dtype=np.float64)
    if array.size == 1:
        x = float(array.reshape(()))
        if math.isnan(x):  # a case a select_n does not take (jnp.var's for ddof >= n); refused if ever written
            return Value("nan", shape, number=x)
        return Value("inf" if x > 0 else "-inf", shape, number=x) if math.isinf(x) else number(x, shape)
    squeezed = array.reshape(tuple(d for d in array.shape if d != 1))
    ones_at = np.flatnonzero(squeezed == 1.0)
    if squeezed.ndim == 1 and len(ones_at) == 1 and np.count_nonzero(squeezed) == 1:
        return Value(f"onehot({ones_at[0]}, {squeezed.size})", shape)
    return Value(array_text(squeezed.tolist()), shape)
