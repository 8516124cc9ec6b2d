"""Export a session's functions and losses as a readable Python module for JAX, PyTorch, TensorFlow or NumPy.

Each user function and each binding that depends on symbols (a loss such as
`td = 1/2 * (r + gamma * sg(max(q(s2))) - q(s1)[0])^2`) becomes one Python
function (units.py): a function's body is evaluated with symbolic
parameters (shapes guessed by shapes.py), a binding becomes a function of
the symbols it uses (`def td(W)`). The SymPy components are split into
common subexpressions and printed per framework (text.py, printers.py).
stop_gradient becomes the framework's primitive (jax.lax.stop_gradient,
.detach(), tf.stop_gradient); max/min/abs and friends become helpers of the
prelude (prelude.py) that implement gradlang's tie and kink conventions, so
the framework's gradient of an exported function equals gradlang's.

The module computes what gradlang computes, or there is no module:
- every name comes from one table (names.py), so no user name, generated
  gradient, framework alias or builtin can shadow another;
- each generated function is checked before it is written (check.py): it
  parses, defines only itself at module level, and uses no name the module
  does not define;
- a definition that cannot be exported is a GradlangError that names it and
  points at it (line, column, caret), like every gradlang error;
- a function is printed as array operations from what the user wrote
  (vectorised.py), so it takes any length the program leaves open; its
  arguments' shapes are checked on entry against what the program fixes.
  grad(e, x) inside one is differentiated by the export (adjoint.py), with
  gradlang's conventions. A definition that cannot be read so (diff, at, a
  grad through an index, an index parameter, ...) is unrolled for the
  program's shapes and refuses any other.

Code is generated from SymPy objects only; user text is never evaluated.
"""

from __future__ import annotations

from collections.abc import Callable

from gradlang.budget import OutOfTime, budget, is_mine
from gradlang.core.evaluate import FunctionDef
from gradlang.errors import GradlangError, InternalError, LimitError, Span, ValueError, source_lines
from gradlang.expr.tensor.lower import symbolic
from gradlang.export.check import SHAPE_CHECK, check_function, defined_names
from gradlang.export.components import ComponentSession
from gradlang.export.formula import helpers as formula_helpers
from gradlang.export.names import NameTable, reserved_names
from gradlang.export.prelude import PRELUDES, used_helpers
from gradlang.export.shapes import call_hints
from gradlang.export.statements import Program, binding_statements
from gradlang.export.text import unit_text
from gradlang.export.units import Unit, binding_unit, function_unit, is_condition_value
from gradlang.export.vectorised import vectorise

TARGETS = ("jax", "torch", "tf", "numpy")
REPL_NAMES = {"_"}  # the REPL's last result: a convenience, not a definition of the user's


def export_program(session, target: str, source: str | None = None, filename: str | None = None) -> str:
    """A Python module (as text) defining the session's functions and losses for `target`.

    `source`, the program's text, is optional; when given, calls in it tell the
    shapes of vector parameters (see shapes.py), a binding's statement is
    copied as its comment, and an error shows the line it points at.
    """
    if target not in TARGETS:
        raise ValueError(f"unknown export target '{target}'; choose one of {', '.join(TARGETS)}")
    session = ComponentSession(session)  # x: R^3 and the values made of it, as components (components.py)
    place = _Place(source, filename, binding_statements(source))
    names = _user_names(session, place.program)
    hints = call_hints(names, source)
    units = [u for n, v in names.items() if (u := _unit(session, n, v, names, hints, place)) is not None]
    table = _name_table(target, names, units)
    defined = defined_names(_prelude(target) + SHAPE_CHECK)
    functions = [_written(session, u, target, table, defined, place) for u in units]
    prelude = used_helpers(_prelude(target).rstrip() + "\n" + SHAPE_CHECK, "\n\n".join(functions))
    conditions = [n for n, v in names.items() if not isinstance(v, FunctionDef) and is_condition_value(v)]
    return "\n\n".join([_header(target, units, table, conditions), prelude.rstrip() + "\n", *functions]) + "\n"


def _prelude(target: str) -> str:
    """The target's helpers; NumPy's also numbers.py's that a formula printed at a symbolic size calls (formula.py)."""
    return PRELUDES[target] + (formula_helpers() if target == "numpy" else "")


def _user_names(session, program: Program) -> dict:
    """The session's names, but the REPL's `_` when the shell bound it (a last result, not a definition).

    A function named `_`, or a `_ = …` the program wrote, is the user's and is
    exported (as `u_`), never silently left out.
    """
    return {n: v for n, v in session.user_names().items()
            if n not in REPL_NAMES or isinstance(v, FunctionDef) or n in program.last}


