"""The time budget (gradlang/budget.py): what it borrows from the host, it gives back."""

import os
import sys
import threading
import time

from gradlang import budget as budgets
from gradlang.budget import OutOfTime, budget


def test_an_expiry_where_python_ignores_exceptions_prints_no_traceback():
    # An expiry landing in a __del__ or a gc callback is "ignored" by CPython, which prints
    # a traceback on stderr (seen in a fuzz run, inside hypothesis's gc callback); the
    # watchdog raises again, so gradlang's hook drops it and passes everything else on.
    # The hook is borrowed when the watchdog first raises in a thread (here as it does, by
    # hand: a budget of 60 s does not expire), until that thread's budgets have closed.
    seen = []
    host = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        class Expires:
            def __del__(self):
                raise OutOfTime

        class Fails:
            def __del__(self):
                raise KeyError("the host's own")

        with budget(60):
            assert sys.unraisablehook == seen.append  # a budget that does not expire touches nothing
            Fails()
            with budgets._lock:
                budgets._borrow_unraisable_hook()  # what the watchdog does as it raises, under its lock
                budgets._fired[threading.get_ident()] = time.monotonic()
            assert sys.unraisablehook != seen.append
            Expires()  # dropped at once: its __del__ raises inside the budget
            Fails()
        assert [type(u.exc_value) for u in seen] == [KeyError, KeyError]
        assert sys.unraisablehook == seen.append  # the host's hook is back
        assert not budgets._fired and not budgets._open
    finally:
        sys.unraisablehook = host


# --- the budget is CPU time of the statement's thread (finding: a loaded machine failed the README's tests) ---

import pytest

from gradlang import Session, budget_traced


def _sleeping_first(monkeypatch, seconds: float) -> None:
    """Every printing statement waits `seconds` before it computes, as a slow host or a wait on I/O would."""
    original = Session._show

    def waits(self, statement, source):
        time.sleep(seconds)
        return original(self, statement, source)

    monkeypatch.setattr(Session, "_show", waits)


def test_a_statement_that_waits_is_not_stopped_by_a_budget_of_less_than_the_wait(monkeypatch):
    # The wall clock would stop it after 2 s; waiting 4 s costs no CPU, so it finishes. (A budget of 0.05 s
    # came near the statement's own first-run CPU on a loaded machine: a test must not sit near a limit.)
    _sleeping_first(monkeypatch, 4)
    assert str(Session(time_limit=2).eval("x: R\ndiff(x * stop_gradient(x), x)")) == "stop_gradient(x)"


def test_a_budget_reads_the_cpu_clock_of_the_thread_that_opened_it():
    clock, speed = budgets.thread_clock(threading.get_ident())
    assert speed == 1.0  # a thread's own clock (POSIX): it runs no faster than the wall clock
    before = time.thread_time()
    reading = clock()
    assert before <= reading <= time.thread_time()  # the same clock as this thread's thread_time
    with budgets.budget(60) as token:
        assert token.clock is not time.monotonic and 59 < budgets.remaining(token) <= 60


def test_without_thread_clocks_the_budget_reads_the_process_cpu_time(monkeypatch):
    monkeypatch.delattr(time, "pthread_getcpuclockid")
    assert budgets.thread_clock(threading.get_ident())[0] is time.process_time
    monkeypatch.setattr(time, "thread_time", lambda: (_ for _ in ()).throw(OSError("no thread clock")))
    assert budget_traced.cpu_clock() is time.process_time


def test_a_busy_statement_is_stopped_by_its_budget_of_cpu_time():
    with pytest.raises(budgets.OutOfTime):
        with budgets.budget(0.05) as token:
            while True:
                pass
    assert budgets.remaining(token) == 0.0


def test_a_host_without_cpu_clocks_reads_the_wall_clock(monkeypatch):
    # Pyodide's time module has neither thread_time nor process_time: the page stopped every program
    # with "AttributeError: module 'time' has no attribute 'thread_time'" before its first statement
    monkeypatch.delattr(time, "thread_time")
    monkeypatch.delattr(time, "process_time")
    assert budget_traced.cpu_clock() is time.monotonic


