"""The component engine as a test oracle: a Session whose declared tensors of literal size are their components.

gradlang evaluates a statement once, into one tensor formula (docs/architecture.md,
"Tensor values"). The component engine stays for what is asked by components
(x[0], lists of scalars), and as an independent oracle: declare `x: R^3` as
the array [x[0], x[1], x[2]] of scalar symbols and every operation afterwards
is the component engine's builtin on arrays of scalars, derived by the DAG
rule table (derive/dag/). The tensor engine is never entered, so comparing the
two compares two implementations, not one with itself.
"""

from __future__ import annotations

from gradlang import Session
from gradlang.expr.tensor.lower import literal, lowered
from gradlang.expr.tensor.nodes import Var


class ComponentSession(Session):
    """A Session in which `x: R^3` binds x to its component symbols instead of the tensor symbol x."""

    def _declaration(self, statement, source: str) -> None:
        super()._declaration(statement, source)
        for node in statement.names:
            value = self.env.get(node.name)
            if isinstance(value, Var) and literal(value):
                self.env[node.name] = lowered(value)
