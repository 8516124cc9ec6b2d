"""Time budgets where no thread can start: Pyodide in a browser (`sys.platform == "emscripten"`).

budget.py's watchdog is a thread; Pyodide has none (`RuntimeError: can't start
new thread`). Here the computation checks its own deadlines instead: a trace
function (`sys.settrace`) runs at every Python function call, reads the
thread's CPU clock (`cpu_clock`), and raises `OutOfTime` once the earliest open
deadline has passed. SymPy's work
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

_open: list[float] = []  # deadlines of the open budgets (CPU seconds of this thread), innermost last
_host = {"trace": None}  # the trace function found when the first budget opened


class Expired(BaseException):
    """Placeholder replaced by budget.py's OutOfTime (set_exception): one class for both paths."""


_exception = {"class": Expired}


def set_exception(cls) -> None:
    """Raise budget.py's OutOfTime, so callers catch one class whichever path runs."""
    _exception["class"] = cls


def cpu_clock():
    """The clock a budget reads: seconds of CPU this thread used (docs/limits.md).

    CPU time, not the wall clock, so a statement within its budget finishes on a
    loaded machine too, and a statement's printed output never depends on the
    load (only a LimitError can come of a budget). Where the platform has no
    per-thread clock, the process's CPU time, which runs no slower; then the wall clock."""
    for name in ("thread_time", "process_time"):  # Pyodide's time module has neither
        clock = getattr(time, name, None)
        try:
            clock()
        except (OSError, TypeError):  # "clock_gettime: Invalid argument", or no such clock here (None)
            continue
        return clock
    return time.monotonic


_clock = {"now": None}  # chosen on first use


def now() -> float:
    """This thread's CPU seconds (cpu_clock, chosen once)."""
    if _clock["now"] is None:
        _clock["now"] = cpu_clock()
    return _clock["now"]()


def _trace(frame, event, arg):
    """Called at each Python call (returns None: no line events, so the overhead is one call per call)."""
    if _open and now() >= min(_open):
        raise _exception["class"]
    return None


@contextmanager
def traced_budget(seconds: float):
    """Run the body for at most `seconds` of CPU on this thread alone; yields the deadline as budget() does."""
    deadline = now() + seconds
    if not _open:
        _host["trace"] = sys.gettrace()
    _open.append(deadline)
    sys.settrace(_trace)
    try:
        yield deadline
    finally:
        _open.remove(deadline)
        sys.settrace(_trace if _open else _host["trace"])
