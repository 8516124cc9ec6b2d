"""Time budgets where no thread can start: Pyodide in a browser (`sys.platform == "emscripten"`).

budget.py's watchdog is a thread; Pyodide has none (`RuntimeError: can't start
new thread`). Here the computation checks its own deadlines instead: a trace
function (`sys.settrace`) runs at every Python function call, reads the clock,
and raises `OutOfTime` once the earliest open deadline has passed. SymPy's work
is Python calls all the way down, so an expiry lands within one call of its
deadline, as the watchdog's would within one bytecode.

CPython removes a trace function that raises, so each budget that closes puts
it back while budgets are still open: an outer budget whose deadline has passed
then expires at the next call, as the watchdog's retry would make it. A host's
own trace function (a debugger) is put back when the last budget closes. As
with the watchdog, one long call into C is not interrupted; size limits bound
every such call (docs/limits.md), and the page ends the worker as a last resort.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

_open: list[float] = []  # deadlines of the open budgets, innermost last
_host = {"trace": None}  # the trace function found when the first budget opened


class Expired(BaseException):
    """Placeholder replaced by budget.py's OutOfTime (set_exception): one class for both paths."""


_exception = {"class": Expired}


def set_exception(cls) -> None:
    """Raise budget.py's OutOfTime, so callers catch one class whichever path runs."""
    _exception["class"] = cls


def _trace(frame, event, arg):
    """Called at each Python call (returns None: no line events, so the overhead is one call per call)."""
    if _open and time.monotonic() >= min(_open):
        raise _exception["class"]
    return None


@contextmanager
def traced_budget(seconds: float):
    """Run the body for at most `seconds` on this thread alone; yields the deadline as budget() does."""
    deadline = time.monotonic() + seconds
    if not _open:
        _host["trace"] = sys.gettrace()
    _open.append(deadline)
    sys.settrace(_trace)
    try:
        yield deadline
    finally:
        _open.remove(deadline)
        sys.settrace(_trace if _open else _host["trace"])
