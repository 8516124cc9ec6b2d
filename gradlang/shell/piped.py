"""The REPL reading a stream that is not a terminal (a pipe, a file): line by line, each line bounded.

Brackets left open carry a statement on to the next line; a blank line, a
:command or the end of input ends it. No line or statement is held beyond the
limit for one program: a 2.5 GB line piped in was read whole (a MemoryError);
a longer one is read on in chunks, dropped and reported as a LimitError.
"""

from __future__ import annotations

from gradlang import limits
from gradlang.errors import LimitError, Span
from gradlang.shell.loop import EXIT_ERROR, EXIT_OK
from gradlang.shell.sources import SourceError, decode
from gradlang.syntax.brackets import open_brackets


def is_complete(text: str) -> bool:
    """A command, or statements whose brackets are all closed, can be run."""
    return text.lstrip().startswith(":") or open_brackets(text) <= 0


def line_loop(repl, stream) -> int:
    """Read input line by line (not a terminal), continuing open brackets; 1 if any input failed.

    A blank line, a :command or the end of input ends an unfinished statement,
    so an unclosed bracket is reported where it was opened instead of
    swallowing the lines after it.
    """
    buffer = ""
    while repl.running:
        try:
            raw = _bounded_line(repl, stream)
            if raw is _TOO_LONG:
                buffer = ""
                continue
            line = _text_line(repl, raw)
            if line is None:
                break
            if buffer and not is_complete(buffer) and (not line.strip() or line.lstrip().startswith(":")):
                text, buffer = buffer, ""
                repl.execute(text)
            buffer += line
            if len(buffer) > limits.MAX_SOURCE_CHARS:  # an unclosed bracket gathering line after line
                _refuse(repl, buffer, f"a statement of more than {limits.MAX_SOURCE_CHARS} characters")
                buffer = ""
            if is_complete(buffer):
                text, buffer = buffer, ""
                repl.execute(text)
        except KeyboardInterrupt:
            buffer = ""
            repl.emitter.note("interrupted")
    if buffer.strip() and repl.running:
        repl.execute(buffer)
    return EXIT_ERROR if repl.failures else EXIT_OK


_TOO_LONG = object()  # a line over the limit, skipped and reported
_CHUNK = 1 << 16  # bytes read at a time while a line over the limit is skipped


def _bounded_line(repl, stream):
    """The next line of a stream, never holding more than the limit: a 2.5 GB line was read whole.

    A longer line is read on to its end in chunks and dropped, with a
    LimitError; the statements after it still run."""
    most = LINE_LIMIT_FACTOR * limits.MAX_SOURCE_CHARS  # bytes: a character takes up to 4 in UTF-8
    line = stream.readline(most + 1)
    newline = b"\n" if isinstance(line, bytes) else "\n"
    if len(line) <= most or line.endswith(newline):
        return line
    start = line[:SHOWN_START]
    chunk = line
    while chunk and not chunk.endswith(newline):
        chunk = stream.readline(_CHUNK)
    _refuse(repl, start if isinstance(start, str) else start.decode("utf-8", "replace"),
            f"a line of more than {most} bytes")
    return _TOO_LONG


SHOWN_START = 200  # characters of a refused line kept for its message
LINE_LIMIT_FACTOR = 4


def _refuse(repl, text: str, what: str) -> None:
    """Report an input too long to run, at its first line, and count it as a failure."""
    error = LimitError(f"{what} is above the limit for one input; it was skipped", Span(1, 1, 1, 2))
    error.attach_source(text[:SHOWN_START], "<stdin>")
    repl.emitter.error(error)
    repl.failures += 1


def _text_line(repl, line) -> str | None:
    """A line of input as text; None at the end; bytes that are not UTF-8 are reported and skipped."""
    if not line:
        return None
    if isinstance(line, str):
        return line
    try:
        return decode(line, "standard input")
    except SourceError as error:
        repl.emitter.note(str(error))
        repl.failures += 1
        return ""
