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
from gradlang.export.formula import formula_body
from gradlang.export.masks import masked_components
from gradlang.export.printers import PRINTERS, stacked
from gradlang.export.units import Index, Unit
from gradlang.export.vector_text import describe_open, length_names, vector_body

_TEMP = "_gl_t"


def unit_text(unit: Unit, target: str, table) -> str:
    """The gradlang source as a comment, the function, and `grad_<name>` for a scalar one."""
    name = table[unit.name]
    params = [(table[p], kind) for p, kind in unit.params]
    keywords = [(table[k], shape) for k, shape in unit.keywords]
    printer = PRINTERS[target]({s: table[n] + suffix for s, (n, suffix) in unit.symbols.items()})
    described = ", ".join(f"{p}: {describe(k)}{_open(unit, n)}" for (p, k), (n, _) in zip(params, unit.params))
    text = f"{comment(unit.source)}\ndef {name}({_signature(params, keywords)}):\n"
    text += f'    """{name} from gradlang ({described or "no parameters"}).{_open_keywords(unit, table)}"""\n'
    text += _entry(params + keywords, target)
    if unit.vector is not None:
        text += vector_body(unit.vector, target, table)
    elif unit.formula:  # a tensor formula (at any size), in the target's own operations
        text += formula_body(unit.branches[0][1], unit.params, target, table)
    else:
        text += _checks(params + [(k, shape) for k, shape in keywords if shape]) + _branches(unit, params, printer)
    grad = table[("grad", unit.name)]
    return text + _grad_function(name, grad, params, keywords, target, unit.shape)


def _open(unit: Unit, name: str, role: str = "param") -> str:
    """`, or any length n0` when the vectorised body takes other lengths of this argument."""
    if unit.vector is None or (role, name) not in unit.vector.shapes:
        return ""
    shown = describe_open(unit.vector.shapes[(role, name)], length_names(unit.vector.shapes))
    return f", or {shown}" if shown else ""


def _open_keywords(unit: Unit, table) -> str:
    shown = [f"{table[k]}: {_open(unit, k, 'keyword')[len(', or '):]}" for k, _ in unit.keywords if _open(unit, k, "keyword")]
    return f"\n\n    Keywords of other shapes: {'; '.join(shown)}.\n    " if shown else ""


# Every number argument becomes the framework's float64 array on entry, so a Python float or list is
# what gradlang would take: 1/x at 0.0 is inf (IEEE), not ZeroDivisionError, and a list is an array.
ENTRY = {"numpy": "np.asarray({0}, dtype=float)", "jax": "jnp.asarray({0}, dtype=float)",
         "torch": "_t({0})", "tf": "_t({0})"}


def _entry(arguments, target: str) -> str:
    """`x = np.asarray(x, dtype=float)` for each argument that is a number or an array (not an index)."""
    return "".join(f"    {p} = {ENTRY[target].format(p)}\n" for p, kind in arguments if not isinstance(kind, Index))


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
    if printer.target != "numpy":  # NumPy has no gradient to protect (masks.py)
        items = masked_components(items)
    temps = sp.numbered_symbols(_TEMP, cls=sp.Dummy)
    replacements, reduced = named_subexpressions(items, min_size=1, symbols=temps)
    lines = []
    for k, (temp, expr) in enumerate(replacements):
        printer.symbol_names[temp] = f"{_TEMP}{k}"
        lines.append(f"{indent}{_TEMP}{k} = {printer.doprint(expr)}")
    printed = [printer.doprint(e) for e in reduced]
    lines.append(f"{indent}return {stacked(printed, shape)}")
    return "\n".join(lines) + "\n"


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
    """A parameter for the docstring: scalar, vector of length n, n x m matrix, an array of higher rank, or an index."""
    if isinstance(kind, Index):
        return f"index, an integer from 0 to {kind.length - 1}"
    if not kind:
        return "scalar"
    if len(kind) == 1:
        return f"vector of length {kind[0]}"
    if len(kind) == 2:
        return f"{kind[0]}x{kind[1]} matrix"
    return "x".join(str(n) for n in kind) + " array"  # rank 3 and more (section 3b)
