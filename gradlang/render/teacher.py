"""Tensor values as a teacher writes them: repeated parts named once, positive terms first.

The language reference (section 8) prints a tensor result in the notation of
matrix calculus, with a repeated subexpression named once: `diag(s) − s sᵀ`
where `s = softmax(x)`. The shared parts are found by the one
common-subexpression routine (expr/cse.py) and shown through the same
`Shown.named` pairs that name the shared parts of huge scalar DAGs, so plain
prints them as assignments before the value (`s = softmax(x)`), which reads
back; pretty and LaTeX print them after it, as `where s = …`.

Only what a reader would name is named: a part that depends on a tensor and
is more than a name with a mark (`x[k]`, `Wᵀ`, `−y`, `e_k`, `I`). Names are
the letters of the textbooks (`s` softmax, `p` sigmoid, `h` tanh, `z` a
linear map `W x` or `wᵀx`, `r` a residual `W x − y`), numbered when a kind repeats (`s1`, `s2`), and
`t1`, `t2`, … for anything else, or whenever a letter is taken by the session
or the value: a printed name is never one the user has bound.

`TeacherOrder` is mixed into the value printers: in a tensor value a sum
prints its positive terms first (`W x − y`, `softmax(W x) − e₁`). Scalar
values of the component engine contain no tensor and print as before.
"""

from __future__ import annotations

import itertools
from collections import Counter
from contextlib import contextmanager

import sympy as sp
from sympy.printing.pretty.stringpict import prettyForm, stringPict

from gradlang.errors import ShapeError
from gradlang.expr.cse import named_subexpressions
from gradlang.expr.graph import build_dag
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.engine import TensorList, Var, loaded, nodes, shape_of
from gradlang.expr.walk import dag_atoms, rebuild, rebuild_all
from gradlang.lazy import deferred_module

primitives = deferred_module("gradlang.expr.primitives")  # the records on first use (issue #41)

# The letter of each kind of part; "t" is the generic kind. Sigmoid's part is p (a probability), not σ:
# LaTeX writes sigmoid itself as \sigma, and `σ = σ(W x)` would read as a definition of a function.
_LETTERS = {"softmax": "s", "sigmoid": "p", "tanh": "h", "linear": "z", "residual": "r"}
Dot, Entry, MatMul, SoftmaxOf, Transpose = nodes.Dot, nodes.Entry, nodes.MatMul, nodes.SoftmaxOf, nodes.Transpose
_CONSTANTS = (nodes.OneHot, nodes.Eye, nodes.Ones, nodes.Zeros)  # e_k, I, 𝟙, 𝟎: never worth a name
_MARKS = (Transpose, Entry, StopGradient, sp.Add, sp.Mul, sp.Pow)  # over names only: xᵀ, x[k], sg(x), −y, x²
_WORDS = frozenset({"at", "explain", "unfold", "size", "R"})  # keywords and type names of the grammar


def is_tensor_value(value) -> bool:
    """A value of the tensor engine (walked as a DAG: a huge scalar value costs one pass)."""
    return loaded() and isinstance(value, (sp.Expr, TensorList)) and bool(dag_atoms(value, Var))


def teacher_parts(value, taken=frozenset()) -> tuple[list, object]:
    """([(name, part)], value in terms of the names): the repeated parts of a tensor value, named."""
    dag = build_dag([value])
    # cse calls `symbols` with the index of the node in this same DAG (build_dag of the same roots)
    placeholders = (lambda i: Var(f"_part{i}", _shape(dag.nodes[i])))
    shared, [reduced] = named_subexpressions([value], min_size=1, symbols=placeholders)
    parts, inlined = _worth_naming(shared)
    reduced = rebuild(reduced, inlined)
    names = _choose_names([part for _, part in parts], set(taken) | _names_in(value))
    renamed = {p: Var(name, p.shape) for (p, _), name in zip(parts, names)}
    exprs = rebuild_all([part for _, part in parts] + [reduced], renamed)
    return [(renamed[p], e) for (p, _), e in zip(parts, exprs)], exprs[-1]


def _shape(node) -> tuple:
    """The node's shape; () for a node with none (a condition): its name then prints as a number's would."""
    try:
        return shape_of(node)
    except ShapeError:
        return ()


def _worth_naming(shared: list) -> tuple[list, dict]:
    """(the parts a reader would name, placeholder -> expression for the others, to put back).

    A shared negation −u names u and keeps its sign outside (`t = sg(z)` and `−t`, not `t = −sg(z)`).
    """
    parts, inlined = [], {}
    for placeholder, part in shared:
        part = rebuild(part, inlined)
        coefficient, rest = part.as_coeff_Mul() if isinstance(part, sp.Mul) else (1, part)
        if coefficient == -1 and _worth(rest):
            positive = Var(placeholder.name + "_", placeholder.shape)
            parts.append((positive, rest))
            inlined[placeholder] = -positive
        elif _worth(part):
            parts.append((placeholder, part))
        else:
            inlined[placeholder] = part
    return parts, inlined


def _worth(part) -> bool:
    """More than a name with a mark, and about a tensor (a condition is never named: it is not a value)."""
    if not isinstance(part, sp.Expr) or part.is_Atom or isinstance(part, _CONSTANTS) or not dag_atoms(part, Var):
        return False  # a name alone (−x shared: x) is already its own name
    return not (isinstance(part, _MARKS) and all(a.is_Atom for a in part.args))


