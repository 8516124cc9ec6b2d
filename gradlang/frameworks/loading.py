"""Importing the user's MODULE:NAME (their folder first on sys.path) and the optional frameworks.

Importing the user's own module is the point of --from-jax and --from-torch:
their code runs as it runs in their training script. What goes wrong there
(no such module, no such name, their code raising) is a TranslateError of
one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import traceback

from gradlang.frameworks.program import TranslateError, Where, inert, placed, shown_path

EXTRAS = {"jax": ("jax", "JAX"), "torch": ("torch", "PyTorch")}


def framework(name: str):
    """The framework's module, or a TranslateError naming the extra to install."""
    module, label = EXTRAS[name]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise TranslateError(f"--from-{name} needs {label}, which is not installed: "
                             f"pip install '.[{name}]' (or pip install 'gradlang[{name}]')") from None


def split(spec: str, flag: str) -> tuple[str, str]:
    """MODULE:NAME -> (module, name); anything else is a TranslateError."""
    module, colon, name = spec.partition(":")
    if not colon or not module or not name.replace(".", "").replace("_", "").isalnum():
        raise TranslateError(f"{flag} takes MODULE:NAME (as in byol:loss), not {spec!r}")
    return module, name


def load(spec: str, flag: str):
    """The object NAME of MODULE (a dotted NAME reaches into the module's objects)."""
    module_name, name = split(spec, flag)
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        target = importlib.import_module(module_name)
    except ImportError as error:
        raise TranslateError(f"{flag}: cannot import {module_name}: {inert(error)}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the user's module raised or exited while importing
        raise refused(f"{flag}: importing {module_name}", error) from None
    for part in name.split("."):
        if not hasattr(target, part):
            raise TranslateError(f"{flag}: {module_name} has no {name}")
        target = getattr(target, part)
    return target


def called(what: str, function, *args):
    """function(*args); an exception or exit of the user's code becomes a one-line TranslateError at their line."""
    try:
        return function(*args)
    except (TranslateError, KeyboardInterrupt):
        raise
    except BaseException as error:  # noqa: BLE001 - the user's code (or the framework's tracer) refused, or exited
        raise refused(what, error) from None


def refused(what: str, error: BaseException) -> TranslateError:
    """`what raised Kind: first line of its message`, placed at the innermost line of the user's own files."""
    text = str(error).strip()
    message = f"{what} raised {type(error).__name__}" + (f": {inert(text.splitlines()[0])}" if text else "")
    return placed(message, _users_frame(error))


def _users_frame(error: BaseException) -> Where | None:
    """The innermost frame of the traceback in a file of the user's folder (not Python's, not a library's)."""
    here = os.path.realpath(os.getcwd()) + os.sep
    libraries = {os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.__file__))}
    libraries.add(os.path.realpath(os.path.dirname(os.path.dirname(__file__))) + os.sep)
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = os.path.realpath(frame.filename) if not frame.filename.startswith("<") else ""
        if path.startswith(here) and not any(path.startswith(lib) for lib in libraries):
            column = (getattr(frame, "colno", None) or 0) + 1
            end = getattr(frame, "end_colno", None) if getattr(frame, "end_lineno", None) == frame.lineno else None
            return Where(shown_path(frame.filename), frame.lineno, column, (end or column) + 1 if end else column + 1)
    return None


@contextlib.contextmanager
def fenced(torch, seed: int):
    """The user's code runs with its standard output sent to standard error (it must not forge what gradlang
    prints, such as a --json record) and with every random generator it may draw from at a fixed seed:
    Python's `random`, NumPy's global one (an --example-args function's np.random.randn) and, for PyTorch,
    torch's (a module's initial weights, a draw in its forward). The traced point is the same on every run;
    the generators' states are restored after."""
    import random

    import numpy as np

    with contextlib.redirect_stdout(sys.stderr), contextlib.ExitStack() as stack:
        state, numpy_state = random.getstate(), np.random.get_state()
        stack.callback(np.random.set_state, numpy_state)
        stack.callback(random.setstate, state)
        random.seed(seed)
        np.random.seed(seed)
        if torch is not None:
            stack.enter_context(torch.random.fork_rng(devices=[]))
            torch.manual_seed(seed)
        yield
