"""The time budget (gradlang/budget.py): what it borrows from the host, it gives back."""

import sys

from gradlang.budget import OutOfTime, budget


def test_an_expiry_where_python_ignores_exceptions_prints_no_traceback():
    # An expiry landing in a __del__ or a gc callback is "ignored" by CPython, which prints
    # a traceback on stderr (seen in a fuzz run, inside hypothesis's gc callback); the
    # watchdog raises again, so gradlang's hook drops it and passes everything else on.
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
            assert sys.unraisablehook is not seen.append
            Expires()  # dropped at once: its __del__ raises inside the budget
            Fails()
        assert [type(u.exc_value) for u in seen] == [KeyError]
        assert sys.unraisablehook == seen.append  # the host's hook is back
    finally:
        sys.unraisablehook = host
