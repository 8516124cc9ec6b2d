"""Numbers from SymPy values: NumPy code, one line per distinct operation of the DAG.

One compiled function per (expressions, symbols), cached. Floating point
follows IEEE 754 (inf, nan) as NumPy does. Every primitive is printed as its
record in the registry says (gradlang/expr/primitives/): a NumPy function by name,
or its own NumPy implementation passed to lambdify as a helper (max/min
reducing over all their arguments, the shares splitting ties equally, relu),
stop_gradient as the identity.

Where NumPy cannot be imported (the browser page, docs/web.md) the same code
runs on Python floats with pure_numeric.py as its `numpy`: one point at a
time, the same values.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict

import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.precedence import precedence

from gradlang.errors import ValueError
from gradlang.expr import primitives, pure_numeric
from gradlang.expr.cse import named_subexpressions
from gradlang.expr.in_place import fits, in_place_add, in_place_multiply, in_place_subtract_from
from gradlang.expr.exact import to_sympy_number  # noqa: F401 - re-exported: callers holding NumPy results import it here
from gradlang.expr.masking import mask_untaken
from gradlang.expr.source import InStoredOrder
from gradlang.lazy import has_numpy, np  # NumPy on the first number computed (start-up, issue #41); Pyodide
# has none: pure_numeric.py computes there, one point at a time


def _helpers() -> dict:
    """NumPy implementations of the primitives that NumPy has no single function for, by helper name."""
    return {f"_gl_{r.name}": r.numpy for r in primitives.records() if callable(r.numpy)}


def pure_helpers() -> dict:
    """The same helpers for the browser page (no NumPy): each record's `pure`, on Python floats.

    A record that says the page cannot compute it (`NotOnPage`) gets a helper that
    refuses with its reason, a gradlang ValueError; one with no `pure` at all is
    left out, which tests/tensor/test_primitive_records.py refuses."""
    helpers = {"_gl_sum": pure_numeric.neumaier_sum}
    for record in primitives.records():
        if callable(record.numpy) and isinstance(record.pure, primitives.NotOnPage):
            helpers[f"_gl_{record.name}"] = _refusal(record.pure.reason)
        elif callable(record.numpy) and record.pure is not None:
            helpers[f"_gl_{record.name}"] = record.pure
    return helpers


def _refusal(reason: str):
    def refuse(*args):
        raise ValueError(reason)

    return refuse


def _sum(*terms):
    """A sum of three or more terms with Neumaier's compensation: nearly independent of
    the order SymPy sorts the terms into, so x*s - x*s^2 + s at x = 1e300, s = 1 is 1
    as in JAX, not 0 (issue 12, program 13). Where the plain sum is not finite, it is
    the answer (the compensation would turn inf - inf into nan)."""
    total, carry = terms[0], 0.0
    for term in terms[1:]:
        step = total + term
        carry = carry + np.where(np.abs(total) >= np.abs(term), (total - step) + term, (term - step) + total)
        total = step
    return np.where(np.isfinite(total), total + carry, total)


IN_PLACE = {"+": "_gl_iadd", "*": "_gl_imul"}
HELPERS = {**_helpers(), "_gl_sum": _sum, "_gl_iadd": in_place_add, "_gl_imul": in_place_multiply,
           "_gl_rsub": in_place_subtract_from}


def _namespace() -> dict:
    """What the generated code sees: NumPy (bare inf, nan as the printer writes them) and the helpers;
    where NumPy is missing, pure_numeric.py and the records' helpers on Python floats."""
    if not has_numpy():
        return {**pure_numeric.__dict__, "numpy": pure_numeric, "functools": functools, **pure_helpers()}
    import numpy

    return {**numpy.__dict__, "numpy": numpy, "functools": functools, **HELPERS}


_FLAT_TERMS = 256  # a longer sum or product is printed as a balanced tree of parentheses


def _balanced(operator: str, parts: list) -> str:
    """a + b + c + … as ((a + b) + (c + d)) + …: Python's compiler recurses once per level of a flat chain."""
    while len(parts) > 1:
        pairs = [f"({parts[i]}{operator}{parts[i + 1]})" for i in range(0, len(parts) - 1, 2)]
        parts = pairs + parts[len(parts) - len(parts) % 2 :]
    return parts[0]


