"""NumPy on first real use, so a run that never needs numbers never pays its import.

`np.ndarray`, `np.bool_`, `np.floating` and `np.integer` are asked for in
isinstance checks on every value; until NumPy has been imported no value can
be an instance of them, so they stand for a class nothing instantiates. Any
other attribute imports NumPy. Start-up matters: most runs are symbolic.
"""

from __future__ import annotations

import sys

_TYPES = ("ndarray", "bool_", "floating", "integer")


class _NotYetImported:
    """No object is an instance of this: NumPy types before NumPy is loaded."""


class _LazyNumpy:
    def __getattr__(self, name: str):
        module = sys.modules.get("numpy")
        if module is None:
            if name in _TYPES:
                return _NotYetImported
            import numpy as module
        return getattr(module, name)


np = _LazyNumpy()
