"""The one run-and-report loop of every shell: the CLI, the REPL and the notebook.

Each shell runs a program the same way: hand every Result to its printer as
soon as the statement finishes, stop at the first error and report it. Only
how a result or an error is *shown* differs, so the shells pass a `Reporter`
and share everything else here, including the one text that says an internal
error is a bug, and the one way text from the user is made safe to print.
"""

from __future__ import annotations

import os
import traceback
from typing import Callable, Protocol

from .errors import GradlangError, InternalError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130

INTERNAL_NOTE = (
    "This is a bug in gradlang, not in your program: please report it to the maintainers, "
    "with the program that caused it (GRADLANG_DEBUG=1 shows the traceback)."
)


class Reporter(Protocol):
    """What a shell shows: each result, the error that ended a run, an interruption."""

    def result(self, result) -> None: ...

    def error(self, error: GradlangError) -> None: ...

    def interrupted(self) -> None: ...


def run_and_report(session, source: str, filename: str, reporter: Reporter) -> int:
    """Run `source`, reporting as results come; the exit status (0, 1, or 130 on Ctrl-C)."""

    def run() -> None:
        for result in session.iter_run(source, filename):
            reporter.result(result)

    return guarded(reporter, run)


def guarded(reporter: Reporter, action: Callable[[], object]) -> int:
    """Do `action`, reporting what stops it; 0 if it finished, 1 on an error, 130 on Ctrl-C.

    Any exception that is not a GradlangError is a bug in gradlang; it reaches
    the reporter as an InternalError whose cause is the original exception, so
    every shell says the same thing about it and GRADLANG_DEBUG can show where.
    """
    try:
        action()
    except GradlangError as error:
        reporter.error(error)
        return EXIT_ERROR
    except KeyboardInterrupt:
        reporter.interrupted()
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - anything else is a bug, reported as one
        reporter.error(as_internal(exc))
        return EXIT_ERROR
    return EXIT_OK


def default_format(stream) -> str:
    """Pretty on a terminal, plain (re-readable source) in a pipe or file."""
    try:
        return "pretty" if stream.isatty() else "plain"
    except (AttributeError, ValueError):
        return "plain"


def as_internal(exc: BaseException) -> InternalError:
    """An unexpected exception as the InternalError a user sees, keeping it as the cause."""
    error = InternalError(f"{type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


def error_text(error: GradlangError) -> str:
    """An error as every shell prints it: the caret display, plus the bug note for an internal error."""
    text = safe_text(error.format())
    if error.kind == "InternalError":
        text += "\n" + INTERNAL_NOTE + debug_traceback(error)
    return text


def debug_traceback(error: BaseException) -> str:
    """With GRADLANG_DEBUG=1, the traceback of what went wrong inside gradlang; else nothing.

    The Session re-raises errors `from None` to hide its own frames from users,
    which clears `__cause__` but keeps `__context__`: either leads to the original.
    """
    if os.environ.get("GRADLANG_DEBUG") != "1":
        return ""
    origin = error.__cause__ or error.__context__ or error
    return "\n" + "".join(traceback.format_exception(type(origin), origin, origin.__traceback__)).rstrip("\n")


# Control characters would act on the terminal (retitle it, clear it, move the
# cursor) instead of being shown. Each becomes one visible character of the same
# width, so a caret under a source line still points at the right place: C0
# controls and DEL their Unicode "control pictures" (ESC shows as ␛), C1 controls
# and the line separators the parser does not count as lines U+FFFD.
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n"}
_PICTURES[0x7F] = "\u2421"
_PICTURES.update({code: "\ufffd" for code in range(0x80, 0xA0)})
_PICTURES.update({0x2028: "\ufffd", 0x2029: "\ufffd"})


def safe_text(text: str) -> str:
    """`text` with every control character but tab and newline shown as a visible character."""
    return text.translate(_PICTURES)