class _Printer(InStoredOrder, NumPyPrinter):
    """NumPy code for gradlang's values: every primitive as its record spells it."""

    # Terms in SymPy's own order: sorting a sum for display costs O(n^2) in its number of terms.
    _default_settings = dict(NumPyPrinter._default_settings, order="none")

    def _print_AccumulationBounds(self, expr):
        """SymPy's tan(inf) is an interval; as a float it is undefined: NaN, as np.tan(inf) gives."""
        return self._print(sp.nan)

    def _print_ComplexInfinity(self, expr):
        """SymPy's zoo (an exact x/0, or 0 to a negative power): an infinity of no sign, NaN as a float."""
        return self._print(sp.nan)

    def _print_Pow(self, expr, rational=False):
        # SymPy writes (0.0*v)^(-x) as zoo^x; IEEE's 0.0^(-x) is inf^x (inf, 1 at x = 0, 0 below), as JAX gives.
        if expr.base is sp.zoo:
            return f"numpy.power(numpy.inf, {self._print(expr.exp)})"
        if not expr.free_symbols:  # Python's float ** raises OverflowError ((-pi)**1e3) where NumPy gives inf
            return f"numpy.power({self._print(expr.base)}, {self._print(expr.exp)})"
        return super()._print_Pow(expr, rational=rational)

    def _print_Mul(self, expr):
        if len(expr.args) <= _FLAT_TERMS:
            return super()._print_Mul(expr)
        return _balanced("*", [self.parenthesize(a, precedence(expr)) for a in expr.args])

    def _print(self, expr, **kwargs):
        record = primitives.by_class(type(expr)) if isinstance(expr, sp.Function) else None
        if record is None or record.numpy is None:
            return super()._print(expr, **kwargs)
        args = ", ".join(self._print(a) for a in expr.args)
        if callable(record.numpy):
            return f"_gl_{record.name}({args})"
        if "{args}" in record.numpy:
            return record.numpy.format(args=args)
        return f"numpy.{record.numpy}({args})"

    def _print_Integer(self, expr):
        # NumPy's ufuncs refuse a Python int beyond 64 bits (log(2^100) was a TypeError): such a constant is a float.
        if abs(int(expr)) < 2**63:
            return super()._print_Integer(expr)
        return self._print_Float(sp.Float(expr)) if abs(expr) < sp.Float("1.7976931348623157e308") else \
            ("-" if expr < 0 else "") + "numpy.inf"

    def _print_Float(self, expr):
        # numpy.float64, not a Python float: a constant part named by the common-subexpression pass
        # ((1e308 + pi)^2 as _t0**2) is then computed by NumPy (inf), never by Python's float, whose
        # ** raises OverflowError and / ZeroDivisionError (grammar fuzzer, typed seed 407)
        return f"numpy.float64({float(expr)!r})"

    def _print_NumberSymbol(self, expr):
        return self._print_Float(sp.Float(expr))

    _print_Pi = _print_Exp1 = _print_EulerGamma = _print_GoldenRatio = _print_Catalan = _print_NumberSymbol

    def _print_Written(self, expr):
        return self._print(expr.args[0])  # the form as written is computed: Written is the identity (domain.py)

    def _print_Add(self, expr, **kwargs):
        if len(expr.args) < 3:
            return super()._print_Add(expr, **kwargs)
        return f"_gl_sum({', '.join(self._print(a) for a in expr.args)})"


_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 256


def dag_cse(exprs, symbols) -> tuple[list, list, list]:
    """(argument names, assignments, outputs): one assignment per compound node of the DAG.

    The code is as large as the DAG, never as the tree (cse.py). `symbols`
    become the arguments `_a0, _a1, ...`; gradlang is real, so a non-real
    constant is NaN, as in NumPy's float64.
    """
    arguments = _arguments(len(symbols))
    rename = {**dict(zip(symbols, arguments)), sp.I: sp.nan}
    assignments, outputs = named_subexpressions(
        list(exprs), min_size=1, symbols=lambda i: sp.Symbol(f"_t{i}"), shared_only=False, rename=rename
    )
    return arguments, assignments, outputs


