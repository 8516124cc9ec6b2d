"""Translate a framework's loss, run the program, and give gradlang's numbers beside the framework's."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from gradlang import Session
from gradlang.frameworks import translate
from gradlang.frameworks import shapes_arg
from gradlang.frameworks.verify import entries
from tests.conftest import as_floats

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "frameworks"


@contextmanager
def in_examples():
    """The user's folder is the current one, as when they run gradlang beside their module."""
    here = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        yield
    finally:
        os.chdir(here)


def user_attribute(spec: str):
    """MODULE:NAME of the examples' folder, imported as the user's module is (the folder first on sys.path)."""
    import importlib
    import sys

    module, name = spec.split(":")
    with in_examples():
        sys.path.insert(0, str(EXAMPLES))
        try:
            return getattr(importlib.import_module(module), name)
        finally:
            sys.path.remove(str(EXAMPLES))


def translated(kind: str, spec: str, shapes: str | None = None, example_args: str | None = None) -> str:
    """The program of `spec`, translated from the examples' folder."""
    with in_examples():
        return translate(kind, spec, shapes=shapes, example_args=example_args)


def run(kind: str, spec: str, shapes: str | None = None, example_args: str | None = None):
    """The program's text and its printed values: the loss, then the gradient by each leaf, as floats."""
    program = translated(kind, spec, shapes, example_args)
    results = Session().run(program)
    return program, [as_floats(v) for r in results for v in entries(r.value)]


def exported(kind: str, spec: str, shapes: str, folder: Path):
    """The translated program run in a session, then exported for `kind` and imported: (session, program, module)."""
    import importlib.util

    from gradlang.export import export_program

    program = translated(kind, spec, shapes)
    session = Session()
    session.run(program)
    path = folder / f"exported_{kind}.py"
    path.write_text(export_program(session, kind, program), encoding="utf-8")
    loaded = importlib.util.spec_from_file_location(f"exported_{kind}", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return session, program, module


def point(shapes: str) -> dict:
    """The arguments --shapes draws, as the translation drew them."""
    return shapes_arg.example(shapes_arg.parse(shapes))


def worst(ours: list, theirs: list) -> float:
    """The largest difference, relative to the size of the framework's number (at least 1)."""
    error = 0.0
    for a, b in zip(ours, theirs, strict=True):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        b = b.reshape(a.shape) if a.size == b.size else b
        error = max(error, float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))))
    return error
