"""Checks on generated code, so an exported module cannot lie about what it computes.

A generated function is written only if it parses, puts nothing but its own
definitions at module level (no expression can run at import), and uses only
names the module defines (a bare `inf` or an `AccumBounds(…)` the printer let
through would otherwise fail at call time, or worse, find a user's `inf`);
otherwise the export stops with an error naming the definition.
The definition's gradlang source is copied as a comment with every control
character escaped, so no byte of user text can end the comment or make the
file unreadable (a NUL, a carriage return, U+2028).
"""

from __future__ import annotations

import ast
import builtins
import symtable
import unicodedata

from gradlang.errors import source_lines

# Appended to every prelude: exported functions were unrolled for one shape of each array argument,
# and once per value of an index argument.
SHAPE_CHECK = '''

def _gl_check_shape(value, shape, name):
    """The function was unrolled for arrays of this shape: any other is refused, not silently misread."""
    actual = tuple(value.shape)  # every argument is an array by now (text.py, ENTRY)
    if actual != shape:
        raise ValueError(f"{name} must have shape {shape}, got {actual}")


def _gl_index(value, length, name):
    """An index argument: an integer in [-length, length), as gradlang's v[i] takes; negative counts from the end."""
    index = int(value)
    if index != value or not -length <= index < length:
        raise ValueError(f"{name} must be an integer index from {-length} to {length - 1}, got {value!r}")
    return index % length


def _gl_check_shapes(arguments, shapes, least):
    """Shapes of a vectorised function: numbers it needs, and lengths n0, n1, ... its arguments must share."""
    lengths = {}
    for name, value in arguments.items():
        actual = tuple(value.shape)
        wanted = shapes[name]
        if len(actual) != len(wanted) or any(
                lengths.setdefault(w, a) != a if isinstance(w, str) else w != a for w, a in zip(wanted, actual)):
            known = "".join(f", {n} = {k}" for n, k in lengths.items())
            raise ValueError(f"{name} must have shape {wanted!r}{known}, got {actual}".replace("'", ""))
    for length, count in least.items():
        if lengths[length] < count:
            raise ValueError(f"length {length} must be at least {count} (an index reads component {count - 1}), "
                             f"got shape with {length} = {lengths[length]}")
'''

_UNPRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def comment(source: str) -> str:
    """gradlang source as Python comment lines, control characters escaped."""
    return "\n".join("# " + _escaped(line) for line in source_lines(source))


def _escaped(line: str) -> str:
    return "".join(
        ch if ch == "\t" or unicodedata.category(ch) not in _UNPRINTABLE else ascii(ch)[1:-1]
        for ch in line
    )


def check_function(text: str, defined: set[str]) -> str | None:
    """None if the generated text is sound; otherwise what is wrong with it (export refuses the definition)."""
    try:
        tree = ast.parse(text)
        table = symtable.symtable(text, "<export>", "exec")
    except (SyntaxError, ValueError) as error:
        return f"the generated code does not parse ({error})"
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.Assign)):
            return "the generated code would run an expression when the module is imported"
    available = defined | set(dir(builtins)) | {s.get_name() for s in table.get_symbols() if s.is_assigned()}
    missing = sorted(_globals_used(table) - available)
    if missing:
        return f"the expression uses {', '.join(missing)}, which has no equivalent in the exported module"
    return None


def _globals_used(table) -> set[str]:
    """Global names referenced anywhere inside the functions and lambdas of a symbol table."""
    used = set()
    for child in table.get_children():
        # not is_local(): Python 3.11's symtable calls a function named `top` the module, and its parameters global
        used |= {s.get_name() for s in child.get_symbols() if s.is_referenced() and s.is_global() and not s.is_local()}
        used |= _globals_used(child)
    return used


def defined_names(module_text: str) -> set[str]:
    """Names a module's text defines at its top level (imports, functions, assignments)."""
    table = symtable.symtable(module_text, "<prelude>", "exec")
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
