"""Time budgets: no statement or simplify may run without bound.

A budget arms the real-time interval timer (SIGALRM); when it expires, the
handler raises `OutOfTime`, a BaseException so that SymPy's internal
`except Exception` clauses cannot swallow it. Budgets nest: an inner one (a
simplify inside a statement) never outlives the outer one, and each budget
catches only its own expiry. Signals exist only in the main thread; elsewhere
a budget is a no-op (documented in docs/limits.md).
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

_deadlines: list[float] = []


class OutOfTime(BaseException):
    """Raised inside the computation when the innermost expired budget ends."""

    def __init__(self, deadline: float):
        super().__init__(deadline)
        self.deadline = deadline


def _available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _arm() -> None:
    if not _deadlines:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    remaining = max(min(_deadlines) - time.monotonic(), 0.001)
    signal.setitimer(signal.ITIMER_REAL, remaining)


def _on_alarm(signum, frame) -> None:
    now = time.monotonic()
    expired = [d for d in _deadlines if d <= now]
    if expired:
        # Fire again soon in case this exception is swallowed (a signal can land
        # in a garbage-collector callback, where exceptions are ignored).
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        raise OutOfTime(min(expired))
    _arm()


@contextmanager
def budget(seconds: float | None):
    """Run the body for at most `seconds`; raises OutOfTime(deadline) on expiry.

    Catch it with `expired(error, token)` to tell your own budget from an outer one.
    """
    if seconds is None or not _available():
        yield None
        return
    deadline = time.monotonic() + seconds
    previous = signal.getsignal(signal.SIGALRM)
    signal.signal(signal.SIGALRM, _on_alarm)
    _deadlines.append(deadline)
    _arm()
    try:
        yield deadline
    finally:
        _deadlines.remove(deadline)
        _arm()
        if not _deadlines:
            signal.signal(signal.SIGALRM, previous)


def is_mine(error: OutOfTime, token) -> bool:
    """True when the expiry belongs to the budget that yielded `token`."""
    return token is not None and error.deadline == token
