"""The component engine's reading of a name bound at literal sizes: its *twin*.

`g = grad(L, x)` with `x: R^3` binds the tensor engine's formula (`2*x`), the
value every printer shows. Numbers, explain and export at literal sizes are
the component engine's (docs/architecture.md, "Tensor values"), and they
must be its numbers to the last digit, IEEE rules and exactness included; a
formula lowered to components is the same value but not always the same
float (0·inf where the component engine had a structural 0). So the
statement that bound the name is kept, with the bindings it read, and
evaluated again by components when, and only when, a number or a component
derivation asks for it: the twin costs nothing for a program that never
asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from gradlang.expr.tensor.lower import literal
from gradlang.expr.tensor.listed import TensorList

_UNSET = object()


@dataclass
class Twin:
    """How a name bound at literal sizes reads in the component engine: its statement, evaluated on demand."""

    of: object  # the value it is the twin of: a name rebound since (a declaration, a definition) has none
    body: object  # the assignment's expression tree
    env: dict  # the bindings the statement read (a shallow copy: values never change in place)
    twins: dict  # the twins of those bindings
    _value: object = field(default=_UNSET, repr=False)

    def value(self):
        """The value by components; the statement's own errors are raised again, once each time."""
        if self._value is _UNSET:
            from gradlang.core.evaluate import Evaluator

            self._value = Evaluator(self.env, [], by_components=True, twins=self.twins).evaluate(self.body)
        return self._value


def of(twins: dict, name: str, value):
    """The twin of a name bound to `value`, or None (never bound at literal sizes, or rebound since)."""
    twin = twins.get(name)
    return twin if twin is not None and twin.of is value else None


def bind(twins: dict, name: str, value, body, env: dict) -> None:
    """Keep (or drop) the twin of a name just bound to `value` by the statement `body` in `env`."""
    entries = list(value) if isinstance(value, (sp.NDimArray, sp.MatrixBase)) else [value]
    if any(literal(e) for e in entries) and not isinstance(value, TensorList):  # a list lowers entry by entry
        twins[name] = Twin(value, body, dict(env), dict(twins))
    else:
        twins.pop(name, None)
