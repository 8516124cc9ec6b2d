"""The registry of primitives: every function of the language as one record.

Records are written in the modules of this package (elementwise.py,
nonsmooth.py, vectors.py), each next to the SymPy class it needs when SymPy
has none; tensor_ops.py holds the records of the tensor engine's operations
that are no function of the language (`@`, indexing, dot, det, …), which
carry only their tensor rules (adjoint and tangent). The registry is filled on first use, so a module that defines one
of the classes (functions.py) can import the record vocabulary without a
cycle. Everything that lists primitives asks here: the builtin table, the
lexer, the NumPy printer, the browser page's helpers (`pure`), the export
printers, preludes and whole-array adjoints, the kink checks, the DAG rules,
explain's unfold definitions, the "constants to differentiation" set and the
tensor engine's adjoint and tangent rules (`tensor_rules`).
tests/tensor/test_primitive_records.py checks that every record is complete.
"""

from __future__ import annotations

import importlib

import sympy as sp
from sympy.printing.str import StrPrinter

from gradlang.expr.primitives.record import (
    SYMPY,
    TARGETS,
    Export,
    GradlangFunction,
    Kink,
    NotOnPage,
    Ops,
    Primitive,
    TensorOperation,
    TensorRule,
    ZeroDerivative,
    frameworks,
    helpers,
    same,
    unary,
)

_MODULES = ("elementwise", "nonsmooth", "vectors", "tensor_ops", "joins", "axes", "products")
_BY_NAME: dict = {}
_BY_CLASS: dict = {}
_RECORDS: list = []
_OPERATIONS: list = []
_loaded = False


def register(record: Primitive) -> Primitive:
    """Add a record; its names and its class must be new."""
    for name in record.names:
        if name in _BY_NAME:
            raise RuntimeError(f"primitive {name!r} is registered twice")
        _BY_NAME[name] = record
    if record.cls is not None:
        if record.cls in _BY_CLASS:
            raise RuntimeError(f"class {record.cls.__name__} has two records")
        _BY_CLASS[record.cls] = record
        if record.cls.__module__.startswith("gradlang."):
            record.cls._sympystr = _spelled  # str() of a value reads as gradlang: stop_gradient(x)
    _RECORDS.append(record)
    return record


def register_operation(record: TensorOperation) -> TensorOperation:
    """Add the record of a tensor operation that is no function of the language."""
    _OPERATIONS.append(record)
    return record


def spell(record: Primitive, expr, printer) -> str:
    """A primitive's call in gradlang source, its arguments spelled by `printer`."""
    args = expr.args
    if record.form == "vector":
        return f"{record.name}({_vector(args, printer)})"
    if record.form == "component":
        return f"{record.name}({_vector(args[1:], printer)})[{printer._print(args[0])}]"
    return f"{record.name}({printer.stringify(args, ', ')})"


def _vector(args, printer) -> str:
    """The vector argument of softmax, logsumexp, norm: [a, b, c]. A single symbol can only be a
    whole declared vector written by name (explain shows softmax(x)[0] so): such a builtin of
    one scalar evaluates to something else, so this form never stands for a scalar."""
    if len(args) == 1 and isinstance(args[0], sp.Symbol):
        return printer._print(args[0])
    return f"[{printer.stringify(args, ', ')}]"


def _spelled(self, printer) -> str:
    """SymPy's `_sympystr` hook for gradlang's own classes (so plain `str(value)` speaks gradlang).

    SymPy asks this hook before a printer's own `_print_<Class>`, so a printer
    that spells these classes itself (gradlang's source, plain and one-line
    printers, with their `sg(…)` marks) is honoured here.
    """
    for cls in type(self).__mro__:
        if not cls.__module__.startswith("gradlang."):
            break
        own = getattr(printer, f"_print_{cls.__name__}", None)
        if own is not None:
            return own(self)
    if type(printer)._print_Function is not StrPrinter._print_Function:
        return printer._print_Function(self)
    return spell(_BY_CLASS[type(self)], self, printer)


def spelled(value, printer) -> str:
    """`str()` of a gradlang class's value (expr/function_bases.py's hook): the records loaded first."""
    _load()
    return _spelled(value, printer)


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _MODULES:
            importlib.import_module(f"{__name__}.{module}")


def records() -> tuple:
    """Every record, in the order of registration."""
    _load()
    return tuple(_RECORDS)


def lookup(name: str) -> Primitive | None:
    """The record of a gradlang name or alias."""
    _load()
    return _BY_NAME.get(name)


def by_class(cls) -> Primitive | None:
    """The record whose values are instances of `cls` (exactly that class)."""
    _load()
    return _BY_CLASS.get(cls)


def names() -> set:
    """Every gradlang name and alias of a primitive."""
    _load()
    return set(_BY_NAME)


def tensor_rules() -> dict:
    """Every tensor node class -> its TensorRule, from the primitives' records and tensor_ops.py's.

    A node class with two rules is an error: each has one home."""
    _load()
    rules: dict = {}
    for record in (*_RECORDS, *_OPERATIONS):
        for rule in record.tensor:
            if rule.node in rules:
                raise RuntimeError(f"tensor node {rule.node.__name__} has two adjoint rules")
            rules[rule.node] = rule
    return rules


def constant_classes() -> tuple:
    """Classes whose derivative is zero: stop_gradient and the piecewise-constant functions."""
    return tuple(r.cls for r in records() if r.zero_derivative)


__all__ = [
    "SYMPY", "TARGETS", "Export", "GradlangFunction", "Kink", "NotOnPage", "Ops", "Primitive", "TensorOperation", "TensorRule",
    "ZeroDerivative", "by_class", "constant_classes", "frameworks", "helpers", "lookup", "names", "records", "register",
    "register_operation", "same", "tensor_rules", "unary",
]
