"""A Session embedded in a host program: budgets hold in any thread, and nothing is borrowed (issue 16).

A web server runs each request in a worker thread, and a host may use its own
SIGALRM timer; gradlang's time budgets must hold in the first case and leave
the second alone.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest

from gradlang import GradlangError, Session
from tests.safety import SAFETY_NET

# Each definition doubles the expression; expanding the last one never ends.
DOUBLING = "f(x) = sin(x) + cos(x)\ng0(x) = f(f(x))\n" + "".join(
    f"g{i}(x) = g{i - 1}(g{i - 1}(x))\n" for i in range(1, 30)) + "expand(g29(y))"


def _run_in_thread(source: str, time_limit: float):
    """Run `source` in a worker thread; the error it ended with, or None."""
    outcome: dict = {}

    def work():
        try:
            Session(time_limit=time_limit).run(source)
        except GradlangError as error:
            outcome["error"] = error
        except BaseException as error:  # noqa: BLE001 - the test reports anything else as a failure
            outcome["error"] = error

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout=SAFETY_NET)
    assert not worker.is_alive(), "the statement ran past its budget in a worker thread"
    return outcome.get("error")


def test_the_time_budget_holds_in_a_worker_thread():
    error = _run_in_thread(DOUBLING, time_limit=1.0)
    assert isinstance(error, GradlangError) and error.kind == "LimitError", error
    assert "took longer than 1 s" in error.message
    assert error.line == DOUBLING.count("\n") + 1  # the clock ended it: expanding g29 never ends


def test_a_worker_thread_session_still_works_and_keeps_its_bindings():
    outcome = {}

    def work():
        session = Session(time_limit=SAFETY_NET)
        session.run("a = 2\nf(t) = t^2 * a")
        outcome["value"] = session.eval("diff(f(x), x) at x = 3")

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(timeout=SAFETY_NET)
    assert outcome["value"] == 12


def test_budgets_of_two_threads_are_independent():
    """A thread whose statement expires does not stop another thread's statement."""
    results: dict = {}

    def quick():
        session = Session(time_limit=SAFETY_NET)
        for _ in range(20):
            results.setdefault("quick", []).append(session.eval("diff(sin(x)^3, x) at x = 0.5"))

    slow = threading.Thread(target=lambda: results.update(slow=_run_in_thread(DOUBLING, 1.0)))
    fast = threading.Thread(target=quick)
    slow.start()
    fast.start()
    slow.join(timeout=SAFETY_NET)
    fast.join(timeout=SAFETY_NET)
    assert len(results["quick"]) == 20
    assert results["slow"].kind == "LimitError"


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timer on this platform")
def test_the_hosts_alarm_timer_and_handler_are_left_alone():
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, SAFETY_NET)  # still running after the statement, however slow
        Session(time_limit=SAFETY_NET).run("y = diff(sin(x)^2, x)\ny at x = 1.0")
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= SAFETY_NET, "the host's timer was cancelled"
        assert signal.getsignal(signal.SIGALRM) is not previous
        signal.setitimer(signal.ITIMER_REAL, 0.05)  # and the host's handler is the one that fires
        deadline = time.monotonic() + SAFETY_NET
        while not fired and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_expired_statement_leaves_the_session_usable():
    session = Session(time_limit=1.0)
    session.run("a = 5")
    with pytest.raises(GradlangError) as caught:
        session.run(DOUBLING)
    assert caught.value.kind == "LimitError"
    time.sleep(0.2)  # no late expiry may escape into the next statement
    assert session.eval("a + 1") == 6


def test_no_budget_outlives_its_statement():
    """Expiries landing anywhere (even while a budget opens or closes) leave no deadline behind."""
    from gradlang import budget

    session = Session(time_limit=0.05)
    for k in range(40):
        try:
            session.run(f"x: R^30\nsimplify(sum(exp(x)*sin(x + {k})))")
        except GradlangError as error:
            assert error.kind == "LimitError", error.format()
    time.sleep(0.3)
    assert not budget._open, "a deadline outlived its statement"
    assert Session(time_limit=SAFETY_NET).eval("1 + 1") == 2


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 0, -1.0, "60", True])
def test_a_time_limit_that_is_not_a_positive_number_of_seconds_is_refused(seconds):
    # Session(time_limit=nan) gave no time limit at all (nan never compares as passed)
    with pytest.raises(ValueError, match="time_limit must be a positive, finite number of seconds, or None"):
        Session(time_limit=seconds)
    session = Session()
    with pytest.raises(ValueError, match="time_limit"):
        session.time_limit = seconds
    assert session.time_limit == 60.0


def test_a_time_limit_may_be_none_or_any_real_number_of_seconds():
    import numpy as np

    assert Session(time_limit=None).time_limit is None
    assert Session(time_limit=np.float64(2.5)).time_limit == 2.5
    assert Session(time_limit=3).eval("1 + 1") == 2
