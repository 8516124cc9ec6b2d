"""The user's line of an exported PyTorch node: the stop's own line, also inside helpers and sub-modules.

torch.export records a node's stack trace only through frames named
`forward` (its tracer's `_record_forward_stack_traces_only`), so a
`.detach()` inside a helper method, or a plain function the forward calls,
was cited at the forward's line that called it. While exporting, every frame
from the first `forward` on is kept (`every_frame`), and a node's place is
the innermost frame in the user's own files: not torch's, not gradlang's,
not the standard library's or an installed package's (unless nothing else
is left). A `with torch.no_grad():` region is cited at its `with` line (or
the decorator of a `@torch.no_grad()` function), found by reading the
user's file with Python's `ast` (never run), since the region's node carries
no stack of its own.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import sysconfig
from contextlib import contextmanager

from gradlang.frameworks.loading import framework
from gradlang.frameworks.program import Where, shown_path, source_line

FRAME = re.compile(r'File "([^"]+)", line (\d+)')
NO_GRAD = ("no_grad", "inference_mode", "set_grad_enabled")


@contextmanager
def every_frame(torch):
    """While exporting, a node's stack trace keeps every frame, not only those named forward."""
    tracer = getattr(getattr(torch.fx, "proxy", None), "TracerBase", None)
    original = getattr(tracer, "_filter_traceback_frames", None)
    if original is None:
        yield
        return

    def keep_every_frame(self, summary):
        forward_only = getattr(self, "_record_forward_stack_traces_only", False)
        self._record_forward_stack_traces_only = False
        try:
            return original(self, summary)
        finally:
            self._record_forward_stack_traces_only = forward_only

    tracer._filter_traceback_frames = keep_every_frame
    try:
        yield
    finally:
        tracer._filter_traceback_frames = original


def frames(node) -> list:
    """The user's frames of a node's stack trace, outermost first: (file, line)."""
    found = [(f, int(n)) for f, n in FRAME.findall(node.meta.get("stack_trace") or "")]
    found = [(f, n) for f, n in found if not _is_torch(f) and not _is_ours(f)]
    mine = [(f, n) for f, n in found if not _is_library(f)]
    return mine or found


def where(node) -> Where:
    """The user's file and line of a node: the innermost of its user's frames."""
    mine = frames(node)
    return _at(*mine[-1]) if mine else Where(note="no source line recorded")


def own_line(node) -> str:
    """The text of the user's innermost line for a node ("" when none is recorded): how the source wrote it."""
    mine = frames(node)
    return _raw_line(*mine[-1]).strip() if mine else ""


def region_where(node) -> Where:
    """Where a no_grad region that computed `node` starts: the innermost `with torch.no_grad():` (or decorated
    function) around one of its frames; the node's own line when none is found."""
    for file, line in reversed(frames(node)):
        start = _region_start(file, line)
        if start is not None:
            return _at(file, start)
    return where(node)


def _at(file: str, line: int) -> Where:
    text = source_line(file, line)
    raw = _raw_line(file, line)
    indent = len(raw) - len(raw.lstrip()) + 1 if raw else 1
    return Where(shown_path(file), line, indent, indent + len(text) if text else 2)


def _region_start(file: str, line: int):
    """The line of the innermost no_grad `with` (or no_grad decorator) whose body holds `line`, or None."""
    best = None
    for start, first, last in _regions(os.path.realpath(file)):
        if first <= line <= last and (best is None or start > best):
            best = start
    return best


@functools.lru_cache(maxsize=64)
def _regions(file: str) -> tuple:
    """(line of the with or decorator, first line of the body, last line) of each no_grad region in the file."""
    try:
        with open(file, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_no_grad(i.context_expr) for i in node.items):
            found.append((node.lineno, node.body[0].lineno, node.end_lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            marks = [d for d in node.decorator_list if _is_no_grad(d)]
            if marks:
                found.append((marks[0].lineno, node.body[0].lineno, node.end_lineno))
    return tuple(found)


def _is_no_grad(expr) -> bool:
    """torch.no_grad(), no_grad(), torch.inference_mode(), torch.set_grad_enabled(False) (by the called name)."""
    call = expr.func if isinstance(expr, ast.Call) else expr
    name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "")
    return name in NO_GRAD


def _is_torch(file: str) -> bool:
    """A frame of PyTorch itself (its nn.Module call, a functional): found by torch's own folder, not by a
    `/torch/` in the path, which a user's project folder may hold too."""
    return os.path.realpath(file).startswith(_torch_folder())


@functools.lru_cache(maxsize=1)
def _torch_folder() -> str:
    return os.path.realpath(os.path.dirname(framework("torch").__file__)) + os.sep


def _is_ours(file: str) -> bool:
    """A frame of gradlang itself (the wrapper around a function): never the user's line."""
    return os.path.realpath(file).startswith(os.path.realpath(os.path.dirname(os.path.dirname(__file__))) + os.sep)


@functools.lru_cache(maxsize=1)
def _libraries() -> tuple:
    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths |= {os.path.dirname(os.__file__)}
    return tuple(os.path.realpath(p) + os.sep for p in paths if p)


def _is_library(file: str) -> bool:
    """Python's own files and installed packages (contextlib's, a library's forward): not the user's line."""
    path = os.path.realpath(file)
    return any(path.startswith(lib) for lib in _libraries())


def _raw_line(file: str, line: int) -> str:
    try:
        with open(file, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    return lines[line - 1] if 1 <= line <= len(lines) else ""
