"""The Session: executes statements in an environment and produces Results.

This is the only place that changes bindings. Each statement runs under a
time budget and is atomic: if it fails, the bindings are as they were before
it. Printing statements produce `Result` records that every printer (plain,
LaTeX, pretty, JSON, notebook) reads; nothing here prints or formats: text is
made only when a shell (or an API user, through `Result.text`) asks for it.
"""

from __future__ import annotations

import builtins as _python  # its ValueError: gradlang's (imported below) is a GradlangError
import math
import numbers
import sys
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Iterator

from sympy.core.evalf import PrecisionExhausted

from gradlang import limits

from gradlang.core import builtins
from gradlang.budget import OutOfTime, budget, is_mine
from gradlang.errors import (
    GradlangError, InternalError, Interrupted, LimitError, NameError, Span, without_internal_paths,
)
from gradlang.core.evaluate import Evaluator, FunctionDef, symbol
from gradlang.core.sympy_cache import forget_earlier_formulas
from gradlang.expr.exact import check_sizes
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import read, read_lately
from gradlang.syntax.lowered import written_names
from gradlang.core.substitute import settle
from gradlang.expr.engine import Var
from gradlang.expr.values import elements, shape_of
from gradlang.lazy import deferred, deferred_module, np

readable = deferred("gradlang.derive.requests", "readable")  # on the first explain (issue #41)
_AT_PLAN = "gradlang.core.at_plan"  # the plans of `at` statements: none exists before the module is first used
explaining = deferred_module("gradlang.core.explaining")  # on the first explain or builtin call (issue #41)

declare_size = deferred("gradlang.core.tensor_values", "declare_size")  # the tensor engine, on a first `n: size`

sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(max(sys.get_int_max_str_digits(), limits.MAX_INTEGER_BITS // 3 + 100))


# Format name -> function of a value. The printers sit above core (render/), so
# they fill this in when gradlang.render is imported, which `import gradlang` does.
TEXT_FORMS: dict = {}


@dataclass(frozen=True)
class Result:
    """What one printing statement produced: the value and records, no text.

    An assignment with warnings gives one too, of kind "assignment" and value None,
    so that its warnings are shown (docs/output.md); it prints no value."""

    line: int
    column: int
    source: str
    kind: str
    value: object
    steps: tuple = ()
    warnings: tuple = ()
    derivations: tuple = ()
    attachments: tuple = ()
    bound: frozenset = frozenset()  # the names the session had bound: a printed part is never named one of them

    def __init__(self, line, column, source, kind, value, steps=(), warnings=(), derivations=(), attachments=(),
                 bound=frozenset()):
        """The fields in one update of the instance's dictionary, not a frozen dataclass's one call of
        object.__setattr__ per field: a statement run again in a loop makes a Result a call (issue #41)."""
        self.__dict__.update(line=line, column=column, source=source, kind=kind, value=value, steps=steps,
                             warnings=warnings, derivations=derivations, attachments=attachments, bound=bound)

    # The text forms of the Python API (LANGUAGE.md §11), made on first access only,
    # by the printers that gradlang.render registers in TEXT_FORMS.

    @cached_property
    def text(self) -> str:
        """The value in the plain format (gradlang source; summarised when large)."""
        return TEXT_FORMS["plain"](self.value, self.bound)

    @cached_property
    def latex(self) -> str:
        """The value as a LaTeX fragment."""
        return TEXT_FORMS["latex"](self.value, self.bound)

    @cached_property
    def named(self) -> tuple:
        """(t_k, expr) pairs when a large value is shown with its shared parts named (or a tensor value its repeated parts)."""
        return TEXT_FORMS["named"](self.value, self.bound)

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex}$"


class Session:
    """A gradlang session: bindings plus the statements run so far."""

    def __init__(self, time_limit: float | None = limits.STATEMENT_TIME_LIMIT, explain_depth="default",
                 explain_unfold: bool = False, max_memory: int | None = None):
        self.time_limit = time_limit
        self.max_memory = max_memory  # bytes of arrays a statement may need (None: limits.MAX_MEMORY_BYTES)
        self.explain_depth = explain_depth  # levels of substeps explain shows; None: all
        self.explain_unfold = explain_unfold  # explain derives the builtins from their definitions
        self.env: dict = {}
        self.seen: frozenset = frozenset()  # every name written in a statement that ran (not `at` targets)
        self._last_seen = None  # the last statement whose names are in `seen`
        self._last_shown = (None, 0, 0, "")  # the last statement shown by a plan, its line, column and text
        self.stop_sites: dict = {}  # name -> the stops written into its value (core/written_stops.py)
        forget_earlier_formulas()  # an earlier session's formulas, once SymPy's cache is half full (sympy_cache.py)

    @property
    def time_limit(self) -> float | None:
        """CPU seconds each statement may compute (None: unbounded): waiting does not count (budget.py)."""
        return self._time_limit

    @time_limit.setter
    def time_limit(self, seconds) -> None:
        self._time_limit = checked_time_limit(seconds)

    # --- public API -------------------------------------------------------

    def iter_run(self, source: str, filename: str | None = None) -> Iterator[Result]:
        """Run a program, yielding each printing statement's Result as it finishes."""
        for statement in self._program(source, filename).statements:
            result = self._run_located(statement, source, filename)
            if result is not None:
                yield result

    def run(self, source: str, filename: str | None = None) -> list[Result]:
        """Run a program; one Result per printing statement (iter_run's loop, without a generator to resume:
        a statement run again in a loop is a call, issue #41)."""
        results = []
        for statement in self._program(source, filename).statements:
            result = self._run_located(statement, source, filename)
            if result is not None:
                results.append(result)
        return results

    def eval(self, source: str):
        """The value of the last printing statement (None if there is none)."""
        results = [result for result in self.run(source) if result.kind != "assignment"]
        return results[-1].value if results else None

    def snapshot(self) -> dict:
        return dict(self.env)

    def restore(self, state: dict) -> None:
        self.env = dict(state)

    def bind(self, name: str, value) -> None:
        """Bind a name to a value; a NumPy array becomes a float64 copy, as load gives (core/loading.py)."""
        from gradlang.core.loading import array_value

        self.env[name] = array_value(value, name)
        self.stop_sites.pop(name, None)

    def user_names(self) -> dict:
        return dict(self.env)

    # --- statements -------------------------------------------------------

    def _program(self, source: str, filename: str | None) -> lo.Program:
        """_parse's program, an error placed in the source."""
        try:
            return self._parse(source)
        except GradlangError as error:
            error.attach_source(source, filename)
            raise  # a bare raise keeps an InternalError's cause, for GRADLANG_DEBUG=1

    def _run_located(self, statement: lo.Node, source: str, filename: str | None) -> Result | None:
        """_run_statement, an error placed in the source."""
        try:
            return self._run_statement(statement, source)
        except GradlangError as error:
            error.attach_source(source, filename)
            raise
        except Interrupted as stop:
            stop.filename = filename
            raise

    def _parse(self, source: str) -> lo.Program:
        """The program's statements, read and lowered within the size limits and the statement time budget
        (a text read lately is looked up, with no budget to start)."""
        found = read_lately(source)
        if found is not None:
            return found
        token = None
        try:
            with budget(self.time_limit) as token:
                return read(source)
        except OutOfTime as expiry:
            if not is_mine(expiry, token):
                raise
            raise LimitError(
                f"reading the program took longer than {self.time_limit:g} s of CPU time; split it into smaller programs",
                Span(1, 1, 1, 2),
            ) from None

    def _run_statement(self, statement: lo.Node, source: str) -> Result | None:
        saved = dict(self.env)
        span = statement.span
        token = None
        try:
            with budget(self.time_limit) as token, limits.memory_limit(self.max_memory):
                result = getattr(self, "_" + statement.kind)(statement, source)
            self._saw(statement)
            return result
        except OutOfTime as expiry:
            self.env = saved
            if not is_mine(expiry, token):
                raise
            raise LimitError(f"this statement took longer than {self.time_limit:g} s of CPU time", span) from None
        except GradlangError as error:
            self.env = saved
            raise error.located(span)
        except RecursionError:
            self.env = saved
            raise LimitError("the computation nests too deeply", span) from None
        except PrecisionExhausted:
            self.env = saved
            raise LimitError("an exact number here is too large to compare or round at SymPy's working "
                             "precision; write one of its numbers as a float (1e300 instead of 10^300)", span) from None
        except (Exception, KeyboardInterrupt) as error:
            self.env = saved
            if isinstance(error, KeyboardInterrupt):
                raise Interrupted(span, _first_line(source, statement)) from None
            text = without_internal_paths(f"{type(error).__name__}: {error}")
            raise InternalError(f"gradlang failed on this statement ({text})", span) from error

    def _saw(self, statement: lo.Node) -> None:
        """Add the names a statement that ran wrote to `seen`; the same statement run again in a loop is
        known by the last one kept (a walk of it, even remembered, costs more than the rest of its run)."""
        if statement is self._last_seen:
            return
        written = written_names(statement)
        if not written <= self.seen:
            self.seen |= written
        self._last_seen = statement

    def _evaluator(self, derivations=None, source: str = "") -> Evaluator:
        return Evaluator(self.env, [], derivations, source, self.seen, sites=self.stop_sites)

    def _faulty(self, statement: lo.Faulty, source: str) -> None:
        """A statement whose own syntax the language refuses (lower.py): its error, now that it is reached."""
        raise statement.error

    def _show(self, statement: lo.Show, source: str) -> Result:
        plans = sys.modules.get(_AT_PLAN) if statement.value.kind == "at" else None  # a lookup, not a deferred
        if plans is not None:  # `g at W = Wd` run again at new arrays: its plan, no evaluator (one call each)
            notes: list = []
            planned = plans.run(self.env, statement.value, notes)
            if planned is not None:
                value = planned if type(planned) is np.ndarray else _settled(planned)  # an array is settled
                shown = self._last_shown
                if shown[0] is not statement:  # a node is of one text (lower.read): its place is found once
                    place = statement.span
                    shown = self._last_shown = (statement, place.line, place.column, statement.text(source))
                return Result(shown[1], shown[2], shown[3], "value", value, warnings=tuple(notes),
                              bound=frozenset(self.env))
        evaluator = self._evaluator(source=source)
        value = _settled(evaluator.evaluate(statement.value))  # at literal sizes, printers show the shorter form
        return self._result(statement, source, "value", value, evaluator)

    def _explain(self, statement: lo.Explain, source: str) -> Result:
        """explain[options] e: e's value, and the derivation of each derivative written in e (core/explaining.py).

        The statement is evaluated once, by the ordinary evaluator, which records its derivative requests;
        each is shown by one view, the tensor passes or the rule table over its components
        (core/explain_views.py)."""
        body = statement.body
        depth = self.explain_depth if statement.depth is lo.DEFAULT else statement.depth
        unfold = self.explain_unfold if statement.unfold is lo.DEFAULT else statement.unfold
        evaluator, value, derivations = self._recorded(body, source)
        explaining.check_printable(derivations)
        point = explaining.point(body, self._evaluator())
        steps = _explanations(derivations, depth, point, unfold, explaining.named_values(self.env), frozenset(self.env))
        value = explaining.shown_value(body, value, steps)
        return self._result(statement, source, "explain", value, evaluator, steps, tuple(derivations))

    def _recorded(self, body: lo.Node, source: str) -> tuple:
        """(evaluator, value, derivative requests) of explain's body, by the ordinary evaluator.

        Of `e at x = v` the numbers are the ordinary at's, and the requests e's, derived as formulas (at
        literal sizes the at lowers e to its components first); the at's own requests only when e has no
        formula without the point (x[argmax(x)] at x: R^2 needs its numbers)."""
        derivations: list = []
        evaluator = self._evaluator(derivations, source)
        with readable():  # the values end where the step-by-step derivations do
            value = _settled(evaluator.evaluate(body))
            if isinstance(body, lo.At):
                derivations = self._inner_requests(body.body, source) or derivations
            derivations = explaining.selected(body, derivations, self._evaluator().evaluate)
        return evaluator, value, derivations

    def _inner_requests(self, inner: lo.Node, source: str) -> list | None:
        """The requests of the formula under an at, or None when it needs the point's numbers."""
        requests: list = []
        try:
            self._evaluator(requests, source).evaluate(inner)
        except GradlangError:
            return None
        return requests

    def _assignment(self, statement: lo.Assignment, source: str) -> Result | None:
        """Bind the value; an assignment prints nothing, so a Result (kind "assignment", no value)
        comes only to carry its warnings (a misspelt name, a tie of max), which every shell shows."""
        name, body = _bindable(statement.target), statement.value
        evaluator = self._evaluator(source=source)
        with evaluator.stops.collecting() as written:  # the stops written into the value, for explain's ledger
            self.env[name] = _settled(evaluator.evaluate(body))
        self.stop_sites[name] = tuple(replace(site, bound=name) if site.key == id(body) else site  # a = sg(…)
                                      for site in written.values())
        return self._result(statement, source, "assignment", None, evaluator) if evaluator.notes else None

    def _definition(self, statement: lo.Definition, source: str) -> None:
        name = _bindable(statement.target)
        params = tuple(_bindable(param) for param in statement.params)
        self.env[name] = FunctionDef(name, params, statement.body, statement.span, statement.text(source))
        self.stop_sites.pop(name, None)

    def _declaration(self, statement: lo.Declaration, source: str) -> None:
        names = [_bindable(name) for name in statement.names]
        if statement.is_size:
            declared = {name: declare_size(name, self.env) for name in names}
        else:
            shape = tuple(self._dimension(dimension) for dimension in statement.shape)
            declared = {name: _declared(name, shape) for name in names}
        self.env.update(declared)

    def _dimension(self, dimension: lo.Dimension):
        """A literal size, or a size name (declared now if it is new: a name used in a shape is a size)."""
        if isinstance(dimension.size, int):
            return dimension.size
        name = dimension.size
        _bindable(dimension)
        size = declare_size(name, self.env)
        if not isinstance(size, int):  # a name bound to a number (n = 3) keeps its value, not a Python int
            self.env[name] = size
        return size

    def _result(self, statement, source, kind, value, evaluator, steps=(), derivations=()) -> Result:
        return Result(
            line=statement.span.line,
            column=statement.span.column,
            source=statement.text(source),
            kind=kind,
            value=value,
            steps=steps,
            warnings=tuple(evaluator.notes),
            derivations=derivations,
            attachments=tuple(evaluator.attachments),
            bound=frozenset(self.env),
        )


# --- helpers ------------------------------------------------------------------


def _first_line(source: str, statement: lo.Node) -> str:
    """A statement's first line of text, to name it in a message."""
    return statement.text(source).split("\n", 1)[0]


def _settled(value):
    """A statement's value, settled, with every exact number in it within the size limit."""
    value = settle(value)
    if not isinstance(value, np.ndarray):
        check_sizes(elements(value) if shape_of(value) else [value])
    return value


def checked_time_limit(seconds):
    """A statement time limit: a positive, finite number of seconds, or None for none.

    nan would pass every comparison as false, so its deadline would never come
    (issue 29, row 20); a Python ValueError, as for any bad argument of the API."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) or not 0 < seconds < math.inf:
        raise _python.ValueError(f"time_limit must be a positive, finite number of seconds, or None; got {seconds!r}")
    return float(seconds)


def _bindable(node) -> str:
    """The name a statement binds (a Name, or a size name in a shape); a core builtin cannot be rebound."""
    name = node.name if isinstance(node, lo.Name) else node.size
    if name in builtins.CORE:
        raise NameError(f"'{name}' is a core builtin and cannot be rebound", node.span)
    return name


def _declared(name: str, shape: tuple):
    """A real symbol, or one tensor symbol of its shape, whether its sizes are symbols or numbers
    (section 3a): `x: R^3` is the same formula as `x: R^n`, with its components x[0], x[1], x[2]
    on request."""
    if not shape:
        return symbol(name)
    count = 1
    for size in shape:
        count *= size if isinstance(size, int) else 1
    if 8 * count > limits.max_memory():  # its components are built only on request, each under MAX_ELEMENTS
        raise LimitError(limits.memory_refusal(f"a tensor of {'×'.join(map(str, shape))} floats", 8 * count))
    return Var(name, shape)


def _explanations(derivations: list, depth="default", point=None, unfold: bool = False, names=(),
                  bound=frozenset()) -> tuple:
    """Step-by-step derivations of the derivative calls inside an explain statement, each with its closing
    check: one view per request (core/explain_views.py); names are the user's bindings a tensor pass shows,
    bound every name the session has (a letter the derivation introduces is none of them)."""
    from gradlang.core.explain_views import explanations

    return explanations(derivations, depth, point, unfold, names, bound)
