"""The builtin table: the `Call` a builtin receives, its `Builtin` record, and registration.

Kept apart from builtins.py so the modules that register more builtins
(builtins_vectors, builtins_axes, builtins_tools, loading, tensor_values)
import the table, not the module that imports them: core/ has no import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from gradlang.core.services import Services
from gradlang.errors import NameError, ValueError
from gradlang.expr.source import to_source
from gradlang.expr.values import elements, is_condition, to_symbolic
from gradlang.lazy import np


@dataclass
class Call:
    """One call of a builtin: argument values, their syntax nodes, and where it stands."""

    name: str
    args: list
    nodes: list
    span: object
    services: Services  # what the builtin may ask of the statement (core/services.py)
    definitions: tuple = ()  # source of the user functions unfolded in the arguments


@dataclass(frozen=True)
class Builtin:
    name: str
    function: Callable
    min_args: int
    max_args: int | None
    doc: str
    example: str
    group: str
    core: bool = False
    at: Callable | None = None  # f(call, pairs, batch): `name(…) at x = v` hands the point to the builtin


TABLE: dict[str, Builtin] = {}
CONSTANTS = {"pi": sp.pi, "inf": sp.oo, "nan": sp.nan, "true": sp.true, "false": sp.false}  # a decided condition prints as true/false
CORE = ("stop_gradient", "sg", "diff", "grad", "jacobian", "hessian", "unstopped", "blocked")


def builtin(name, min_args, max_args, doc, example, group, aliases=(), conditions=(), at=None):
    """Register the decorated function under `name` (and its aliases); arguments are numbers,
    except at the `conditions` positions: a condition elsewhere, even in a list, is refused here, once.

    A builtin given `at` consumes the point of `name(…) at x = v` itself (gradcheck checks a
    gradient there) instead of having its value substituted."""

    def register(function):
        checked = _numbers_only(function, conditions)  # one function for all names: help finds aliases by it
        checked_at = _numbers_only(at, conditions) if at is not None else None
        for each in (name, *aliases):
            TABLE[each] = Builtin(each, checked, min_args, max_args, doc, example, group, core=each in CORE, at=checked_at)
        return function

    return register


def _numbers_only(function, conditions):
    def apply(call: Call, *point):
        for value, node in (a for i, a in enumerate(zip(call.args, call.nodes)) if i not in conditions):
            _no_condition(call, value, node)
        return function(call, *point)

    return apply


def _no_condition(call: Call, value, node=None) -> None:
    """Numbers only: a condition, or a list holding one ([1 < 2, 3]), is refused by name."""
    if not isinstance(value, np.ndarray) and any(is_condition(e) for e in elements(to_symbolic(value))):
        raise ValueError(f"{call.name} takes numbers, not a condition").located(_span(node))


def _span(node):
    return node.span if node is not None else None


def _plain(value) -> str:
    return to_source(value)


def lookup(name: str) -> Builtin | None:
    return TABLE.get(name)


def check_arity(entry: Builtin, count: int) -> None:
    if count < entry.min_args or (entry.max_args is not None and count > entry.max_args):
        if entry.max_args is None:
            wanted = f"at least {entry.min_args}"
        elif entry.min_args == entry.max_args:
            wanted = str(entry.min_args)
        else:
            wanted = f"{entry.min_args} or {entry.max_args}"
        plural = "s" if wanted != "1" else ""
        raise NameError(f"{entry.name} takes {wanted} argument{plural}, got {count}")
