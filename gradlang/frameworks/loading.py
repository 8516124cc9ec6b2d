"""Importing the user's MODULE:NAME (their folder first on sys.path) and the optional frameworks.

Importing the user's own module is the point of --from-jax and --from-torch:
their code runs as it runs in their training script. What goes wrong there
(no such module, no such name, their code raising) is a TranslateError of
one line, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys

from gradlang.frameworks.program import TranslateError

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
        raise TranslateError(f"{flag}: cannot import {module_name}: {error}") from None
    except Exception as error:  # noqa: BLE001 - the user's module failed while importing: say what it raised
        raise TranslateError(f"{flag}: importing {module_name} raised {type(error).__name__}: {error}") from None
    for part in name.split("."):
        if not hasattr(target, part):
            raise TranslateError(f"{flag}: {module_name} has no {name}")
        target = getattr(target, part)
    return target


def called(what: str, function, *args):
    """function(*args); an exception of the user's code becomes a one-line TranslateError."""
    try:
        return function(*args)
    except TranslateError:
        raise
    except Exception as error:  # noqa: BLE001 - the user's code (or the framework's tracer) refused
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise TranslateError(f"{what} raised {type(error).__name__}: {message}") from None
