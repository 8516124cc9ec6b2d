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
