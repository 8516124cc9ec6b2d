"""gradlang: symbolic derivatives with stop_gradient as a first-class builtin.

    from gradlang import Session
    Session().eval("diff(x * stop_gradient(x), x)")   # stop_gradient(x)
"""

from gradlang.errors import (
    DiffError,
    GradlangError,
    InternalError,
    LimitError,
    NameError,
    ShapeError,
    SyntaxError,
    ValueError,
)
from gradlang.core.session import Result, Session
from gradlang import render  # noqa: F401 - registers the printers behind Result.text and Result.latex

__version__ = "0.1.0"



def load_ipython_extension(ipython):
    """`%load_ext gradlang`: the %%gradlang cell magic and %gradlang line magic."""
    from gradlang.shell.notebook import load_ipython_extension as load

    load(ipython)


# `from gradlang import *` must not shadow Python's SyntaxError, NameError and
# ValueError with gradlang's (which are not their subclasses): those three are
# reached as gradlang.SyntaxError etc., or caught together as GradlangError.
__all__ = [
    "Session",
    "Result",
    "GradlangError",
    "ShapeError",
    "DiffError",
    "LimitError",
    "InternalError",
    "__version__",
]
