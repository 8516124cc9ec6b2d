"""The builtin table's static rows of the primitives (core/primitive_entries.py, issue #41) say what the records
say, in the records' order: the table is made from the rows at start-up and a record is loaded on its first call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gradlang.core import builtins
from gradlang.core.primitive_entries import ENTRIES
from gradlang.expr import primitives

ROOT = Path(__file__).resolve().parents[2]
SAFETY_NET = 300  # seconds: a safety net for a loaded machine, not a timing assertion


def entries_from_records() -> tuple:
    """The rows as the records give them (print this to refresh primitive_entries.py)."""
    return tuple((r.name, r.aliases, r.arity, r.group, r.apply, r.doc, r.example) for r in primitives.records())


def test_the_static_rows_are_the_records():
    assert ENTRIES == entries_from_records()


def test_every_primitive_name_is_an_entry_that_builds_its_records_value():
    for record in primitives.records():
        for name in record.names:
            entry = builtins.lookup(name)
            assert (entry.min_args, entry.max_args) == (record.arity[0], record.arity[1]) or name in _AXIS_FORMS
            assert entry.group == record.group


_AXIS_FORMS = {"logsumexp", "softmax", "log_softmax", "max", "min", "reduce_max", "reduce_min"}


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_gradlang_class_prints_as_gradlang_before_any_record_is_loaded():
    """str() of stop_gradient and relu values made straight from their classes, in a process that has loaded no
    record: the hook loads them (registering a record used to be the only place it was set)."""
    printed = _fresh("import sympy, sys\nfrom gradlang.expr.stopgrad import StopGradient\n"
                     "from gradlang.expr.functions import Relu\n"
                     "x = sympy.Symbol('x')\nprint(StopGradient(x) + Relu(x))")
    assert printed == "relu(x) + stop_gradient(x)"


def test_each_primitive_called_first_in_a_fresh_process_gives_its_value():
    """The first call of a name loads the records: relu, softmax, where and max each as the first builtin."""
    program = "from gradlang import Session\nfor p in {!r}:\n    print(Session().eval(p))"
    printed = _fresh(program.format(["relu(-2)"])), _fresh(program.format(["softmax([0, 0])"]))
    assert printed == ("0", "[1/2, 1/2]")
    assert _fresh(program.format(["where(1 > 0, 3, 4)", "max([1, 5, 2])"])).splitlines() == ["3", "5"]
