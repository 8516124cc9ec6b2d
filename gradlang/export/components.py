"""The session as the exporter reads it: declarations as their components, every value as evaluated once.

A declaration with literal sizes (`x: R^3`, `W: R^(2,3)`) binds one tensor
symbol, and a value computed from it (`softmax(theta)`, `sum(W @ x)`) is a
tensor formula (section 3a). The exporter guesses shapes from declared arrays
of component symbols (shapes.py), so a declaration, and a constant such as
ones(3), is read here as its components (x[0], W[0, 1], ...). A computed
formula is left as the session's one value: a binding's unit takes its
parameters from it (units.py) and is printed as that formula at every size
(formula.py), and a function's body that reads it is evaluated by the
tensor engine and its result lowered. Nothing is evaluated a second time by
components.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gradlang.expr.tensor.lower import literal, lowered
from gradlang.expr.tensor.nodes import Var


class LoweredNames(Mapping):
    """A read-only view of the session's bindings, each literal-size value as its components."""

    def __init__(self, env: Mapping):
        self._env = env
        self._lowered: dict = {}

    def __getitem__(self, name: str):
        value = self._env[name]
        cached = self._lowered.get(name)
        if cached is not None and cached[0] is value:
            return cached[1]
        shown = lowered(value) if literal(value) and _cheap(value) else value
        self._lowered[name] = (value, shown)
        return shown

    def __contains__(self, name) -> bool:
        return name in self._env

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)


def _cheap(value) -> bool:
    """A value whose components the exporter reads: a declaration (x: R^3 is x[0], x[1], x[2], whose shape
    shapes.py reads) or a constant (ones(3)). A computed formula (g = grad(loss, W1)) is read whole: an
    expression that uses it is evaluated by the tensor engine and its result lowered (units.py)."""
    return isinstance(value, Var) or not value.free_symbols


class ComponentSession:
    """What the exporter uses of a session (env, user_names, time_limit), at literal sizes as components."""

    def __init__(self, session):
        self._session = session
        self.env = LoweredNames(session.env)

    @property
    def time_limit(self):
        return self._session.time_limit

    def user_names(self) -> dict:
        """The user's names: a declaration as its components (shapes.py reads their shapes), a computed
        tensor formula as the session holds it (printed as that formula at every size: formula.py)."""
        return {name: self.env[name] for name in self._session.user_names()}
