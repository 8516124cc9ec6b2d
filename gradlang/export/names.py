"""One table of Python identifiers per exported module: no two names can collide.

gradlang names are ASCII identifiers already, but an exported module shares
one namespace with things the user never wrote: the framework aliases (`np`,
`jnp`, `torch`, `tf`), the prelude's helpers (`_max`, `_stack`, `_t`), the
generated gradients (`grad_f`), the temporaries of common subexpressions, and
Python's keywords and builtins (a user function named `float` would break the
prelude, one named `lambda` would not parse). Mangling names one at a time,
as a local rule, cannot see a collision with another user name (`_a` and
`u_a`, or `np` and `np_`); a table that hands out each identifier once can.

Order of assignment, so that the names a user wrote survive whenever possible:
1. user names that clash with nothing keep their spelling;
2. the others get a variant (`float` -> `float_`, `_a` -> `u_a`), made unique;
3. generated names (`grad_f`) come last and yield to the user's.
"""

from __future__ import annotations

import builtins
import keyword
import re

ALIASES = {"jax", "jnp", "np", "torch", "tf", "functools", "math"}
_DEFINED = re.compile(r"^(?:def|class)\s+(\w+)|^import\s+(\w+)|^import\s+\S+\s+as\s+(\w+)|^(\w+)\s*=", re.MULTILINE)


def reserved_names(*module_texts: str) -> set[str]:
    """Every name a generated module may define or use besides the user's."""
    names = set(keyword.kwlist) | set(dir(builtins)) | ALIASES
    for text in module_texts:
        for match in _DEFINED.finditer(text):
            names.update(group for group in match.groups() if group)
    return names


class NameTable:
    """gradlang name (or a generated key) -> a Python identifier no other entry has."""

    def __init__(self, reserved: set[str]):
        self._reserved = set(reserved)
        self._taken = set(reserved)
        self._names: dict = {}

    def assign(self, user_names, generated: dict | None = None) -> None:
        """Give identifiers to the user's names, then to generated keys (key -> wanted spelling)."""
        user_names = list(dict.fromkeys(user_names))
        clean = [n for n in user_names if self._free(n)]
        for name in clean:
            self._claim(name, name)
        for name in user_names:
            if name not in self._names:
                self._claim(name, self._variant(name))
        for key, wanted in (generated or {}).items():
            self._claim(key, wanted)

    def __getitem__(self, key) -> str:
        return self._names[key]

    def renamed(self) -> list[tuple[str, str]]:
        """(gradlang name, identifier) for the user's names that had to change."""
        return [(k, v) for k, v in self._names.items() if isinstance(k, str) and k != v]

    def _free(self, name: str) -> bool:
        return name.isidentifier() and not name.startswith("_") and name not in self._taken

    def _variant(self, name: str) -> str:
        return "u" + name if name.startswith("_") else name + "_"

    def _claim(self, key, wanted: str) -> None:
        candidate = wanted
        while candidate in self._taken or candidate.startswith("_"):
            candidate = ("u" + candidate) if candidate.startswith("_") else candidate + "_"
        self._taken.add(candidate)
        self._names[key] = candidate
