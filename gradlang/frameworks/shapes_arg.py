"""Example arguments: --shapes 'x=3 params.W=2,3' read into nested dicts of arrays, and leaves named.

A shape is a comma-separated list of lengths (`3`, `2,3`), or `()` / `scalar`
for a scalar; a key path `params.online.W` is nested dictionaries, and its
top-level key is the function's parameter (or a keyword of the module's
forward). Values are drawn from a fixed seed in [-1, 1], so the same command
traces the same point. The text is split and checked here, never evaluated.
"""

from __future__ import annotations

import re

import numpy as np

from gradlang import limits
from gradlang.errors import LimitError
from gradlang.frameworks.program import TranslateError

PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SEED = 0
MAX_EXAMPLE_COMPONENTS = limits.MAX_SOURCE_CHARS // 25  # a float64 written back exactly takes up to 25 characters


def parse(text: str) -> dict:
    """'x=3 params.W=2,3' -> {'x': (3,), 'params.W': (2, 3)} in the order given."""
    shapes: dict = {}
    for item in text.replace(";", " ").split():
        path, equals, dims = item.partition("=")
        if not equals or not all(PART.match(p) for p in path.split(".")):
            raise TranslateError(f"--shapes: expected NAME=LENGTHS (as x=3 or params.W=2,3), not {item!r}")
        if path in shapes:
            raise TranslateError(f"--shapes: {path} is given twice")
        shapes[path] = _dims(item, dims)
    if not shapes:
        raise TranslateError("--shapes: no shapes given (as in --shapes 'x=3 params.W=2,3')")
    return shapes


def _dims(item: str, dims: str) -> tuple:
    if dims in ("()", "scalar"):
        return ()
    parts = dims.split(",")
    if not all(p.isascii() and p.isdigit() and 0 < int(p) <= 10_000 for p in parts):
        raise TranslateError(f"--shapes: {item!r}: lengths are positive integers separated by commas")
    return tuple(int(p) for p in parts)


def check_size(shapes: list, flag: str) -> None:
    """Refuse example arguments too large to write into the program, before the framework allocates them."""
    total = sum(int(np.prod(shape, dtype=np.float64)) for shape in shapes)
    if total > MAX_EXAMPLE_COMPONENTS:
        raise LimitError(f"{flag}: the example arguments have {total:,} components, above the limit of "
                         f"{MAX_EXAMPLE_COMPONENTS:,} (the traced point is written into the program, within "
                         f"gradlang's {limits.MAX_SOURCE_CHARS:,} characters): trace at smaller shapes")


def shapes_in(value) -> list:
    """The shapes of the arrays in nested dicts, lists and tuples (a number has shape ())."""
    if isinstance(value, dict):
        return [shape for item in value.values() for shape in shapes_in(item)]
    if isinstance(value, (list, tuple)):
        return [shape for item in value for shape in shapes_in(item)]
    return [tuple(getattr(value, "shape", ()) or ())]


def example(shapes: dict) -> dict:
    """Nested dicts of float64 arrays at the given shapes, keyed by the top-level names."""
    rng = np.random.default_rng(SEED)
    check_size(list(shapes.values()), "--shapes")
    tree: dict = {}
    for path, shape in shapes.items():
        *parents, leaf = path.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise TranslateError(f"--shapes: {path} is inside {part}, which has a shape of its own")
        node[leaf] = rng.uniform(-1.0, 1.0, size=shape)
    return tree


def gradlang_name(path: str, taken: set) -> str:
    """params.online.W -> params_online_W (with a number added if that name is taken)."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", path).strip("_") or "arg"
    if base[0].isdigit():
        base = f"a_{base}"
    name, n = base, 1
    while name in taken or _reserved(name):
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def _reserved(name: str) -> bool:
    """A keyword, a constant or a builtin of gradlang: a declaration must not shadow what the program calls."""
    from gradlang.core.builtins import CONSTANTS, lookup

    return name in ("at", "explain", "unfold") or name in CONSTANTS or lookup(name) is not None
