"""What of a value is shown: large arrays summarised, large expressions with named parts.

Every printer asks `shown(value, full)` first, so all formats agree on what a
reader sees. A formula at literal sizes is shown as its components when they
print shorter (`shorter`). An array of more than `THRESHOLD` components is summarised as
NumPy summarises (`numpy.set_printoptions(threshold=1000, edgeitems=3)`): the
first and last `EDGE` components along each axis, with mark symbols where
components were left out, and the original shape kept so each printer can
say how large the value is. JSON values and `--full` skip the summary.

Then an expression that shares subexpressions is shown as `t1 = …, t2 = …`
and the value in terms of them, so the printout grows with the DAG, not with
the tree (the shared parts are found on what is shown, so a summarised value
costs no more than its edges). A tensor value has its repeated parts named as
a teacher names them (`s = softmax(x)`, render/teacher.py), avoiding the
names the session has bound (`taken`).
"""

from __future__ import annotations

import math

from dataclasses import dataclass

import sympy as sp

from gradlang import limits
from gradlang.expr.cse import named_subexpressions
from gradlang.errors import FreeIndex, LimitError, NeedsNumbers
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import tree_size
from gradlang.expr.source import to_source
from gradlang.expr.engine import Var, literal, lower, shape_of as tensor_shape
from gradlang.lazy import deferred, np
from gradlang.expr.values import elements, from_elements, shape_of
from gradlang.render.teacher import is_tensor_value, teacher_parts

# Of tensor values only, so imported with the first (render/implicit.py subclasses the engine's TensorOp).
implicit_broadcasts = deferred("gradlang.render.implicit", "implicit_broadcasts")

THRESHOLD = 1000      # components above which an array is summarised (NumPy's default)
EDGE = 3              # components kept at each end of a summarised axis (NumPy's edgeitems)

# Marks for left-out components; each printer spells them (… ⋯ ⋮ ⋱, \cdots …).
ROW_GAP = sp.Symbol("⋯")       # columns left out, within a row (or components of a vector)
COLUMN_GAP = sp.Symbol("⋮")    # rows left out, within a column
BOTH_GAP = sp.Symbol("⋱")      # rows and columns left out
MARKS = frozenset({ROW_GAP, COLUMN_GAP, BOTH_GAP})


@dataclass(frozen=True)
class Shown:
    """A value as it will be printed: named shared parts, the (maybe summarised) value, its full shape."""

    named: tuple          # (t_k, expr_k) pairs, in the order they are defined
    value: object         # what to print: the value, or a small array with gap marks
    shape: tuple | None   # the original shape when summarised, else None
    tensor: bool = False  # a tensor value: named parts print as `where s = …`, sums in a teacher's order


def shown(value, full: bool = False, taken=frozenset()) -> Shown:
    """The value as the printers show it (see the module docstring); `taken`: names no printed part may have."""
    value = shorter(value)
    if is_tensor_value(value):
        named, value = teacher_parts(implicit_broadcasts(value), taken)
        return Shown(tuple(named), value, None, tensor=True)
    shape = None
    if not full and _size(value) > THRESHOLD:
        shape = tuple(value.shape)
        value = summarised(value)
    named, value = _name_shared_parts(value)
    return Shown(tuple(named), value, shape)


_SHORT_ENTRIES, _SHORT_NODES = 64, 400  # bounds by size: the choice never depends on the machine
_SHORT_TREE = 4000  # tree nodes of a formula above which its components never print shorter than it


def shorter(value):
    """A value at literal sizes that picks components (x[0]) as its components when they print shorter.

    hessian(norm(x), x)[0, 1] at x: R^2 reads -x[0]*x[1]/norm([x[0], x[1]])^3, and
    grad(x[0]*x[1], x) reads [x[1], x[0], 0], as a teacher writes them, not
    x[0]*onehot(1, 3) + x[1]*onehot(0, 3); grad(sum(x^2), x) stays 2*x, and a formula that
    picks no component prints as at a symbolic size whatever its length (max(dot(y, y), min(x)) at y, x: R^1). An
    array of numbers is shown as such: [0, 0, 0], not zeros(3). Where lowering
    needs a value (an index left symbolic, softmax(x)[k]; argmax of symbols;
    a determinant past the exact limit) the formula is the value, as at R^n.
    Bounded by size, so the choice never depends on the machine."""
    if not isinstance(value, sp.Expr) or isinstance(value, (Var, sp.MatrixBase)) or not literal(value):
        return value
    entries = math.prod(int(n) for n in tensor_shape(value))
    if entries > _SHORT_ENTRIES or len(build_dag([value]).nodes) > _SHORT_NODES:
        return value
    if tree_size(value, cap=_SHORT_TREE + 1) > _SHORT_TREE:  # MoCo v3's gradient: a DAG of 400 nodes whose
        return value  # components, each a tree of the encoder's relus, took minutes to lower and print longer
    if _has_free_symbols(value) and not _picks_components(value):
        return value  # its components hold symbols too and it picks none: shown as at R^n, never lowered (SymPy's
        # arithmetic on the components walks trees: I-JEPA's gradient, 400 distinct nodes, took minutes)
    try:
        parts = lower.components(value, {})
    except (NeedsNumbers, FreeIndex, LimitError):
        return value
    entries = list(parts) if isinstance(parts, (sp.NDimArray, sp.MatrixBase)) else [parts]
    if not any(_has_free_symbols(e) for e in entries):
        return parts
    return parts if len(to_source(parts)) < len(to_source(value)) else value


