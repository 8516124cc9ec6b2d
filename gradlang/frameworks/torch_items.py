"""Integers read out of tensors while exporting (`ptr = int(self.queue_ptr)` in MoCo's enqueue, `n =
mask.sum().item()`, `if flag:`), fixed at their values at the example point.

torch.export traces with fake tensors: an integer or boolean read out of one is an unbacked symbol, and as
soon as it sizes a slice or picks a branch the export stops (GuardOnDataDependentSymNode). Such a read is
piecewise constant in the loss (a position, a count, a branch taken), so the program may be the loss near the
point with the read fixed there, as an argmax is. When (and only when) the export stops so, the module is run
once eagerly on a copy, at the example arguments, recording every integer or boolean read out of a tensor in
order (`__int__`, `__index__`, `__bool__`, `item`, `tolist` of a non-float tensor), and exported again with
each read answered by its recorded value. A float's `.item()` is never replayed: the export keeps it as a
node, written as a stop. Each fixed read is a note of the program, at the user's line.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import sys
import traceback

from gradlang.frameworks.loading import called
from gradlang.frameworks.program import TranslateError, shown_path

READS = ("__int__", "__index__", "__bool__", "item", "tolist")


def exported(torch, module, args: tuple, export, notes: list):
    """export(); if it stops at an integer read out of a tensor, again with every such read fixed at the value
    an eager run of a copy of the module read (each a note in `notes`: (file, line, value))."""
    try:
        return _quietly(export)
    except Exception as error:  # noqa: BLE001 - torch's tracer refused: only a data-dependent read is retried
        if "DataDependent" not in type(error).__name__:
            raise
    reads, places = _recorded(torch, module, args)
    with _answered(torch, reads):
        program = export()
    if reads:
        raise TranslateError("the module read integers out of tensors differently when exported than when run")
    notes.extend(places)
    return program


def _recorded(torch, module, args: tuple) -> tuple:
    """Every integer or boolean read out of a tensor, in order, while a copy of the module runs eagerly; and
    where each was read, (file, line, value)."""
    reads, places = [], []

    def record(name, original):
        def read(self, *given, **options):
            value = original(self, *given, **options)
            if not self.is_floating_point():
                reads.append(value)
                places.append((*_users_line(), value))
            return value
        return read

    copied = copy.deepcopy(module)
    with torch.random.fork_rng(devices=[]), _patched(torch, record):
        called("running the module once to read its integers", lambda: copied(*[_copy(torch, a) for a in args]))
    return reads, places


def _quietly(export):
    """export() with what it writes to standard error held back: on success written on, on failure written on
    without the partial graph torch.export prints there (a raw dump with no user line; the failure is retried,
    or reported in one line at the user's line); torch's own log lines are not shown while it fails."""
    held, logger = io.StringIO(), logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(held):
            return export()
    except Exception as error:
        dump = str(getattr(error, "partial_fx_graph", "") or "")
        sys.stderr.write(held.getvalue().replace(dump + "\n", "") if dump else held.getvalue())
        held = None
        raise
    finally:
        logger.setLevel(level)
        if held is not None:
            sys.stderr.write(held.getvalue())


@contextlib.contextmanager
def _answered(torch, reads: list):
    def answer(name, original):
        def read(self, *given, **options):
            if self.is_floating_point():
                return original(self, *given, **options)
            if not reads:
                raise TranslateError("the module read more integers out of tensors when exported than when run")
            return reads.pop(0)
        return read

    with _patched(torch, answer):
        yield


@contextlib.contextmanager
def _patched(torch, make):
    own = {name: torch.Tensor.__dict__.get(name) for name in READS}
    for name in READS:
        setattr(torch.Tensor, name, make(name, getattr(torch.Tensor, name)))
    try:
        yield
    finally:
        for name, before in own.items():
            if before is None:
                delattr(torch.Tensor, name)
            else:
                setattr(torch.Tensor, name, before)


def _copy(torch, value):
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _users_line() -> tuple:
    """(file, line) of the innermost frame outside torch, gradlang and the standard library."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        path = frame.filename.replace("\\", "/")
        if not any(part in path for part in ("/torch/", "/gradlang/", "/lib/python", "<")):
            return shown_path(frame.filename), frame.lineno
    return "?", 0