_ARGUMENTS: list = []


def _arguments(count: int) -> list:
    """_a0, _a1, ...: made once per process (a vector of 100,000 components needs as many)."""
    _ARGUMENTS.extend(sp.Symbol(f"_a{j}") for j in range(len(_ARGUMENTS), count))
    return _ARGUMENTS[:count]


def compile_function(exprs: tuple, symbols: tuple):
    """A NumPy function of `symbols` returning the list of `exprs`, cached by identity.

    Not by SymPy equality: two equal values built separately (a program run
    twice) have equal hashes, and comparing them walks both as trees, once per
    path to each shared node (minutes for the depth-16 iterated map).
    """
    key = (tuple(map(id, exprs)), tuple(map(id, symbols)))
    if key in _CACHE and _CACHE[key][0] == tuple(map(id, exprs)):
        _CACHE.move_to_end(key)
        return _CACHE[key][2]
    arguments, assignments, outputs = dag_cse(mask_untaken(exprs), symbols)
    namespace = _namespace()
    source = _constants_made_once(function_source(arguments, assignments, outputs, lean=has_numpy()))
    exec(compile(source, "<gradlang>", "exec"), namespace)
    function = namespace["_f"]
    function.source = source  # read by specialized()
    _CACHE[key] = (key[0], (exprs, symbols), function)  # the values are kept, so their ids stay theirs
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return function


_FLOAT_CONSTANT = re.compile(r"numpy\.float64\(([^()]*)\)")


def _constants_made_once(source: str) -> str:
    """The code with each `numpy.float64(0.5)` made once, beside the function, and read by name in it
    (`_k0`): the same numbers, without a constructor call per constant per call (issue #41)."""
    names: dict = {}
    body = _FLOAT_CONSTANT.sub(lambda match: names.setdefault(match.group(0), f"_k{len(names)}"), source)
    return "".join(f"{name} = {text}\n" for text, name in names.items()) + body


_SITE = re.compile(r"^    (\w+) = _gl_(iadd|imul|rsub)\((\w+), (\w+)\)$", re.MULTILINE)


def specialized(function, arguments: list) -> tuple:
    """(the function for arguments of these shapes and dtypes, its outputs at `arguments`): each
    `_gl_iadd(a, b)` written as what it did at them, `a += b` in a's buffer or `a + b` (a scalar, or a result
    of another shape), so a call makes none.

    The outputs are those of this call, made on the way (no second evaluation); the caller holds NumPy's
    error state as for the function itself. A plan of a statement run again at arrays of the same shapes
    (core/at_plan.py) calls it: the helpers' checks are a function of the shapes and dtypes alone, and cost
    more than the arithmetic at width 64 (issue #41). Either way the numbers are the same: the same operation
    on the same operands."""
    taken: list = []

    def recorded(helper):
        def record(a, b):
            taken.append(type(a) is np.ndarray and a.dtype == np.float64 and a.flags.writeable and fits(a, b))
            return helper(a, b)
        return record

    namespace = {**function.__globals__, "_gl_iadd": recorded(in_place_add), "_gl_imul": recorded(in_place_multiply),
                 "_gl_rsub": recorded(in_place_subtract_from)}
    exec(compile(function.source, "<gradlang>", "exec"), namespace)
    outputs = namespace["_f"](*arguments)
    if len(_SITE.findall(function.source)) != len(taken):  # a helper called where no site line is: keep it
        return function, outputs
    sites = iter(taken)
    source = _SITE.sub(lambda match: _site_code(*match.groups(), next(sites)), function.source)
    namespace = dict(function.__globals__)
    exec(compile(source, "<gradlang>", "exec"), namespace)
    namespace["_f"].source = source
    return namespace["_f"], outputs


def _site_code(name: str, operation: str, a: str, b: str, in_place: bool) -> str:
    if operation == "rsub":
        return f"    numpy.subtract({b}, {a}, out={a}); {name} = {a}" if in_place else f"    {name} = {b} - {a}"
    operator = "+" if operation == "iadd" else "*"
    return f"    {a} {operator}= {b}; {name} = {a}" if in_place else f"    {name} = {a} {operator} {b}"


