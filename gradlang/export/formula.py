"""A binding's tensor formula as NumPy code, where the array reader (vectorised.py) cannot read its statement.

The session holds the binding's one value: a formula over declared tensors
whose sizes may be names (`jacobian(softmax(W @ x), x)` is
`(diag(s) - outer(s, s)) @ W` with `s = softmax(W @ x)`, `hessian(sum(x^3), x)`
is `3 diag(2 x)`). At a symbolic size it has no components to unroll, so it is
printed as gradlang computes its numbers (expr/tensor/numbers.py): one line per
node of its DAG, each tensor operation as its NumPy spelling, and the few
helpers NumPy has no single function for written into the module (`helpers()`:
the source of numbers.py's own). Its sizes are read from the arguments'
shapes. The other targets, and a formula using a helper not written here, are
refused in gradlang's words.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap

import sympy as sp

from gradlang.errors import ShapeError
from gradlang.expr.masking import mask_untaken
from gradlang.expr.numeric import dag_cse, function_source
from gradlang.expr.tensor.nodes import Var, shape_of
from gradlang.expr.tensor.shapes import is_size
from gradlang.export.printers import refusal

# NumPy has no single function for these: each is written into the module as the source of numbers.py's
# helper of that name (logdet is not: its helper reads gradlang's own errors)
_WRITTEN = ("_gl_softmax_vector", "_gl_logsumexp_vector", "_gl_softmax_axis", "_gl_logsumexp_axis",
            "_gl_onehot_vector", "_gl_max_shares_vector", "_gl_max_shares_axis", "_gl_cofactor", "_gl_sum")


@functools.cache
def helpers() -> str:
    """The helpers' text for the module, read on first use (the page never asks)."""
    return "".join("\n\n\n" + _helper_source(name) for name in _WRITTEN) + "\n"


def _helper_source(name: str) -> str:
    """The helper's own Python source without its docstring, renamed to the name the generated lines call:
    one definition, so the exported module computes what gradlang computes."""
    from gradlang.expr import numeric
    from gradlang.expr.tensor import numbers

    function = {**numbers.HELPERS, "_gl_sum": numeric._sum}[name]
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    if isinstance(definition.body[0], ast.Expr) and isinstance(getattr(definition.body[0], "value", None), ast.Constant):
        definition.body = definition.body[1:]
    definition.name = name
    return ast.unparse(definition)
_NAME = re.compile(r"\b(_a\d+|_t\d+|numpy\.|_gl_\w+)")


def formula_body(value, params: list, target: str, table) -> str:
    """The lines of a function computing `value` from its parameters (gradlang name, shape), or a refusal."""
    if target != "numpy":
        raise ShapeError(refusal(value, target).replace("the export writes", f"--export {target} writes")
                         + "; --export numpy writes it at any size")
    symbols = [s for s in sorted(value.free_symbols, key=lambda s: s.name) if not is_size(s)]
    sizes = _sizes(value, params)
    arguments, assignments, outputs = dag_cse(mask_untaken((value,)), tuple(symbols + list(sizes)))
    names = {str(a): table[s.name] for a, s in zip(arguments, symbols)}
    names.update({str(a): read for a, read in zip(arguments[len(symbols):], sizes.values())})
    source = function_source(arguments, assignments, outputs).split("\n")[1:-1]
    lines = [_renamed(line, names, value) for line in source]
    result = lines[-1].removeprefix("    return [").removesuffix("]")
    shape = ", ".join(_dim(d, sizes) for d in shape_of(value))
    returned = f"np.broadcast_to({result}, ({shape},)).copy()" if shape else f"np.asarray({result}, dtype=float)"
    return _check(params, table) + "".join(f"{line}\n" for line in lines[:-1]) + f"    return {returned}\n"


def _sizes(value, params: list) -> dict:
    """Each size symbol of the formula -> the code that reads it from an argument's shape (`x.shape[0]`)."""
    wanted = [s for s in sorted(value.free_symbols | _shape_symbols(value), key=lambda s: s.name) if is_size(s)]
    found = {}
    for size in wanted:
        where = next(((p, k) for p, shape in params for k, d in enumerate(shape) if d == size), None)
        if where is None:
            raise ShapeError(refusal(value, "numpy") + f" (no argument has the size {size})")
        found[size] = f"{where[0]}.shape[{where[1]}]"
    return found


def _shape_symbols(value) -> set:
    return {d for v in value.atoms(Var) for d in v.shape if isinstance(d, sp.Symbol)}


def _renamed(line: str, names: dict, value) -> str:
    """A line of numbers.py's code with the module's names: arguments, temporaries, np, written helpers."""

    def rename(match):
        word = match.group(1)
        if word == "numpy.":
            return "np."
        if word.startswith("_gl_"):
            if word not in _WRITTEN:
                raise ShapeError(refusal(value, "numpy"))
            return word
        return names.get(word, "_gl_f" + word[2:] if word.startswith("_t") else word)

    return _NAME.sub(rename, line)


def _dim(d, sizes: dict) -> str:
    return str(int(d)) if getattr(d, "is_Integer", False) else sizes[d]


def _check(params: list, table) -> str:
    """One call of _gl_check_shapes: each array argument's shape, sizes shared by their names."""
    arrays = [(table[p], shape) for p, shape in params if shape]
    if not arrays:
        return ""
    patterns = ", ".join(f"{p!r}: ({', '.join(str(int(d)) if getattr(d, 'is_Integer', False) else repr(str(d)) for d in shape)},)"
                         for p, shape in arrays)
    given = ", ".join(f"{p!r}: {p}" for p, _ in arrays)
    return f"    _gl_check_shapes({{{given}}}, {{{patterns}}}, {{}})\n"
