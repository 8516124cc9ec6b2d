"""Errors are values with a place.

Every error a user can cause is a `GradlangError` subclass named after its kind
in the language reference (docs/language.md), section 9. Each carries the line and column where it happened
(1-based) and, once the session has attached it, the text of that source line,
so the edges (CLI, REPL, notebook) can show a caret. Nothing in the pipeline
prints errors; it raises them.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass

BUG_NOTE = (
    "This is a bug in gradlang, not in your program: please report it to the maintainers, "
    "with the program that caused it (GRADLANG_DEBUG=1 shows the traceback)."
)  # the one text every shell shows under an InternalError

_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:[^\s'\"():,;<>]+/)*[^\s'\"():,;<>]*")


def without_internal_paths(text: str) -> str:
    """A message of Python or a library with the absolute paths of internal files cut to their last part.

    An InternalError quotes the exception it wraps, and a library's message
    may name its own files (site-packages, Python's prefix, gradlang's package,
    the temporary folder); messages name only the user's files, so those are
    cut to the file's name (GRADLANG_DEBUG=1 shows the whole traceback)."""
    roots = _internal_roots()

    def cut(match) -> str:
        path = match.group(0)
        inside = any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)
        return (os.path.basename(path.rstrip("/")) or path) if inside else path

    return _ABSOLUTE.sub(cut, text)


def _internal_roots() -> set:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = {package, sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir()}
    roots |= {entry for entry in sys.path if entry and os.path.isabs(entry) and "site-packages" in entry}
    return {root for root in roots if root and root != os.sep}


def source_lines(source: str) -> list[str]:
    """The lines of a program as the parser counts them: only \\n ends a line.

    str.splitlines also breaks at a form feed, U+0085, U+2028 and others, which
    the grammar treats as ordinary characters; a caret placed with it would
    point at the wrong line.
    """
    return [line[:-1] if line.endswith("\r") else line for line in source.split("\n")]


SHOWN_LINE = 160  # characters of a long source line shown around the caret


def _window(line: str, column: int) -> tuple[str, int]:
    """A long line cut to SHOWN_LINE characters around `column` (with …), and the column in it."""
    if len(line) <= SHOWN_LINE:
        return line, column
    start = max(0, min(column - 1 - SHOWN_LINE // 2, len(line) - SHOWN_LINE))
    shown = line[start : start + SHOWN_LINE]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + SHOWN_LINE < len(line) else ""
    return prefix + shown + suffix, column - start + len(prefix)


@dataclass(frozen=True)
class Span:
    """A region of source text: 1-based lines and columns, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def of(cls, meta) -> "Span | None":
        """The span of a lark tree node or token, or None when it has none."""
        if getattr(meta, "empty", False):
            return None
        line = getattr(meta, "line", None)
        if line is None:
            return None
        return cls(line, meta.column, meta.end_line or line, meta.end_column or meta.column + 1)


class GradlangError(Exception):
    """Base of every error a gradlang program can cause."""

    kind = "Error"

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.source_line: str | None = None
        self.filename: str | None = None

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span else None

    def located(self, span: Span | None) -> "GradlangError":
        """Give the error a place if it has none yet; returns self."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def attach_source(self, source: str, filename: str | None = None) -> "GradlangError":
        """Remember the source line the error points at, for the caret display."""
        self.filename = filename
        if self.span is not None:
            lines = source_lines(source)
            if 1 <= self.span.line <= len(lines):
                self.source_line = lines[self.span.line - 1]
        return self

    def format(self) -> str:
        """Kind, message, place, the source line and a caret under the place."""
        where = self.filename or "<input>"
        if self.span is None:
            return f"{self.kind}: {self.message}"
        text = f"{where}:{self.span.line}:{self.span.column}: {self.kind}: {self.message}"
        if self.source_line is not None:
            width = 1
            if self.span.end_line == self.span.line:
                width = max(1, self.span.end_column - self.span.column)
            line, column = _window(self.source_line, self.span.column)
            width = min(width, len(line) - column + 2)
            pad = "".join(c if c == "\t" else " " for c in line[: column - 1])
            text += f"\n    {line}\n    {pad}{'^' * max(width, 1)}"
        return text

    def __str__(self) -> str:
        return self.format()


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a statement: still a KeyboardInterrupt, as Python means it, but knowing its statement.

    A long script stopped by Ctrl-C should say where it was, as an error does;
    the session raises this in place of the bare KeyboardInterrupt.
    """

    def __init__(self, span: Span, statement: str = ""):
        super().__init__()
        self.span = span
        self.statement = statement  # the statement's first line, for the message
        self.filename: str | None = None

    def where(self) -> str:
        """`file:line` of the statement that was running."""
        return f"{self.filename or '<input>'}:{self.span.line}"


class SyntaxError(GradlangError):  # noqa: A001 - the kind's name is part of the language
    kind = "SyntaxError"


class NameError(GradlangError):  # noqa: A001
    kind = "NameError"


class ShapeError(GradlangError):
    kind = "ShapeError"


class DiffError(GradlangError):
    kind = "DiffError"


class ValueError(GradlangError):  # noqa: A001
    kind = "ValueError"


class LimitError(GradlangError):
    kind = "LimitError"


class NeedsComponents(GradlangError):
    """A mark on a ShapeError or DiffError of the tensor engine: it has no whole-tensor form here.

    At a symbolic size that is the user's error; at literal sizes the
    evaluator takes the same operation by components instead (section 3a)."""


class ShapeNeedsComponents(NeedsComponents, ShapeError):
    pass


class DiffNeedsComponents(NeedsComponents, DiffError):
    pass


class NeedsNumbers(ValueError):
    """argmax(x) of a formula: piecewise constant, it has no components but numbers. At literal sizes the
    component path stops here, and an `at` takes the whole-tensor formula (ArgMax) to its point instead."""


class FreeIndex(ValueError):
    """Components of a value that picks one by an index left symbolic (x[k], onehot(k, 3)): there are none
    until the index is given, so an `at` at literal sizes hands such a value to the tensor engine
    (expr/tensor/lower.py raises it; here, so a module may catch it without importing the engine)."""


class InternalError(GradlangError):
    """A bug in gradlang itself, never the user's fault."""

    kind = "InternalError"


KINDS = {cls.kind: cls for cls in (SyntaxError, NameError, ShapeError, DiffError, ValueError, LimitError, InternalError)}


class Warning(str):  # noqa: A001 - gradlang's own warnings, like its error kinds
    """A warning as text (what JSON and the API keep), with its two parts apart:
    `short`, what happened here, and `detail`, the convention behind it, the same
    for every warning of its kind, which a shell says once per run."""

    def __new__(cls, short: str, detail: str = ""):
        text = super().__new__(cls, f"{short} {detail}" if detail else short)
        text.short, text.detail = short, detail
        return text