def function_source(arguments, assignments, outputs, lean: bool = False) -> str:
    """Python source of `_f(_a0, ...)`: one line per assignment of dag_cse, then the outputs.

    Sums, products and one-argument functions over names are printed directly,
    as the printer would print them (SymPy's printer costs about a millisecond
    a line: minutes for a big gradient); the rest by the printer. Executed in a
    namespace of NumPy and the helpers, not lambdify's `from numpy import *`
    (0.2 s of every program that evaluates a float).

    `lean` (the code that is run, not the code exported for reading) keeps no
    array longer than it is used: each temporary is deleted after its last
    use, and a sum or product of two whose one operand is a temporary used
    there only is computed into that operand's buffer (the Hessian diag(s) -
    outer(s, s) holds one n×n array where it held four).
    """
    code = _Coder(_Printer({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True}))
    last = _last_uses(assignments, outputs) if lean else {}
    defined = {str(name): expr for name, expr in assignments} if lean else {}
    subtractions = _subtractions(assignments, last, defined, code) if lean else {}
    lines = [f"def _f({', '.join(str(a) for a in arguments)}):"]
    for index, (name, expr) in enumerate(assignments):
        if str(name) in subtractions:
            continue  # its user subtracts
        lines.append(f"    {name} = {subtractions.get(index) or _in_place_code(expr, last, index, defined, code) or code.node(expr)}")
        dead = [n for n, (at, _) in last.items() if at == index]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    lines.append(f"    return [{', '.join(code.node(e) for e in outputs)}]")
    return "\n".join(lines) + "\n"


def _subtractions(assignments, last: dict, defined: dict, code) -> dict:
    """`c - x` for each `_tj = -1*x` read only by `_ti = c + _tj` (SymPy's `1 - x²`): one operation, not two,
    into x's buffer where x is a fresh temporary that line j read last (`_gl_rsub`, written for the shapes by
    specialized() as the in-place sums are). Returns {index i: its code, name
    _tj: True (not written)}, and moves x's last use in `last` to line i. The same bits: IEEE's c - x is
    c + (-x)."""
    found: dict = {}
    position = {name: at for at, name in enumerate(defined)}
    for index, (_, expr) in enumerate(assignments):
        if not isinstance(expr, sp.Add) or len(expr.args) != 2:
            continue
        number, negated = sorted(expr.args, key=lambda a: not a.is_Number)
        inner = defined.get(getattr(negated, "name", ""))
        if not number.is_Number or not isinstance(inner, sp.Mul) or len(inner.args) != 2 \
                or not inner.args[0].is_Number or float(inner.args[0]) != -1.0 \
                or not inner.args[1].is_Symbol or last.get(negated.name) != (index, 1):
            continue
        x, at = inner.args[1].name, position[negated.name]
        written = _writable(inner.args[1], last, at, defined)
        if last.get(x, (None, 0))[0] == at:
            last[x] = (index, last[x][1])
        del last[negated.name]
        found[negated.name] = True
        constant = f"numpy.float64({float(number)!r})"  # as _in_place_code writes a number: a name once made
        found[index] = f"_gl_rsub({x}, {constant})" if written else f"{constant} - {x}"
    return found


def _last_uses(assignments, outputs) -> dict:
    """Each temporary not returned: (the index of the last assignment that reads it, how many read it)."""
    last: dict = {}
    for index, (_, expr) in enumerate(assignments):
        for symbol in expr.free_symbols:
            if symbol.name.startswith("_t"):
                last[symbol.name] = (index, last.get(symbol.name, (0, 0))[1] + 1)
    for expr in outputs:
        for symbol in expr.free_symbols:
            last.pop(symbol.name, None)
    return last


# Nodes whose NumPy code always gives a new array, no other name's (+ * ** here; tensor/numbers.py adds
# outer and @): a temporary made by one of them and read once may be written into.
FRESH: list = [sp.Add, sp.Mul, sp.Pow]
# Functions with a helper that may write into their first argument, by class (tensor/numbers.py: A + diag(v)).
IN_PLACE_CALLS: dict = {}


