"""A piped REPL never holds a line or a statement over the limit (issue #38: a 2.5 GB line was read whole).

The input is generated as it is read, tens of megabytes of it, and the stream
records the largest piece it was asked for: a read without a bound (readline()
of the whole line) fails the test at once. The limit is lowered so the test is
fast; the statements after a refused line still run.
"""

from __future__ import annotations

import io

from gradlang import limits
from gradlang.shell.repl import Repl, line_loop

LIMIT = 1000


class _Generated:
    """A binary stream: `head`, then a line of `length` bytes of `x`, then `tail`, made as it is read."""

    def __init__(self, head: bytes, length: int, tail: bytes):
        self._parts = [head, None, tail]
        self._left = length
        self.largest = 0

    def readline(self, size: int = -1) -> bytes:
        assert size is not None and size >= 0, "a line read without a bound"
        self.largest = max(self.largest, size)
        if self._parts[0]:
            line, _, rest = self._parts[0].partition(b"\n")
            self._parts[0] = rest
            return line + b"\n"
        if self._left:
            taken = min(size, self._left)
            self._left -= taken
            return b"x" * taken + (b"\n" if not self._left and taken < size else b"")
        if self._parts[1] is None:
            self._parts[1] = b""
            return b"\n"
        line, _, rest = self._parts[2].partition(b"\n")
        self._parts[2] = rest
        return line + b"\n" if line else b""


def _run(stream, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(limits, "MAX_SOURCE_CHARS", LIMIT)
    out, err = io.StringIO(), io.StringIO()
    status = line_loop(Repl(fmt="plain", out=out, err=err), stream)
    return status, out.getvalue(), err.getvalue()


def test_a_line_of_tens_of_megabytes_is_refused_without_being_held(monkeypatch):
    stream = _Generated(b"1 + 1\n", 30_000_000, b"2 + 3\n")
    status, out, err = _run(stream, monkeypatch)
    assert status == 1 and out == "2\n5\n"
    assert err.splitlines() == [
        f"<stdin>:1:1: LimitError: a line of more than {4 * LIMIT} bytes is above the limit for one input; "
        "it was skipped",
        "    " + "x" * 160 + "…",
        "    ^",
    ]
    assert stream.largest <= 1 << 16


def test_a_statement_gathered_over_many_lines_is_bounded(monkeypatch):
    program = b"v = [1,\n" + b"2,\n" * 2000 + b"3]\n7 * 6\n"
    status, out, err = _run(io.BytesIO(program), monkeypatch)
    assert status == 1 and out.endswith("42\n")
    assert f"LimitError: a statement of more than {LIMIT} characters is above the limit" in err