def _kind(part) -> str:
    """What a textbook calls such a part: softmax, sigmoid, tanh, a linear map (a vector or a number), a residual, else t."""
    if isinstance(part, SoftmaxOf):
        return "softmax"
    if isinstance(part, (MatMul, Dot)) and len(shape_of(part)) < 2:
        return "linear"
    if isinstance(part, sp.Add) and any(t.could_extract_minus_sign() and isinstance(-t, Var) for t in part.args):
        return "residual"  # a prediction minus a target: W x − y
    record = primitives.by_class(type(part))
    return record.name if record is not None and record.name in _LETTERS else "t"


def _choose_names(parts: list, taken: set) -> list[str]:
    """A name per part, in order: its kind's letter (numbered if the kind repeats) unless taken, else t1, t2, …"""
    kinds = [_kind(part) for part in parts]
    counts = Counter(kinds)
    usable = {kind for kind in counts if kind != "t" and not set(_lettered(kind, counts[kind])) & taken}
    generic = (f"t{k}" for k in itertools.count(1) if f"t{k}" not in taken)
    seen: Counter = Counter()
    names = []
    for kind in kinds:
        seen[kind] += 1
        names.append(_lettered(kind, counts[kind])[seen[kind] - 1] if kind in usable else next(generic))
    return names


def _lettered(kind: str, count: int) -> list[str]:
    letter = _LETTERS[kind]
    return [letter] if count == 1 else [f"{letter}{k}" for k in range(1, count + 1)]


def _names_in(value) -> set:
    """Every name a printed part could be confused with: the value's symbols and the builtins."""
    from gradlang.core import builtins

    names = {symbol.name for symbol in dag_atoms(value, sp.Symbol)}
    return names | set(builtins.TABLE) | set(builtins.CONSTANTS) | set(builtins.CORE) | _WORDS


class TeacherOrder:
    """Mixed into the value printers: within a tensor value, a sum's positive terms come first.

    The printer is told by `_print_Shown` (whose Shown knows whether its value
    is a tensor) or, for a bare value, by `doprint`; records print their
    values through Shown, so they are told there.
    """

    _tensor_value = False

    def doprint(self, expr):
        if not isinstance(expr, sp.Basic):
            return super().doprint(expr)
        with self.tensor_order(is_tensor_value(expr)):
            return super().doprint(expr)

    @contextmanager
    def tensor_order(self, on: bool):
        """Within the block, sums print in a teacher's order when `on` (restored after: printers nest)."""
        saved, self._tensor_value = self._tensor_value, on
        try:
            yield
        finally:
            self._tensor_value = saved

    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        if not self._tensor_value:
            return terms
        return [t for t in terms if not t.could_extract_minus_sign()] + [t for t in terms if t.could_extract_minus_sign()]


MINUS = "−"


def tensor_sum_pretty(printer, expr):
    """A sum of a tensor value with − between its terms (SymPy's pretty printer writes -)."""
    forms = []
    for i, term in enumerate(printer._as_ordered_terms(expr)):
        if not term.could_extract_minus_sign():
            forms.append(printer._print(term))
            continue
        form = printer._print(-term)
        if form.binding > prettyForm.NEG or form.binding == prettyForm.ADD:
            form = prettyForm(*form.parens())
        sign = MINUS if i == 0 and form.height() == 1 else f"{MINUS} " if i == 0 else f" {MINUS} "
        forms.append(prettyForm(*stringPict.next(sign, form), binding=prettyForm.NEG))
    return prettyForm.__add__(*forms)


def negated_pretty(printer, expr):
    """−u for a negative product of a tensor value (SymPy's pretty printer writes -)."""
    form = printer._print(-expr)
    if form.binding > prettyForm.MUL:
        form = prettyForm(*form.parens())
    return prettyForm(*stringPict.next(MINUS, form), binding=prettyForm.NEG)


def where_pretty(printer, value_form, named) -> prettyForm:
    """The value, then `where s = softmax(x)` (one line per name, aligned), the value's baseline kept."""
    rows = [value_form]
    for k, (name, part) in enumerate(named):
        head = "where " if k == 0 else "      "
        rows.append(prettyForm(*stringPict.next(head, printer._print(name), " = ", printer._print(part))))
    width = max(row.width() for row in rows)
    lines = [line.ljust(width) for row in rows for line in row.picture]
    return prettyForm("\n".join(lines), value_form.baseline, prettyForm.ATOM)


def where_latex(printer, value_text: str, named) -> str:
    r"""The value, then `\text{where } s = \operatorname{softmax}\left(x\right)` on the same line, or on the
    next when together they would not fit a page (WHERE_SAME_LINE characters of LaTeX source)."""
    parts = r",\; ".join(f"{printer._print(name)} = {printer._print(part)}" for name, part in named)
    if len(value_text) + len(parts) <= WHERE_SAME_LINE:
        return rf"{value_text}, \quad \text{{where }} {parts}"
    return rf"\begin{{gathered}}{value_text}, \\ \text{{where }} {parts}\end{{gathered}}"


WHERE_SAME_LINE = 140