# --- a statement run again in a loop opens a budget per call (issue #41): counted, not timed ---


def _planned() -> None:
    """Wait (a safety net of minutes) until the watchdog has read the clocks and planned its next wake."""
    waited = time.monotonic()
    while budgets._wakes[0] <= time.monotonic() and time.monotonic() - waited < 120:
        time.sleep(0.01)


def test_budgets_opened_in_a_loop_do_not_wake_the_watchdog_once_each(monkeypatch):
    with budget(60):
        _planned()
    _planned()
    woken = []
    monkeypatch.setattr(budgets._lock, "notify", lambda *args: woken.append(1))
    for _ in range(200):
        with budget(60):
            pass
    assert woken == []  # it wakes by itself before any of them could have expired
    with budget(0.001):  # one that could expire before the watchdog's planned wake is told of
        pass
    assert woken == [1]


def test_a_budget_opened_in_another_thread_reads_that_threads_clock():
    with budget(60):  # this thread's clock found, and kept for this thread only
        pass
    sum(range(2_000_000))  # this thread has computed more than the new one will have
    seen = {}

    def opens():
        before = time.thread_time()
        with budget(60) as token:
            budgets.remaining(token)  # the deadline is fixed when it is first looked at
            seen["start"], seen["before"], seen["after"] = token.at - 60, before, time.thread_time()

    worker = threading.Thread(target=opens)
    worker.start()
    worker.join()
    assert seen["before"] <= seen["start"] <= seen["after"] < time.thread_time()


def test_budgets_opened_and_closed_in_many_threads_let_no_expiry_escape():
    # Budgets open and close without the watchdog's lock (issue #41); the watchdog marks a thread before
    # it raises there. Nested budgets in five threads, some expiring: every expiry is caught by the `with`
    # whose deadline passed, none lands outside them, and no deadline or mark is left. Bounded by steps.
    escaped, caught = [], []

    def work(seed: int) -> None:
        for step in range(40):
            try:
                outer = None
                try:
                    with budget((0.02, 60)[(seed + step) % 2]) as outer:
                        inner = None
                        try:
                            with budget((0.005, 60)[step % 2]) as inner:
                                sum(range(50_000 * (1 + step % 7)))
                        except OutOfTime as error:
                            if not budgets.is_mine(error, inner):
                                raise
                            caught.append(1)
                        sum(range(20_000 * (1 + seed)))
                except OutOfTime as error:
                    if not budgets.is_mine(error, outer):
                        raise
                    caught.append(1)
                sum(range(1_000))  # outside every budget: no expiry may land here
            except OutOfTime:
                escaped.append((seed, step))

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for worker in workers:
        worker.start()
    work(4)
    for worker in workers:
        worker.join()
    assert escaped == []
    assert not budgets._open


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_a_budget_in_a_child_after_fork_reads_the_childs_clock():
    # The thread's clock was found once and kept: in a child after fork() it read the parent's thread, which
    # waits, so the child's runaway statement ran until it failed otherwise (27 s, "nests too deeply").
    session = Session(time_limit=0.5)
    session.run("a = 1")  # this thread's clock found, in the parent
    doubling = "f(x) = sin(x) + cos(x)\ng0(x) = f(f(x))\n" + "".join(
        f"g{i}(x) = g{i - 1}(g{i - 1}(x))\n" for i in range(1, 30)) + "expand(g29(y))"
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            session.run(doubling)
            said = "finished"
        except BaseException as error:  # noqa: BLE001 - anything but a LimitError fails the test
            said = getattr(error, "kind", type(error).__name__) + " " + str(error)
        os.write(writing, said.encode())
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        said = pipe.read()
    os.waitpid(child, 0)
    assert said.startswith("LimitError") and "0.5 s of CPU time" in said, said
