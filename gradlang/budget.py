"""Time budgets: no statement or simplify may run without bound, in any thread.

A budget is a deadline in CPU seconds of the thread that opened it (`Deadline`):
the time the statement computed, not the time that passed, so a loaded machine
(many processes on few cores) does not stop a statement that is within its
budget, and a budget can only ever end a statement with a LimitError, never
change what it prints. Time spent waiting (sleep, I/O) does not count. One
watchdog thread, started on first use, sleeps until the earliest deadline of
any thread could have come (a thread's CPU clock runs no faster than the wall
clock), reads the clocks again, and when a deadline has passed it raises
`OutOfTime` inside the thread that owns the budget (CPython's
`PyThreadState_SetAsyncExc`: the exception appears at that thread's next
bytecode boundary, exactly where a signal handler's would). So budgets hold
in the main thread and in a web server's worker thread alike, and gradlang
borrows nothing from its host: no signal handler, no interval timer (a host's
own `SIGALRM` timer keeps running untouched).

Opening a budget reads no clock: the deadline is fixed when the watchdog (or
is_mine, remaining) first looks at it, reading the thread's CPU clock then,
and the watchdog looks within _SLACK of the budget's length of its opening (it
is woken for a budget that needs it sooner than it planned to wake). So a
statement may compute up to 1 + _SLACK times its limit before it is stopped
(beside the watchdog's own latency: it needs the GIL), never less than its limit;
and a statement run again in a loop pays no system
call for its budget (reading a thread's CPU clock is one, 0.5-1.5 us on a
loaded machine: a tenth of a small gradient's arithmetic, issue #41).

`OutOfTime` is a BaseException so that SymPy's internal `except Exception`
clauses cannot swallow it. Budgets nest: an inner one (a simplify inside a
statement) never outlives the outer one, and each catches only its own expiry
(`is_mine`). While an expired budget is still open, the watchdog raises again
every 50 ms, in case the first exception landed where Python ignores
exceptions (a `__del__`, a garbage-collector callback); from the first expiry in
a thread until its budgets have closed, an unraisable-exception hook keeps such
a landing from printing a traceback (_borrow_unraisable_hook: borrowed when the
watchdog raises, not when a budget opens, so a budget that does not expire
touches nothing of the host's). Budgets open and close without the watchdog's
lock (each thread adds and removes its own deadlines, one GIL step each); the
watchdog marks a thread before it raises there, and a budget that closes on a
marked thread cancels any exception still pending for it under the lock, so
no expiry can escape the `with` that set it (_fire, _Budget.__exit__).

Like a signal, the exception cannot interrupt one long call into C; every such
call gradlang makes is bounded by a size limit instead (docs/limits.md).

Where no thread can start (Pyodide in the browser: `sys.platform ==
"emscripten"`, or `Thread.start` raising RuntimeError), the same budgets are
kept without a watchdog by budget_traced.py: the computation reads the clock at
each Python call. Size limits hold on both paths, being checks, not timers.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import sys
import threading
import time
from contextlib import contextmanager, nullcontext

from gradlang import budget_traced

_RETRY = 0.05  # seconds between repeated expiries of a budget that is still open
_SLACK = 1 / 16  # a budget's deadline is fixed within this fraction of its length of its opening
_IDLE_WAKES = 16  # wakes with no budget open after which the watchdog sleeps until one opens

_mutex = threading.RLock()  # taken as _lock's own lock where a budget opens or closes: a C call, not Condition's
_lock = threading.Condition(_mutex)
_open: dict[int, list] = {}  # thread id -> Deadlines of its open budgets
_fired: dict[int, float] = {}  # thread id -> when the watchdog last raised in it
_watchdog: threading.Thread | None = None


_hook = {"open": 0, "previous": None}  # borrowers of the unraisable hook (expired threads, traced budgets), the host's hook
_wakes = [0.0]  # when (time.monotonic) the watchdog next reads the clocks by itself; 0: it has not yet; inf: never
_idle = [3600.0]  # wall seconds between the watchdog's wakes: _SLACK of the shortest budget open when it last woke
_threads = threading.local()  # this thread's CPU clock and its speed, found once per thread


class OutOfTime(BaseException):
    """Raised inside the computation when a budget of its thread has expired."""


budget_traced.set_exception(OutOfTime)


class Deadline:
    """When a budget ends: `at` seconds on `clock`, the CPU clock of the thread that opened it.

    `speed` is how much faster than the wall clock `clock` can run: 1 for a thread's
    own clock, the number of cores for the process's (where threads have no clock)."""

    __slots__ = ("clock", "at", "speed")

    def __init__(self, clock, at: float, speed: float = 1.0):
        self.clock, self.at, self.speed = clock, at, speed

    def left(self) -> float:
        """CPU seconds left (infinite if the clock cannot be read: its thread is gone)."""
        try:
            return self.at - self.clock()
        except OSError:
            return float("inf")


