"""Golden files: compare rendered text with a stored copy; GRADLANG_UPDATE_GOLDEN=1 rewrites them.

A missing golden file fails: a test never writes its own expected output.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from rich.console import Console

from gradlang import Session
from gradlang.render.emit import Emitter

GOLDEN = Path(__file__).resolve().parent / "golden"


def transcript(source: str, fmt: str, width: int = 80) -> str:
    """What the CLI prints for a script in one format, at a fixed width, without colour."""
    out, err = io.StringIO(), io.StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False, markup=False, emoji=False)
    emitter = Emitter(fmt, out, err, transcript=True, console=console)
    for result in Session().iter_run(source, "lecture.grad"):
        emitter.result(result)
    return out.getvalue()


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("GRADLANG_UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with GRADLANG_UPDATE_GOLDEN=1 and review it"
    assert actual == path.read_text(encoding="utf-8"), f"output differs from {path} (GRADLANG_UPDATE_GOLDEN=1 to accept)"
