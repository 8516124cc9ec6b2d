"""The session as the exporter reads it: every value at literal sizes as its components.

A declaration with literal sizes (`x: R^3`, `W: R^(2,3)`) binds one tensor
symbol, and a value computed from it (`softmax(theta)`, `sum(W @ x)`) is a
tensor formula (section 3a). The exporter prints SymPy components and guesses
shapes from declared arrays of component symbols, so it reads the session
through this view: each literal-size binding lowered to the component engine's
representation (x[0], W[0, 1], ...), exactly what the session held before
tensors were values, so an exported module is what it always was. A value at
a symbolic size (`x: R^n`) is left as it is, and its export is refused as before.

Each value is lowered once per export, when the exporter first reads it
(export_program reads every user name first, so in practice all at once).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gradlang.core.literal_sizes import literal, lowered


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
        shown = lowered(value) if literal(value) else value
        self._lowered[name] = (value, shown)
        return shown

    def __contains__(self, name) -> bool:
        return name in self._env

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)


class ComponentSession:
    """What the exporter uses of a session (env, user_names, time_limit), at literal sizes as components."""

    def __init__(self, session):
        self._session = session
        self.env = LoweredNames(session.env)

    @property
    def time_limit(self):
        return self._session.time_limit

    def user_names(self) -> dict:
        return {name: self.env[name] for name in self._session.user_names()}
