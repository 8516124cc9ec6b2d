"""NumPy on first real use, so a run that never needs numbers never pays its import.

`np.ndarray`, `np.bool_`, `np.floating` and `np.integer` are asked for in
isinstance checks on every value; until NumPy has been imported no value can
be an instance of them, so they stand for a class nothing instantiates. Any
other attribute imports NumPy. Start-up matters: most runs are symbolic.

Where NumPy cannot be had at all (the browser page, docs/web.md), what needs it
(a list of points, linspace) is a gradlang error saying so, not a traceback;
numbers at one point come from expr/pure_numeric.py instead.
"""

from __future__ import annotations

import importlib
import sys

_TYPES = ("ndarray", "bool_", "floating", "integer")


class _NotYetImported:
    """No object is an instance of this: NumPy types before NumPy is loaded."""


class _LazyNumpy:
    def __getattr__(self, name: str):
        """NumPy's attribute; once NumPy is imported it is kept on the proxy, so a later `np.ndarray` is an
        ordinary attribute, not this call (isinstance checks run many times a statement)."""
        module = sys.modules.get("numpy")
        if module is None:
            if name in _TYPES:
                return _NotYetImported
            module = _import_numpy()
        value = getattr(module, name)
        setattr(self, name, value)
        return value


_HAS_NUMPY: list = []


def has_numpy() -> bool:
    """Whether NumPy can be imported (not in the browser page); imports it, so ask only where it is needed."""
    if not _HAS_NUMPY:
        try:
            import numpy  # noqa: F401
        except ImportError:
            _HAS_NUMPY.append(False)
        else:
            _HAS_NUMPY.append(True)
    return _HAS_NUMPY[0]


def _import_numpy():
    try:
        import numpy
    except ImportError:
        from gradlang.errors import ValueError

        raise ValueError("this needs NumPy (lists of points, linspace), which is not available here "
                         "(the browser page has none); give one point at a time") from None
    return numpy


np = _LazyNumpy()


class Deferred:
    """`from module import name`, done when the name is first used, so start-up never loads a module that a
    program does not reach (issue #41: `1 + 1` loads no tensor engine).

    The rule is NumPy's above: an object of the module's classes exists only once the module is loaded, so
    until then `isinstance(value, Deferred)` is false without importing it. A call, or any attribute, imports
    the module. The name is read from the module at each use, as `module.name` is (so a test that patches
    it is seen). What the proxy is not: a class to subclass, or a type to hand to an API that tests
    `isinstance(t, type)` (SymPy's atoms, has, replace): use `resolved()` there, or import the module.
    tests/test_architecture.py reads each `deferred("gradlang…")` as an import (layers and cycles)."""

    __slots__ = ("_module", "_name", "_loaded")

    def __init__(self, module: str, name: str):
        self._module, self._name, self._loaded = module, name, None

    def resolved(self):
        """The object itself, its module imported now if it was not."""
        if self._loaded is None:
            self._loaded = importlib.import_module(self._module)
        return getattr(self._loaded, self._name)

    def _if_loaded(self):
        """The object if its module is loaded (and done defining it), else None; nothing is imported."""
        if self._loaded is None:
            self._loaded = sys.modules.get(self._module)
            if self._loaded is None:
                return None
        return getattr(self._loaded, self._name, None)

    def __call__(self, *args, **kwargs):
        module = self._loaded  # once loaded, one lookup: a statement run again in a loop calls some per run
        if module is None:
            return self.resolved()(*args, **kwargs)
        return getattr(module, self._name)(*args, **kwargs)

    def __getattr__(self, attribute: str):
        return getattr(self.resolved(), attribute)

    def __instancecheck__(self, value) -> bool:
        target = self._if_loaded()
        return target is not None and isinstance(value, target)

    def __subclasscheck__(self, cls) -> bool:
        target = self._if_loaded()
        return target is not None and issubclass(cls, target)

    def __repr__(self) -> str:
        return f"deferred({self._module!r}, {self._name!r})"


class DeferredModule:
    """A module whose names are `Deferred`: `t = deferred_module("…nodes")`, then `t.Var` and `t.shape_of(x)`
    as with `from … import nodes as t`, the module imported on the first call or attribute of a name."""

    def __init__(self, module: str):
        self._module = module

    def __getattr__(self, name: str) -> Deferred:
        if name.startswith("__"):
            raise AttributeError(name)
        value = Deferred(self._module, name)
        setattr(self, name, value)
        return value

    def loaded(self) -> bool:
        """Whether the module has been imported (by anyone)."""
        return self._module in sys.modules

    def names(self, *names: str) -> tuple:
        """`A, B = m.names("A", "B")`, as `from m import A, B` would bind them."""
        return tuple(getattr(self, name) for name in names)


def deferred(module: str, name: str) -> Deferred:
    return Deferred(module, name)


def deferred_module(module: str) -> DeferredModule:
    return DeferredModule(module)
