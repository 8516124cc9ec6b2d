"""The one run-and-report loop of every shell: the CLI, the REPL and the notebook.

Each shell runs a program the same way: hand every Result to its printer as
soon as the statement finishes, stop at the first error and report it. Only
how a result or an error is *shown* differs, so the shells pass a `Reporter`
and share everything else here (the texts they print come from
gradlang.render.messages).
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator, Protocol

from gradlang.errors import GradlangError, InternalError, without_internal_paths
from gradlang.shell.streams import OutputError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


class Reporter(Protocol):
    """What a shell shows: each result, the error that ended a run, an interruption."""

    def result(self, result) -> None: ...

    def error(self, error: GradlangError) -> None: ...

    def interrupted(self, stop: KeyboardInterrupt) -> None: ...


def run_and_report(session, source: str, filename: str, reporter: Reporter) -> int:
    """Run `source`, reporting as results come; the exit status (0, 1, or 130 on Ctrl-C)."""

    def run() -> None:
        for result in session.iter_run(source, filename):
            try:
                reporter.result(result)
            except GradlangError as error:  # met while printing (a value too large): placed as the session's are
                if error.source_line is None:
                    error.attach_source(source, filename)
                raise

    return guarded(reporter, run)


def guarded(reporter: Reporter, action: Callable[[], object]) -> int:
    """Do `action`, reporting what stops it; 0 if it finished, 1 on an error, 130 on Ctrl-C.

    Any exception that is not a GradlangError is a bug in gradlang; it reaches
    the reporter as an InternalError whose cause is the original exception, so
    every shell says the same thing about it and GRADLANG_DEBUG can show where.
    An output that cannot be written (shell/streams.py) is neither, and passes.
    """
    try:
        with library_warnings_hidden():
            action()
    except GradlangError as error:
        reporter.error(error)
        return EXIT_ERROR
    except KeyboardInterrupt as stop:
        reporter.interrupted(stop)
        return EXIT_INTERRUPTED
    except (BrokenPipeError, OutputError):
        raise  # the output went away: the shell's to handle, neither the program's error nor a bug
    except Exception as exc:  # noqa: BLE001 - anything else is a bug, reported as one
        reporter.error(as_internal(exc))
        return EXIT_ERROR
    return EXIT_OK


@contextmanager
def library_warnings_hidden() -> Iterator[None]:
    """Python warnings of the libraries below (SymPy, NumPy) are not shown while a program runs and prints.

    gradlang's own warnings are notes on a Result, never Python warnings, so
    anything the warnings module would print is a library speaking to
    gradlang's developers, with a path into site-packages: a user must never
    see one. Warnings are recorded and dropped rather than only filtered,
    since a library may install its own filter (SymPy does, on import, for
    its deprecations). GRADLANG_DEBUG=1 lets them through.
    """
    if os.environ.get("GRADLANG_DEBUG") == "1":
        yield
        return
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("ignore")
        yield


def default_format(stream) -> str:
    """Pretty on a terminal, plain (re-readable source) in a pipe or file."""
    try:
        return "pretty" if stream.isatty() else "plain"
    except (AttributeError, ValueError):
        return "plain"


def as_internal(exc: BaseException) -> InternalError:
    """An unexpected exception as the InternalError a user sees, keeping it as the cause."""
    error = InternalError(without_internal_paths(f"{type(exc).__name__}: {exc}"))
    error.__cause__ = exc
    return error