class _Place:
    """Where definitions are written, so a refusal shows its line and caret like every gradlang error."""

    def __init__(self, source: str | None, filename: str | None, statements: dict):
        self.source, self.filename, self.statements = source, filename, statements
        self.program = Program(source)

    def refusal(self, name: str, error: GradlangError, text: str, span: Span | None, focus: Span | None = None):
        """`error` as a refusal to export `name`, placed in the program (or in the definition's own text).

        The caret goes where the error happened, else under `focus` (the
        definition's value), else under the whole definition at `span`.
        """
        refused = type(error)(f"cannot export {name}: {error.message}", error.span or focus or span)
        if refused.span is None:
            return refused
        if span is not None and not self._holds(text, span):
            inside = _inside(refused.span, span)  # an error in another definition cannot be shown in this one
            refused.span = _rebased(refused.span if inside else focus or span, span)
            return refused.attach_source(text, self.filename)
        return refused.attach_source(self.source or text, self.filename)

    def _holds(self, text: str, span: Span) -> bool:
        """Whether the program's text has this definition at its span (the REPL's joined lines may not)."""
        lines = source_lines(self.source or "")
        if not 1 <= span.line <= len(lines):
            return False
        return lines[span.line - 1][span.column - 1 :].startswith(source_lines(text)[0])


def _inside(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) <= (outer.end_line, outer.end_column)


def _rebased(span: Span, start: Span) -> Span:
    """A span in a program, made relative to the definition that starts at `start`."""
    def moved(line, column):
        return line - start.line + 1, column - (start.column - 1 if line == start.line else 0)

    return Span(*moved(span.line, span.column), *moved(span.end_line, span.end_column))


def _unit(session, name: str, value, names: dict, hints: dict, place: _Place) -> Unit | None:
    """The unit of one name, or None for data and declarations; a refusal names and places it."""
    if isinstance(value, FunctionDef):
        where = (value.source, value.span, value.body.span)
        return _bounded(session, place, name, where,
                        lambda: _vectorised(session, function_unit(session, value, names, hints), place, value))
    where = place.statements.get(name, (f"{name} = …", None, None))
    return _bounded(session, place, name, where,
                    lambda: _vectorised(session, binding_unit(name, value, names, place.statements), place))


def _vectorised(session, unit: Unit | None, place: _Place, definition: FunctionDef | None = None) -> Unit | None:
    """The unit, with its body as array operations where gradlang's meaning leaves lengths open (vectorised.py).

    A binding's tensor formula at a symbolic size is printed as that formula (formula.py), the value the
    session computed, in every target: it is not read again from its statement. So is one at literal sizes
    that the array reader cannot read: R^3 is printed as R^n is, never unrolled into its components (a
    published loss's components took minutes to mask and print: jnp.nansum's where(t != t, 0, t), BYOL's)."""
    if unit is not None and not (unit.formula and symbolic(unit.branches[0][1])):
        unit.vector = vectorise(session, unit, place.program, definition)
    return unit


def _written(session, unit: Unit, target: str, table: NameTable, defined: set, place: _Place) -> str:
    """The unit's text, checked; a printer's or the check's objection is a refusal naming the unit."""

    def checked() -> str:
        text = unit_text(unit, target, table)
        problem = check_function(text, defined)
        if problem is not None:
            raise ValueError(problem)
        return text

    return _bounded(session, place, unit.name, (unit.source, unit.span, unit.focus), checked)


def _bounded(session, place: _Place, name: str, where: tuple, action: Callable):
    """`action()` within a statement's time budget; whatever stops it is a refusal to export `name`."""
    token = None
    try:
        with budget(session.time_limit) as token:
            return action()
    except OutOfTime as expiry:
        if not is_mine(expiry, token):
            raise
        error = LimitError(f"it took longer than {session.time_limit:g} s of CPU time")
    except RecursionError:
        error = LimitError("the computation nests too deeply")
    except GradlangError as caught:
        error = caught
    except Exception as caught:  # noqa: BLE001 - a bug: a clean InternalError, never a traceback
        raise InternalError(f"exporting {name} failed ({type(caught).__name__}: {caught})") from caught
    raise place.refusal(name, error, *where) from None


def _name_table(target: str, names: dict, units: list) -> NameTable:
    table = NameTable(reserved_names(_prelude(target), SHAPE_CHECK))
    arguments = [p for u in units for p, _ in u.params] + [k for u in units for k, _ in u.keywords]
    generated = {("grad", u.name): f"grad_{u.name}" for u in units}
    table.assign(list(names) + arguments, generated)
    return table


def _header(target: str, units: list, table: NameTable, conditions: list) -> str:
    shown = ", ".join(table[u.name] for u in units) or "nothing (no functions, no bindings over symbols)"
    lines = [
        f'"""Generated by gradlang --export {target}: {shown}.',
        "",
        "Vectors are arrays; stop_gradient is the framework's primitive; max/min share a tie's",
        "gradient equally, abs has derivative 0 at 0 (gradlang's conventions, the language reference (docs/language.md), section 5).",
        "A binding over symbols (a loss) is a function of those symbols, in declaration order.",
        "Functions are array operations: an argument described as 'or any length n0' takes any length",
        "(arguments that share n0 must agree); shapes the program fixes are checked (ValueError).",
    ]
    if conditions:
        lines += ["", f"Left out: {', '.join(conditions)} (a condition, not a number: the functions that use it hold it)."]
    renamed = table.renamed()
    if renamed:
        lines += ["", "Names changed to be Python identifiers that clash with nothing here:"]
        lines += [f"    {name} -> {identifier}" for name, identifier in renamed]
    return "\n".join(lines + ['"""'])
