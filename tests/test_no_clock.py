"""No test depends on the speed of the machine: every timeout is the safety net of tests/safety.py.

A timeout written as a number (`timeout=60`, `join(120)`) is read as a
measurement by the next person to tune it, and fails on a loaded machine; an
assertion that something took less than so many seconds is one. Both are
found here by reading the tests' syntax.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = ("monotonic", "perf_counter", "time")
TIMED = ("seconds", "elapsed")


def _modules():
    for path in sorted(TESTS.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_safety_net(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "SAFETY_NET" or (
        isinstance(node, ast.BinOp) and _is_safety_net(node.left))


def _fixed_timeouts(tree) -> list[int]:
    """Lines passing a timeout that is not the safety net: timeout=…, or join(…) with a number."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        given = [k.value for k in node.keywords if k.arg == "timeout"]
        if _thread_join(node):
            given += node.args
        lines += [node.lineno for value in given if not _is_safety_net(value)
                  and not (isinstance(value, ast.Constant) and value.value is None)]
    return lines


def _thread_join(call: ast.Call) -> bool:
    """`worker.join(120)` or `worker.join(SECONDS)`, not `", ".join(parts)`."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "join" and len(call.args) == 1):
        return False
    if isinstance(call.func.value, ast.Constant):
        return False
    (argument,) = call.args
    return (isinstance(argument, ast.Constant) and isinstance(argument.value, (int, float))) or (
        isinstance(argument, ast.Name) and argument.id.isupper())


def _mentions_a_clock(node) -> bool:
    """Is this the time something took: a name like `seconds`, or a clock read?"""
    for part in ast.walk(node):
        text = part.id if isinstance(part, ast.Name) else part.value if isinstance(part, ast.Constant) else None
        if isinstance(text, str) and any(word in text.lower() for word in TIMED):
            return True
        if isinstance(part, ast.Attribute) and part.attr in CLOCKS:
            return True
    return False


def _timed_assertions(tree) -> list[int]:
    """Lines asserting that something took less than so long."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for compare in (c for c in ast.walk(node.test) if isinstance(c, ast.Compare)):
                if any(isinstance(op, (ast.Lt, ast.LtE)) for op in compare.ops) and _mentions_a_clock(compare.left):
                    lines.append(node.lineno)
    return lines


def test_every_timeout_is_the_safety_net():
    found = [f"{path.relative_to(TESTS)}:{line}" for path, tree in _modules() for line in _fixed_timeouts(tree)]
    assert not found, "a fixed timeout (use tests.safety.SAFETY_NET):\n" + "\n".join(found)


def test_no_test_measures_how_long_something_took():
    found = [f"{path.relative_to(TESTS)}:{line}" for path, tree in _modules() for line in _timed_assertions(tree)]
    assert not found, "an assertion on elapsed time:\n" + "\n".join(found)


def test_the_readers_find_what_they_look_for():
    tree = ast.parse("run(timeout=60)\nrun(timeout=SAFETY_NET)\nt.join(120)\nt.join(timeout=SAFETY_NET)\n"
                     "', '.join(SECONDS)\nt.join(SECONDS)\n"
                     "assert seconds < 30\nassert time.monotonic() - start < 30\nassert cpu < 30\nassert n < 3\n")
    assert sorted(_fixed_timeouts(tree)) == [1, 3, 6]
    assert _timed_assertions(tree) == [7, 8]
