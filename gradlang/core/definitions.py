"""A user function as the session binds it: `f(x) = …` is its body, evaluated at each call.

Its own module, below the evaluator, so that what inspects bindings (tensor_lists'
walk into the functions an `at` calls) need not import the evaluator back.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.errors import Span
from gradlang.syntax import lowered as lo


@dataclass(frozen=True)
class FunctionDef:
    """A user function: its body is evaluated at each call (late binding)."""

    name: str
    params: tuple
    body: lo.Node
    span: Span
    source: str
