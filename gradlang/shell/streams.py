"""The process's standard streams, which may be closed (`>&-`) or fail (`> /dev/full`).

An output that cannot be written is neither the program's error nor a bug in
gradlang, so it must not become an InternalError asking for a bug report, nor
a traceback: the CLI says it in one line on standard error (if that still
works) and exits 1. `Guarded` wraps a stream so that every failure to write
it, whichever layer writes (the Emitter, rich's console, the export), arrives
as one `OutputError`. A reader that went away (`| head`, BrokenPipeError)
stays what it is: the CLI ends quietly then, as Unix tools do.
"""

from __future__ import annotations

import os
import sys


class OutputError(Exception):
    """A standard stream cannot be written; the message says which and why."""


class Guarded:
    """A text stream whose write and flush raise OutputError instead of OSError or ValueError (closed)."""

    def __init__(self, stream, name: str):
        self._stream, self._name = stream, name

    def write(self, text: str):
        return self._do(self._stream.write, text)

    def flush(self) -> None:
        self._do(self._stream.flush)

    def _do(self, action, *args):
        try:
            return action(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as error:
            raise OutputError(f"cannot write {self._name}: {getattr(error, 'strerror', None) or error}") from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)  # isatty, encoding, fileno, buffer: the stream's own


def guarded_streams() -> tuple[Guarded, Guarded]:
    """Standard output and standard error, guarded."""
    return Guarded(sys.stdout, "standard output"), Guarded(sys.stderr, "standard error")


def say(message: str) -> None:
    """One line on standard error, if it can still be written (it may be closed or full too)."""
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass


def silence_stdout() -> None:
    """Point standard output at the null device, so Python's own flush at exit finds nothing to fail on.

    What was buffered for a full disk or a vanished reader is lost either way;
    without this, the interpreter prints "Exception ignored ..." as it exits.
    """
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (AttributeError, OSError, ValueError):
        pass
