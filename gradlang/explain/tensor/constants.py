"""Constant arrays in a tensor derivation shown by a name and a shape, never by their entries.

An importer freezes what a trace computed from data into constant arrays: consistency distillation's noise
scales, a schedule indexed by a random draw, stretched to the batch's `(b, c, h, w)`
(`noise*[[[[40.78…, 40.78…], …]]]]`, 24 numbers of 18 digits), PPG's mask of the actions taken. Written out,
each fills a line of its own wherever it occurs, and the derivation reads as numbers. Such an array is data to
the derivation: it is named once, `k1`, `k2`, … (a letter the formula does not use), and the let block says
its shape (`k1, k2 = constant arrays of shape (3, 2, 2, 2)`), one let line per shape. A short list the user wrote
(`W @ [1, 2]`, `[1.0, 1.0, 1.0]`) stays as written.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.literals import Literal
from gradlang.expr.tensor.nodes import Var
from gradlang.explain.formula import Let, math

MOST_ENTRIES = 8  # a constant array of more entries than this is shown by a name


def constant_names(lines: list, taken: set) -> tuple:
    """(constant array, name) for each array of numbers of more than MOST_ENTRIES entries in the lines (each
    a list of values, as reverse_pass._measured gives them), in the order met, each named once."""
    used, found = set(taken), {}
    for line in lines:
        for value in line:
            for node in _literals(value):
                if node not in found:
                    name = next(f"k{n}" for n in range(1, len(used) + 2) if f"k{n}" not in used)
                    found[node] = Var(name, node.shape)
                    used.add(name)
    return tuple(found.items())


def _literals(value) -> list:
    """The constant arrays of numbers inside a value worth a name, each once, in preorder. A part met again is
    not walked again: a traced loss shares its parts, and written out as a tree it can be exponentially larger."""
    if not isinstance(value, sp.Basic):
        return []
    found, seen, stack = [], set(), [value]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            found += [node] if _worth_a_name(node) else []
            stack.extend(reversed(node.args))
    return found


def _worth_a_name(node) -> bool:
    """An array of numbers of more than MOST_ENTRIES entries: data to the derivation, shown by a name."""
    return isinstance(node, Literal) and len(node.entries) > MOST_ENTRIES and all(e.is_number for e in node.entries)


def holds_constant_array(value) -> bool:
    """Does the value hold a constant array worth a name? One walk over its distinct nodes (a title's loss
    may be a DAG far larger as a tree)."""
    from gradlang.expr.walk import dag_nodes

    return isinstance(value, sp.Basic) and any(_worth_a_name(node) for node in dag_nodes([value]))


def constant_lets(named: tuple) -> tuple:
    """One let line per shape: the names of the constants of that shape, and the shape."""
    by_shape: dict = {}
    for literal, name in named:
        by_shape.setdefault(tuple(int(n) for n in literal.shape), []).append(name)
    return tuple(Let(_listed(names), (_said(shape, len(names)),)) for shape, names in by_shape.items())


def _listed(names: list) -> tuple:
    """The names of one let: all of them, or a run k1, k2, …, k15 as its first two and its last."""
    numbers = [int(name.name[1:]) for name in names]
    if len(names) > 4 and numbers == list(range(numbers[0], numbers[0] + len(names))):
        return (names[0], names[1], math("…", r"\ldots"), names[-1])
    return tuple(names)


def _said(shape: tuple, count: int):
    """`a constant array of shape (3, 2, 2, 2)`, `constant arrays of length 9`, in both spellings."""
    what = "a constant array" if count == 1 else "constant arrays"
    size = f"of length {shape[0]}" if len(shape) == 1 else f"of shape ({', '.join(map(str, shape))})"
    return math(f"{what} {size}", rf"\text{{{what} {size}}}")
