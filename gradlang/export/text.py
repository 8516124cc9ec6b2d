"""A unit (units.py) as Python source: signature, checks on entry, body, and its gradient.

The body of every branch is split into common subexpressions (`_gl_t0 = …`)
and printed by the target's printer (printers.py). Every array argument's
shape is checked on entry, positional or keyword, since the body was unrolled
for one shape; an index argument is checked to be an integer in range, as
gradlang's `v[i]` requires.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.cse import named_subexpressions
from gradlang.export.check import comment
from gradlang.export.printers import PRINTERS
from gradlang.export.units import Index, Unit

_TEMP = "_gl_t"


def unit_text(unit: Unit, target: str, table) -> str:
    """The gradlang source as a comment, the function, and `grad_<name>` for a scalar one."""
    name = table[unit.name]
    params = [(table[p], kind) for p, kind in unit.params]
    keywords = [(table[k], shape) for k, shape in unit.keywords]
    printer = PRINTERS[target]({s: table[n] + suffix for s, (n, suffix) in unit.symbols.items()})
    described = ", ".join(f"{p}: {describe(k)}" for p, k in params) or "no parameters"
    text = f"{comment(unit.source)}\ndef {name}({_signature(params, keywords)}):\n"
    text += f'    """{name} from gradlang ({described})."""\n'
    text += _checks(params + [(k, shape) for k, shape in keywords if shape]) + _branches(unit, params, printer)
    grad = table[("grad", unit.name)]
    return text + _grad_function(name, grad, params, keywords, target, unit.shape)


def _checks(arguments) -> str:
    lines = []
    for p, kind in arguments:
        if isinstance(kind, Index):
            lines.append(f"    {p} = _gl_index({p}, {kind.length}, {p!r})\n")
        elif kind:
            lines.append(f"    _gl_check_shape({p}, {tuple(kind)!r}, {p!r})\n")
    return "".join(lines)


def _branches(unit: Unit, params, printer) -> str:
    """One body, or one per value of the index parameters (`if a == 0:` …, the last without a test)."""
    if len(unit.branches) == 1:
        return _body(unit.branches[0][1], unit.shape, printer, "    ")
    indices = [p for p, kind in params if isinstance(kind, Index)]
    tested = indices[0] if len(indices) == 1 else f"({', '.join(indices)})"
    text = ""
    for values, items in unit.branches[:-1]:
        key = values[0] if len(values) == 1 else values
        text += f"    if {tested} == {key!r}:\n" + _body(items, unit.shape, printer, "        ")
    return text + _body(unit.branches[-1][1], unit.shape, printer, "    ")


def _body(items, shape: tuple, printer, indent: str) -> str:
    temps = sp.numbered_symbols(_TEMP, cls=sp.Dummy)
    replacements, reduced = named_subexpressions(items, min_size=1, symbols=temps)
    lines = []
    for k, (temp, expr) in enumerate(replacements):
        printer.symbol_names[temp] = f"{_TEMP}{k}"
        lines.append(f"{indent}{_TEMP}{k} = {printer.doprint(expr)}")
    printed = [printer.doprint(e) for e in reduced]
    lines.append(f"{indent}return {_shaped(printed, shape)}")
    return "\n".join(lines) + "\n"


def _shaped(printed: list[str], shape: tuple) -> str:
    if not shape:
        return printed[0]
    if len(shape) == 1:
        return f"_stack({', '.join(printed)})"
    rows = [printed[i * shape[1] : (i + 1) * shape[1]] for i in range(shape[0])]
    return "_stack(" + ", ".join(f"_stack({', '.join(r)})" for r in rows) + ")"


def _signature(params, keywords) -> str:
    positional = [p for p, _ in params]
    return ", ".join(positional + (["*"] + [k for k, _ in keywords] if keywords else []))


def _grad_function(name, grad, params, keywords, target, shape) -> str:
    """grad_<name>: the gradient with respect to the positional number arguments (scalar functions only)."""
    numbers = [k for k, (_, kind) in enumerate(params) if not isinstance(kind, Index)]
    if target == "numpy" or shape or not numbers:
        return ""
    if target == "jax":
        argnums = "" if numbers == [0] else f", argnums={numbers[0] if len(numbers) == 1 else tuple(numbers)}"
        return f"\n\n{grad} = jax.grad({name}{argnums})\n"
    differentiated = [params[k][0] for k in numbers]
    function = name
    if len(numbers) < len(params) or keywords:
        passed = ", ".join([p for p, _ in params] + [f"{k}={k}" for k, _ in keywords])
        function = f"lambda {', '.join(differentiated)}: {name}({passed})"
    return (
        f"\n\ndef {grad}({_signature(params, keywords)}):\n"
        f'    """The gradient of {name} with respect to {", ".join(differentiated)}."""\n'
        f"    return _grad({function}, {', '.join(differentiated)})\n"
    )


def describe(kind) -> str:
    """A parameter for the docstring: scalar, vector of length n, n x m matrix, or an index."""
    if isinstance(kind, Index):
        return f"index, an integer from 0 to {kind.length - 1}"
    if not kind:
        return "scalar"
    if len(kind) == 1:
        return f"vector of length {kind[0]}"
    return f"{kind[0]}x{kind[1]} matrix"