def thread_clock(thread_id: int):
    """(clock, speed): a function reading the CPU time of the thread `thread_id`, from any thread.

    POSIX gives each thread a CPU clock (pthread_getcpuclockid); elsewhere the
    process's CPU time, which counts this thread's and runs no slower; else the wall clock."""
    try:
        clock = functools.partial(time.clock_gettime, time.pthread_getcpuclockid(thread_id))
        clock()
        return clock, 1.0
    except (AttributeError, OSError, OverflowError):
        pass
    try:
        time.process_time()
        return time.process_time, float(os.cpu_count() or 1)
    except (AttributeError, OSError):
        return time.monotonic, 1.0


def _available() -> bool:
    return hasattr(ctypes, "pythonapi") and hasattr(ctypes.pythonapi, "PyThreadState_SetAsyncExc")


_AVAILABLE = [_available()]  # asked once: the interpreter does not change


def _raise_in(thread_id: int, exception) -> None:
    """Make `exception` (a class, or None to cancel) pending in the thread `thread_id`."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None)


def _watch() -> None:
    """The watchdog: raise OutOfTime in every thread whose earliest deadline has passed.

    It wakes when the earliest deadline could have come: after the CPU seconds
    left, as wall seconds (divided by the clock's speed), and reads the clock again.
    With none open it wakes after the length of the last budget it was woken for
    (_idle): a budget as long, opened after, needs no notify (_Budget.__enter__),
    so statements run in a loop do not wake it once each (issue #41). Should it ever stop, the next
    budget starts another (_budget reads `_watchdog`, not the thread's state)."""
    global _watchdog
    try:
        _watch_forever()
    finally:
        with _lock:
            if _watchdog is threading.current_thread():
                _watchdog = None


def _watch_forever() -> None:
    """The watchdog's loop, under its lock but while it waits. Budgets open and close without the lock (each
    thread adds and removes its own, and the GIL makes each step whole): the loop reads copies, and while it
    reads `_wakes` is infinite, so a budget opening meanwhile tells it (_Budget.__enter__)."""
    idle = 0  # wakes in a row with no budget open
    with _lock:
        while True:
            _wakes[0] = math.inf
            now = time.monotonic()
            wake, shortest = _idle[0], math.inf  # wall seconds from now
            for thread_id, deadlines in list(_open.items()):
                deadlines = tuple(deadlines)
                if not deadlines:
                    continue
                shortest = min(shortest, *(d.seconds * _SLACK / d.speed for d in deadlines))
                left = min(deadline.left() / deadline.speed for deadline in deadlines)  # left() fixes a new one
                if left <= 0:
                    if now - _fired.get(thread_id, -_RETRY) >= _RETRY:
                        _fire(thread_id, now)
                    left = _fired[thread_id] + _RETRY - now
                wake = min(wake, left)
            if shortest < math.inf:
                idle, _idle[0], wake = 0, shortest, min(wake, shortest)
            else:
                idle += 1
            if idle > _IDLE_WAKES:  # none open for a while: sleep until a budget opens (_wakes stays infinite)
                _lock.wait()
                idle = 0
                continue
            wake = max(wake, 0.001)
            _wakes[0] = time.monotonic() + wake
            _lock.wait(wake)


def _fire(thread_id: int, now: float) -> None:
    """Raise OutOfTime in the thread if a budget of it has expired. The thread is marked first (_fired): a
    budget that closes after the mark sees it and cancels under the lock whatever was raised (__exit__,
    _remove); one that closed before it is not read again here. A mark stays until _remove clears it, but for
    a new one where nothing is raised."""
    new = thread_id not in _fired
    if new:
        _borrow_unraisable_hook()  # until the thread's budgets have closed (_remove)
    _fired[thread_id] = now
    if any(deadline.left() <= 0 for deadline in tuple(_open.get(thread_id, ()))):
        _raise_in(thread_id, OutOfTime)
    elif new:  # its expired budget closed meanwhile, and nothing was raised there before: no mark is needed
        del _fired[thread_id]
        _return_unraisable_hook()


def _start_watchdog() -> bool:
    """Start the watchdog if it is not running; False where threads cannot start (Pyodide)."""
    global _watchdog
    if sys.platform == "emscripten":
        return False
    if _watchdog is None or not _watchdog.is_alive():  # not alive: first use, or a child after fork()
        watchdog = threading.Thread(target=_watch, name="gradlang-budget-watchdog", daemon=True)
        try:
            watchdog.start()
        except RuntimeError:  # "can't start new thread": a host without threads
            return False
        _watchdog = watchdog
    return True


def budget(seconds: float | None):
    """Run the body for at most `seconds` of this thread's CPU time; raises OutOfTime on expiry.

    Yields a token (a Deadline); catch the exception with `is_mine(error, token)`
    to tell your own budget from an outer one. No limit (None) is a context that does nothing, not a
    generator: a statement run again in a loop pays two of them (issue #41).
    """
    if seconds is None:
        return _UNBOUNDED
    if _watchdog is not None and _AVAILABLE[0]:  # the watchdog is running: a statement run again in a loop
        return _Budget(seconds)
    return _budget(seconds)


_UNBOUNDED = nullcontext(None)


def _budget(seconds: float):
    """budget() with a limit: the watchdog's, or budget_traced's where no thread can start."""
    if _watchdog is None:  # first use, or a child after fork() (_forget_watchdog)
        with _lock:
            if not _start_watchdog():
                return _traced(seconds)
    return _Budget(seconds) if _AVAILABLE[0] else _UNBOUNDED


def _forget_watchdog() -> None:
    """In a child after fork(): the watchdog thread was not copied, so the next budget starts one; its lock,
    which the watchdog may have held at the fork, is made anew (the child has the forking thread alone); and
    the thread's clock is found anew: the parent's was that thread's in the parent (a POSIX thread clock
    names a kernel thread), which computes nothing while the child runs, so no budget of the child expired."""
    global _watchdog, _mutex, _lock, _threads
    _watchdog = None
    _mutex = threading.RLock()
    _lock = threading.Condition(_mutex)
    _threads = threading.local()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watchdog)


class _Budget(Deadline):
    """An open deadline of the watchdog, its own token: a class, not a generator, and no object beside
    it (a statement run again in a loop opens one per call, issue #41). Its clock is read when it is first
    looked at (left), not when it opens (the module docstring). An expiry landing while it opens closes it
    before it leaves __enter__; after __enter__ the `with` statement's exit closes it (no bytecode between
    them reads a pending exception)."""

    __slots__ = ("thread_id", "seconds")

    def __init__(self, seconds: float):
        self.seconds, self.at = seconds, None  # `at` once the clock is read (left)

    def left(self) -> float:
        if self.at is None:  # read by this thread or the watchdog: either reading is after the opening
            try:
                self.at = self.clock() + self.seconds
            except OSError:
                return float("inf")
        return Deadline.left(self)

    def __enter__(self) -> Deadline:
        """Add the deadline to this thread's, without the lock: only this thread adds or removes its own."""
        thread_id = self.thread_id = threading.get_ident()
        self.clock, self.speed = getattr(_threads, "clock", None) or _own_clock(thread_id)
        try:
            deadlines = _open.get(thread_id)
            if deadlines is None:
                _open[thread_id] = [self]
            else:
                deadlines.append(self)
            look = self.seconds * _SLACK / self.speed  # wall seconds within which the watchdog must look
            if time.monotonic() + look < _wakes[0]:  # read after the deadline is added (_watch_forever)
                with _mutex:
                    _idle[0] = min(_idle[0], look)
                    _lock.notify()  # it would look later than that
        except BaseException:
            _close(thread_id, self)
            raise
        return self

    def __exit__(self, *exception) -> bool:
        """Remove the deadline without the lock when it is the innermost and the thread is not marked (_fire:
        the mark is read after the removal); else _close, under the lock, which cancels a pending expiry."""
        thread_id = self.thread_id
        try:
            deadlines = _open.get(thread_id)
            if deadlines and deadlines[-1] is self:
                deadlines.pop()
                if not deadlines:
                    del _open[thread_id]
                if thread_id not in _fired:
                    return False
        except OutOfTime:  # landed in the middle: _close is idempotent and retries
            pass
        _close(thread_id, self)
        return False


def _own_clock(thread_id: int) -> tuple:
    """thread_clock of the running thread, found once per thread (a thread-local: an id is reused by a later
    thread, its clock is not): a statement run again in a loop opens a budget per call (issue #41)."""
    found = getattr(_threads, "clock", None)
    if found is None:
        found = _threads.clock = thread_clock(thread_id)
    return found


@contextmanager
def _traced(seconds: float):
    """A budget without the watchdog (budget_traced.py); an expiry raised where Python ignores it is not shown."""
    with _lock:
        _borrow_unraisable_hook()
    try:
        with budget_traced.traced_budget(seconds) as at:
            yield Deadline(budget_traced.now, at)
    finally:
        with _lock:
            _return_unraisable_hook()


def _close(thread_id: int, deadline: Deadline) -> None:
    """Remove a deadline and cancel an expiry still pending for this thread.

    An expiry can land in the middle of this (once the lock is taken, before the
    removal), so the removal is retried until it is done; an outer budget's
    expiry swallowed here is raised again by the watchdog within _RETRY.
    """
    while True:
        try:
            with _mutex:
                _remove(thread_id, deadline)
            return
        except OutOfTime:
            continue


def _remove(thread_id: int, deadline: Deadline) -> None:
    """Idempotent: the deadline is gone afterwards, whatever state it found."""
    deadlines = _open.get(thread_id, [])
    if deadline in deadlines:
        deadlines.remove(deadline)
    if thread_id in _fired:
        _raise_in(thread_id, None)  # an outer budget's expiry, if any, is raised again within _RETRY
        if all(other.left() > 0 for other in deadlines):
            del _fired[thread_id]
            _return_unraisable_hook()
    if not deadlines:
        _open.pop(thread_id, None)


def is_mine(error: OutOfTime, token) -> bool:
    """True when the expiry belongs to the budget that yielded `token` (its deadline has passed)."""
    return token is not None and token.left() <= 0


def remaining(token) -> float | None:
    """CPU seconds left of the budget that yielded `token` (None when it is unbounded)."""
    return None if token is None else max(token.left(), 0.0)


def _borrow_unraisable_hook() -> None:
    """While an expiry may land, where Python ignores exceptions it is not shown.

    CPython prints "Exception ignored in: …" and a traceback when an exception
    is raised inside a `__del__` or a garbage-collector callback; the watchdog
    raises again within _RETRY, so nothing is lost and nothing should be shown.
    Every other unraisable exception goes to the host's hook. Called under _lock:
    by the watchdog at a thread's first expiry (returned when that thread's budgets
    have closed, _remove), by budget_traced's path for each budget (whose trace
    function may raise at any call). Counted, so the two paths and many threads nest.
    """
    if _hook["open"] == 0:
        _hook["previous"] = sys.unraisablehook
        sys.unraisablehook = _unraisable
    _hook["open"] += 1


def _return_unraisable_hook() -> None:
    """The host's hook back once the last borrower is done (unless the host replaced ours meanwhile)."""
    _hook["open"] -= 1
    if _hook["open"] == 0:
        if sys.unraisablehook is _unraisable:
            sys.unraisablehook = _hook["previous"]
        _hook["previous"] = None


def _unraisable(unraisable) -> None:
    if isinstance(unraisable.exc_value, OutOfTime):
        return
    (_hook["previous"] or sys.__unraisablehook__)(unraisable)