def _has_free_symbols(entry) -> bool:
    """entry.free_symbols is not empty, asked over the DAG: SymPy's free_symbols walks the tree, once per
    use of a shared part, and a component of SwAV's unrolled Sinkhorn is a tree of billions of nodes."""
    if not isinstance(entry, sp.Basic):
        return False
    nodes = build_dag([entry]).nodes
    if not any(isinstance(n, sp.Symbol) for n in nodes):
        return False
    if any(getattr(n, "bound_symbols", None) for n in nodes):
        return bool(entry.free_symbols)  # a sum or a lambda binds some: SymPy says which (small, such values)
    return True


def _picks_components(value) -> bool:
    """Does the formula pick an entry, a row or a column by a number (x[0], W[1], hessian(…)[0, 1])? Then it was
    asked by components, and may be shown by them; any other formula prints as it does at a symbolic size."""
    from gradlang.expr.tensor.nodes import Column, Entry, Row

    return any(isinstance(node, (Entry, Row, Column)) and all(i.is_Integer for i in node.args[1:])
               for node in build_dag([value]).nodes)


def shown_result(result, full: bool = False) -> Shown:
    """A Result's value as the printers show it, its parts named apart from the names its session had bound."""
    return shown(result.value, full, result.bound)


def in_its_form(result):
    """The value under one derivation that names parts (the user's bindings, its letters, its stops' letters),
    written with those names (p1, z1, c) as the derivation's own lines write it. Under several derivations, or
    one whose result the value is not (`explain 2*grad(…)`), with the user's bindings alone, the names every
    derivation above shares: the user's h = W @ x, never a letter of the value printer's own (z = W @ x).
    None when nothing is named."""
    from gradlang.explain.layout import Form, shorten

    forms = [Form(step) for step in result.steps if getattr(step, "vector", None) is not None]
    if not forms:
        return None
    if len(result.steps) == 1 and getattr(result.steps[0], "derived", None) is result.value:
        form = forms[0]
        return form(result.value) if form.display or form.names else None  # nothing named: the printer names
    own = {value: name for form in forms for value, name in form.own.items()}
    if not own or not isinstance(result.value, sp.Basic):
        return None
    written = shorten(result.value, own)
    return None if written == result.value else written  # none of the user's parts in it: as any value


def derivation_names(result) -> set:
    """The names the derivations of a result introduced (their let names, their stops' letters), which the
    value printer's own names must not take."""
    from gradlang.explain.layout import Form

    forms = [Form(step) for step in result.steps if getattr(step, "vector", None) is not None]
    return {str(name) for form in forms for name in (*form.display.values(), *form.names.values())}


def _size(value) -> int:
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, (sp.MatrixBase, sp.NDimArray)):
        return math.prod(value.shape)
    return 1


def _edges(n: int) -> list:
    """Indices kept along an axis of length n, None where the gap goes."""
    if n <= 2 * EDGE:
        return list(range(n))
    return [*range(EDGE), None, *range(n - EDGE, n)]


def summarised(value):
    """A small SymPy array of the edge components with gap marks (1-D or 2-D)."""
    shape = tuple(value.shape)
    if isinstance(value, np.ndarray):
        def item(*index):
            return _float(float(value[index]))
    else:
        def item(*index):
            return value[index]
    if len(shape) == 1:
        items = [ROW_GAP if i is None else item(i) for i in _edges(shape[0])]
        return sp.ImmutableDenseNDimArray(items, (len(items),))
    rows = [[_gap(i, j) if i is None or j is None else item(i, j) for j in _edges(shape[1])] for i in _edges(shape[0])]
    return sp.ImmutableMatrix(rows)


def _gap(i, j):
    if i is None and j is None:
        return BOTH_GAP
    return COLUMN_GAP if i is None else ROW_GAP


def _float(value: float) -> sp.Expr:
    """A float as SymPy holds it, the IEEE specials included (one definition, in expr.numeric)."""
    from gradlang.expr.numeric import to_sympy_number

    return to_sympy_number(value)


def shape_text(shape: tuple) -> str:
    """`1000000` for a vector, `300×300` for a matrix: the size a summary stands for."""
    return "×".join(str(n) for n in shape)


def is_gap_row(row) -> bool:
    """True for a row of a summarised matrix that stands for left-out rows."""
    return all(entry in MARKS for entry in row)


def _name_shared_parts(value) -> tuple[list, object]:
    """([(t_k, expr_k)], value in terms of them) for a value too large to write out as a tree."""
    if isinstance(value, np.ndarray) or not isinstance(value, (sp.Basic, sp.MatrixBase, sp.NDimArray)):
        return [], value
    items = elements(value)
    if sum(tree_size(e) for e in items if isinstance(e, sp.Basic)) <= limits.NAMED_PARTS_ABOVE:
        return [], value
    named, reduced = named_subexpressions(items, min_size=8)
    size = sum(tree_size(e) for _, e in named) + sum(tree_size(e) for e in reduced)
    if size > limits.MAX_PRINTED_NODES:
        raise LimitError(
            f"the result has about {size:.3g} nodes even with its shared parts named, above the limit of "
            f"{limits.MAX_PRINTED_NODES}; evaluate it at a point with `at` instead"
        )
    return named, from_elements(shape_of(value), reduced)


class Summarising:
    """Mixed in first by every printer: an array of more than THRESHOLD components prints as its summary.

    One place decides what "large" is, so plain, pretty and LaTeX summarise
    the same values; the `full` setting (--full, :full on) turns it off.
    """

    def _print(self, expr, **kwargs):
        if _is_array(expr) and self._large(expr):
            return super()._print(Shown((), summarised(expr), tuple(expr.shape)))
        return super()._print(expr, **kwargs)

    def _large(self, array) -> bool:
        return not self._settings.get("full", False) and math.prod(array.shape) > THRESHOLD


def _is_array(value) -> bool:
    return isinstance(value, (sp.NDimArray, sp.MatrixBase)) or type(value).__name__ == "ndarray"

