"""`ones`, `zeros` and `components` (sections 3b and 6): builtins of the tensor engine registered without it.

Their entries are made at start-up, in the table's order (the lexer and :help read it), while the engine
(expr/tensor/nodes.py) is imported by the first call (issue #41: `1 + 1` loads none of it).
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.core.builtin_table import builtin
from gradlang.errors import LimitError, ShapeError
from gradlang.expr.engine import nodes


@builtin("components", 1, 1, "the entries of a vector or matrix as scalar expressions (at literal sizes)",
         "components(grad(sum(x^2), x) at n = 3)", "core")
def _components_builtin(call):
    """At a literal size a value already is its components; a formula at a symbolic size is refused by
    core/tensor_values.py's TABLE."""
    return call.args[0]


def _filled(node):
    """ones(3), zeros(2, 3): the node ones(n) is at a symbolic size, bounded as a declared tensor is."""

    def apply(call):
        sizes = []
        for size in call.args:
            if not (isinstance(size, sp.Integer) and size >= 1):
                raise ShapeError("a size must be a positive integer or a size name")
            sizes.append(size)
        count = 1
        for size in sizes:
            count *= int(size)
        if count > limits.max_tensor_elements():
            raise LimitError(f"{count} components is above the limit of {limits.max_tensor_elements()}")
        return node(*sizes)

    return apply


builtin("ones", 1, limits.MAX_RANK, "a tensor of ones: ones(n), ones(m, n), ones(b, t, d)", "ones(3)",
        "vector")(_filled(nodes.Ones))
builtin("zeros", 1, limits.MAX_RANK, "a tensor of zeros: zeros(n), zeros(m, n), zeros(b, t, d)", "zeros(3)",
        "vector")(_filled(nodes.Zeros))
