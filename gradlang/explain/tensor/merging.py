"""Steps of a long tensor pass said together: a line of an unnamed node whose adjoint the next line writes out
whole (∂L/∂relu(h) = ∂L/∂z @ W above ∂L/∂h = (∂L/∂z @ W)*where(h > 0, 1, 0)) is merged into that line, which
says both rules, `[matmul, relu: ū = ȳ ⊙ f′(u)]`: the reader reads the step inside the line below it."""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.explain.formula import Math
from gradlang.expr.walk import dag_has


def merged(lines: list, variables: tuple, names) -> list:
    """The lines without a line of an unnamed node whose adjoint the next line writes out whole (∂L/∂relu(h) =
    ∂L/∂z @ W above ∂L/∂h = (∂L/∂z @ W)*where(h > 0, 1, 0)): the next line says both rules, `[matmul, relu: …]`."""
    kept: list = []
    for node, line in lines:
        if kept and kept[-1][0] is not None:
            above_node, above = kept[-1]
            if above_node not in variables and above_node not in names and _writes_out(line, above):
                kept[-1] = (None, above)  # merged into this line
                line = replace(line, rule=(_joined(above.rule, line.rule),))
        kept.append((node, line))
    return [(node, line) for node, line in kept if node is not None]


def _writes_out(line, above) -> bool:
    """Does the line's first right side hold the line above's last right side whole?"""
    said = [p for p in above.rhs[-1] if isinstance(p, sp.Basic)]
    holds = [p for p in line.rhs[0] if isinstance(p, sp.Basic)]
    return len(said) == 1 and bool(holds) and dag_has(holds, said[0])


def _joined(above: tuple, rule: tuple) -> Math:
    """Two steps' rules as one: the name of the one above, then the line's own rule."""
    first, second = above[0], rule[0]
    head = first.plain.split(":")[0].split(";")[0]
    latex_head = first.latex.split(":")[0].split(r"\);")[0]
    return Math(f"{head}, {second.plain}", rf"{latex_head},\ {second.latex}")