def _in_place_code(expr, last: dict, index: int, defined: dict, code) -> str | None:
    """`_gl_iadd(_t3, _t5)` for `_t3 + _t5` where _t3 is a fresh array read by this line only, else None."""
    if not last:
        return None
    if type(expr) in IN_PLACE_CALLS and _writable(expr.args[0], last, index, defined):
        return f"{IN_PLACE_CALLS[type(expr)]}({', '.join(code.atom(a) for a in expr.args)})"
    if not isinstance(expr, (sp.Add, sp.Mul)) or len(expr.args) != 2:
        return None
    for first, second in (expr.args, expr.args[::-1]):
        if _writable(first, last, index, defined) and (second.is_Symbol or second.is_Number):
            other = second.name if second.is_Symbol else f"numpy.float64({float(second)!r})"
            return f"{IN_PLACE['+' if expr.is_Add else '*']}({first.name}, {other})"
    return None


def _writable(atom, last: dict, index: int, defined: dict) -> bool:
    """A temporary that line `index` alone reads and that a FRESH node made: no other name holds its buffer."""
    name = getattr(atom, "name", "")
    return last.get(name) == (index, 1) and isinstance(defined.get(name), tuple(FRESH) + tuple(IN_PLACE_CALLS))


class _Coder:
    """Code of one node whose args are atoms (names and numbers)."""

    def __init__(self, printer: _Printer):
        self.printer = printer
        self.templates: dict = {}
        self.numbers: dict = {}

    def atom(self, atom) -> str:
        if atom.is_Symbol:
            return atom.name  # _a0, _t5: dag_cse's names
        if atom not in self.numbers:
            self.numbers[atom] = f"({self.printer.doprint(atom)})"
        return self.numbers[atom]

    def node(self, expr) -> str:
        if expr.is_Atom:
            return self.atom(expr)
        if isinstance(expr, (sp.Add, sp.Mul)) and all(a.is_Atom for a in expr.args):
            operator = " + " if expr.is_Add else "*"
            parts = [self.atom(a) for a in expr.args]
            return _balanced(operator, parts) if len(parts) > _FLAT_TERMS else operator.join(parts)
        template = self._template(expr) if len(expr.args) == 1 else None  # ones(n) and ones(1, n, n, 1): one class
        if template is not None:
            return template.replace(_SLOT_CODE, self.atom(expr.args[0]))
        return self.printer.doprint(expr)

    def _template(self, expr):
        """`numpy.tanh(_slot_)` for a one-argument function class, printed once per class."""
        cls = type(expr)
        if cls not in self.templates:
            self.templates[cls] = None
            if isinstance(expr, sp.Function) and len(expr.args) == 1 and expr.args[0].is_Atom:
                text = self.printer.doprint(cls(_SLOT))
                self.templates[cls] = text if text.count(_SLOT_CODE) == 1 else None
        return self.templates[cls]


_SLOT = sp.Symbol("_slot_")
_SLOT_CODE = "_slot_"


def evaluate(exprs: list, symbols: list, values: list) -> list:
    """Evaluate scalar expressions at NumPy values (broadcast together), IEEE semantics."""
    function = compile_function(tuple(exprs), tuple(symbols))
    if not has_numpy():
        return _evaluate_pure(function, values)
    arrays = [np.asarray(v, dtype=float) for v in values]
    with np.errstate(all="ignore"):
        outputs = function(*arrays)
    shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
    return [np.broadcast_to(_real(o), shape) for o in outputs]


def _real(output) -> np.ndarray:
    """A float64 array: a non-real component is NaN (IEEE, as numpy.sqrt(-1.0) gives)."""
    output = np.asarray(output)
    if np.iscomplexobj(output):
        output = np.where(output.imag == 0, output.real, np.nan)
    return np.asarray(output, dtype=float)


def _evaluate_pure(function, values: list) -> list[float]:
    """One point, without NumPy: Python floats in, Python floats out (nan for a non-real result)."""
    if not all(isinstance(v, (int, float)) for v in values):
        raise ValueError("evaluating at a list of points needs NumPy, which is not available here "
                         "(in the browser page); evaluate at one point at a time")
    outputs = function(*[pure_numeric.Float(v) for v in values])
    return [float(o) if not isinstance(o, complex) else (o.real if o.imag == 0 else pure_numeric.nan) for o in outputs]
