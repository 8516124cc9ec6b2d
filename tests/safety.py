"""The one timeout a test may set: a safety net against a hang, never a measurement.

The suite runs on shared, loaded machines (two cores and several people), where
a step that takes one second alone can take a minute. So no test asserts how
long something took, and every timeout (a subprocess, a thread's join, a
notebook cell, a statement's time budget where an answer is expected) is this
one, minutes long: it ends a test that would otherwise hang, and fails it only
when something truly never finishes. tests/test_no_clock.py checks this.
"""

SAFETY_NET = 600  # seconds
