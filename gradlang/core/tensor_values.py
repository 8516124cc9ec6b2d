"""The evaluator's door to the tensor engine: operations on values whose sizes are symbols.

A declaration with a symbolic size (`x: R^n`) binds one `Var`; arithmetic and the elementwise functions
build SymPy nodes over it as they would over a scalar, and `checked` verifies their shapes. The operations
that are not elementwise go through `TABLE` here, which builds the tensor nodes of expr/tensor and takes
derivatives with the tensor-level passes of derive/tensor. A builtin with no tensor form is refused with a
ShapeError that suggests literal sizes, never computed wrongly by components.
"""

from __future__ import annotations

import sympy as sp

from gradlang.core import builtins, builtins_products as products
from gradlang.core import tensor_derivatives as derivatives
from gradlang.core.builtins_axes import is_axis_call
from gradlang.core.builtins_joins import NAMES as JOINS, tensor_join
from gradlang.core.builtins_shapes import TABLE as SHAPES
from gradlang.core.tensor_broadcast import stretched, stretched_condition
from gradlang.core.literal_sizes import as_constant, constants_only, mixed
from gradlang.core.tensor_axes import ANY_RANK, EXTREMA, TENSORS, along_axis, extremum, one, pair, square
from gradlang.expr.tensor.lower import involves, literal, lowered
from gradlang.errors import (
    DiffError, LimitError, NeedsComponents, ShapeError, ShapeNeedsComponents, ValueError,
)
from gradlang.expr import component_vectors as vectors, primitives
from gradlang.expr.conditions import AllOf, AnyOf
from gradlang.expr.functions import MaxShare, MinShare, Where
from gradlang.expr.stopgrad import StopGradient, unstopped
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.axes import Pick, broadcast_to
from gradlang.expr.tensor.broadcast import kept_shape
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor.nodes import rank, shape_of
from gradlang.expr.values import elements, is_condition
from gradlang.expr.walk import relation

def declare_size(name: str, env: dict, token=None):
    """The size a name stands for: its literal value if it is bound to one, else a size symbol."""
    bound = env.get(name)
    if bound is None or shapes.is_size(bound):
        return bound if bound is not None else shapes.size_symbol(name)
    if isinstance(bound, sp.Integer) and bound >= 1:
        return int(bound)
    raise ShapeError(f"'{name}' is already bound to a value, so it cannot be a size")


def checked(value):
    """The value, once its shape is known to be consistent (a ShapeError names both shapes)."""
    if isinstance(value, TensorList):  # grad(L, [W, b]): each entry has its own shape
        return TensorList(*(checked(e) for e in value.entries))
    if isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        if not any(involves(e) for e in elements(value)):
            return value
        return t.Literal.of(_of_scalars(value))  # scalars of symbolic-size tensors ([y[0], 2]): one tensor value
    try:
        shape_of(value)
    except RecursionError:
        raise LimitError("the computation nests too deeply") from None
    return value


def _of_scalars(value):
    """A list of scalars (a vector or a matrix); a list of rows that are lists of scalars ([[y[0], 1], [2, a]])
    is the matrix of their entries; anything else holds a tensor of symbolic size, which no list can."""
    rows = list(value)
    if len(value.shape) == 1 and all(isinstance(r, t.Literal) and len(r.shape) == 1 for r in rows):
        if len({r.shape for r in rows}) != 1:
            shown = " and ".join(sorted({shapes.describe(r.shape) for r in rows}))
            raise ShapeError(f"the entries of a list must have one shape, got {shown}")
        return sp.ImmutableMatrix([r.rows() for r in rows])
    if any(rank(e) for e in elements(value)):
        raise ShapeError("a list cannot hold vectors or matrices of symbolic size")
    return value


def fit(result, operands: list):
    """An elementwise result with the shape of its tensor operands, where SymPy's algebra dropped it.

    `x - x` is 0, `M*0.0` is 0.0 and `x/x` is 1 to SymPy; as values of shape n they are
    zeros(n), zeros(n) and ones(n), so that `sum(x/x)` is n, not 1, and `sum(M*0.0, 1)` a vector."""
    tensor_shapes = [shape_of(o) for o in operands if involves(o)]
    if not tensor_shapes:
        return result
    expected = shapes.broadcast(tensor_shapes)
    if not expected or not isinstance(result, sp.Expr) or shape_of(result) == expected:
        return result
    return t.Zeros(*expected) if t.is_zero_number(result) else result * t.Ones(*expected)  # M*0.0 too


def matmul(a, b):
    a, b = (t.Literal.of(v) if _listed(v) else v for v in (a, b))  # [[y[0], 1], [2, y[1]]] @ [a, b]
    sa, sb = _tensor_shape(a), _tensor_shape(b)
    if len(sa) > 2 or len(sb) > 2:  # batched over the leading axes, as NumPy's matmul
        return products.batched(a, b)
    result = shapes.matmul(sa, sb)
    return t.Dot(a, b) if result == () else t.MatMul(a, b)


def index(base, indices: list):
    """`v[k]` or `M[i, j]`: an entry; `M[i]` is refused at a symbolic size (a row needs a slice)."""
    shape = _tensor_shape(base)
    if not shape:
        raise ShapeError("a scalar cannot be indexed")
    if len(indices) > len(shape):
        raise ShapeError(f"{shapes.describe(shape)} takes at most {len(shape)} indices, got {len(indices)}")
    indices = [wrapped(i, n) for i, n in zip(indices, shape)] + list(indices[len(shape):])
    for i, n in zip(indices, shape):
        shapes.check_index(i, n)
    if len(indices) < len(shape) and len(shape) > 2:  # X[i], X[i, j] of a tensor of rank 3 or more: its slices
        for i in indices:
            base = Pick(base, sp.S.Zero, i)
        return base
    if len(indices) < len(shape):  # M[i]: row i
        return t.Row(base, indices[0])
    return t.Entry(base, *indices)


def wrapped(index, length):
    """A negative index counts from the end, as in NumPy: x[-1] is x[2] at length 3, and x[n - 1] at a
    symbolic length n (whose point checks it is within range: x[-3] needs n ≥ 3)."""
    if not (getattr(index, "is_Integer", False) and index < 0):
        return index
    if getattr(length, "is_Integer", False):
        return index + length if -length <= index else index
    return length + index


def _listed(value) -> bool:
    """A list of scalars (a vector or matrix of them) that can be a Literal beside a tensor."""
    return isinstance(value, (sp.NDimArray, sp.MatrixBase)) and not any(
        isinstance(e, (sp.NDimArray, sp.MatrixBase)) for e in elements(value))


def _tensor_shape(value) -> tuple:
    if isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        raise ShapeError("a list cannot be combined with a vector or matrix of symbolic size")
    return shape_of(value)


def _share(cls):
    """max_share(k, a, …) / min_share: elementwise over its arguments, as max and min of several are."""

    def apply(args):
        k, *rest = args
        if rank(k) != 0:
            raise ShapeError(f"the argument number of {cls.__name__} must be a scalar")
        shapes.broadcast([shape_of(a) for a in rest], "max_share" if cls is MaxShare else "min_share")
        return cls(k, *rest)

    return apply


def _sized(build, count: int):
    """onehot(k, n), eye(n), ones(n): constants whose sizes may be symbols, or size expressions (zeros(n - 3), as a
    range's adjoint prints it) not known to be 0 or less (a point's sizes are checked where it is given)."""

    def apply(args):
        size = args[-1]
        if not (getattr(size, "is_integer", False) and size.is_positive is not False):
            raise ShapeError("a size must be a positive integer or a size name")
        return build(*args)

    return apply


def _where(args):
    condition, a, b = args
    if not is_condition(condition):  # as the component engine says it (core/builtins.py)
        error = ValueError("the first argument of where must be a condition such as x > 0")
        error.argument = 0
        raise error
    compared = () if getattr(condition, "reduces_condition", False) else condition.args  # all(x > 0): one condition
    shape = shapes.stretched([shape_of(a) for a in (*compared, a, b)], "where")
    a, b = (broadcast_to(v, shape) for v in (a, b))  # NumPy's broadcast, made explicit (section 3b)
    condition = stretched_condition(condition, shape)
    if isinstance(condition, sp.Rel):  # a comparison of tensors is kept undecided (expr/walk.py): decide it here
        condition = relation(condition.func, *condition.args, shaped=False)
    return kept_shape(Where(condition, a, b), shape)  # where(z > z, 1, t) is t 𝟙: the condition's shape


def _reduced(cls, condition):
    """all(c) / any(c) of a condition on tensors: one condition (section 6, tensor)."""
    if not is_condition(condition):
        error = ValueError(f"{'all' if cls is AllOf else 'any'} takes a condition such as x > 0")
        error.argument = 0
        raise error
    return cls(condition) if rank(condition) else condition


def _huber(args):
    """huber(u, delta) of a tensor: the component formula, applied to the whole tensor (it is elementwise)."""
    u, delta = args
    if rank(delta) != 0:
        raise ShapeNeedsComponents("huber's delta must be a scalar at a symbolic size; declare literal sizes")
    return vectors.huber(u, delta)


def _components(args):
    raise ShapeNeedsComponents("components needs literal sizes: give them with at, as in components(e at n = 3)")


TABLE = {
    "components": _components,
    "norm": one("norm", TENSORS),  # of a whole tensor: the norm of all its entries, as NumPy's
    **{name: one(name, {1}) for name in ("softmax", "log_softmax", "normalize", "len")},
    "logsumexp": one("logsumexp", TENSORS),  # of a whole matrix or tensor: a scalar, as NumPy's and JAX's
    "diag": one("diag", {1, 2}),
    **{name: one(name, ANY_RANK) for name in ("sum", "mean", "prod")},
    **{name: one(name, {1}) for name in ("argmax", "argmin")},
    "max_shares": one("max_shares", TENSORS),  # the gradient of max(v) and of max(M) of a whole matrix
    **{name: square(name) for name in ("trace", "det", "logdet", "inv")},
    "reduce_sum": one("sum", ANY_RANK),
    "reduce_mean": one("mean", ANY_RANK),
    "dot": pair(t.Dot, "dot"),
    "outer": pair(t.Outer, "outer"),
    "cosine": pair(lambda a, b: t.Dot(a, b) / (t.NormOf(a) * t.NormOf(b)), "cosine"),
    "max": extremum("max"),
    "min": extremum("min"),
    "reduce_max": extremum("max"),
    "reduce_min": extremum("min"),
    "max_share": _share(MaxShare),
    "min_share": _share(MinShare),
    "onehot": _sized(t.OneHot, 2),
    "eye": _sized(t.Eye, 1),
    "ones": _sized(t.Ones, 1),
    "zeros": _sized(t.Zeros, 1),
    "where": _where,
    "all": lambda args: _reduced(AllOf, *args),
    "any": lambda args: _reduced(AnyOf, *args),
    "huber": _huber,
    **{name: tensor_join(name) for name in JOINS}, **products.TABLE,
    **SHAPES,
    **derivatives.TABLE,
    "stop_gradient": lambda args: StopGradient(*args),
    "sg": lambda args: StopGradient(*args),
    "unstopped": lambda args: unstopped(*args),
}


_DERIVATIVES = frozenset({"grad", "jacobian", "hessian", "diff", "blocked", "backward"})
# SymPy's algebra of a formula, at every size (core/builtins.py's _algebra: at literal sizes, the components'
# numbers where they simplify to numbers, so it proves the stable softmax's Jacobians equal)
_KEPT_WHOLE = frozenset({"simplify", "expand", "factor", "N"})


def call(name: str, args: list, nodes: list = ()) -> tuple:
    """(value, args): a builtin applied by the tensor engine, or (None, the arguments the component path takes).

    At literal sizes the component path takes the arguments as their components
    wherever the tensor engine has no whole-tensor form (a NeedsComponents
    error), so every builtin keeps working on `x: R^3`. `nodes` are the
    arguments' syntax: max(M, axis=0) is an axis form, max(M, 0) elementwise."""
    if len(args) > 1 and _kept_whole(name) and name not in _KEPT_WHOLE:
        args = stretched(args, name)  # atan2(X, v), huber(X, d): NumPy's broadcast, made explicit (section 3b)
    if not all(literal(a) or not involves(a) for a in args):
        return _tensor_call(name, _beside_symbolic(name, args), nodes), args
    given = args
    if constants_only(args):
        args = [as_constant(a) for a in args]  # dot(w, [1, 2]): a list of numbers is a constant of the formula
    try:
        if _holds_components(name, args):
            raise ShapeNeedsComponents(f"{name} of a value at literal sizes takes its components")
        value = _tensor_call(name, args, nodes)
    except NeedsComponents:
        return None, [lowered(a) for a in given]
    if value is None and not _kept_whole(name):
        return None, [lowered(a) for a in given]
    return value, args if value is not None else given


def _beside_symbolic(name: str, args: list) -> list:
    """The arguments of a builtin beside a tensor of symbolic size: a list of numbers is a constant of the
    formula (outer(u, [1, 2, 3]), as at literal sizes); a list holding symbols (b*ones(3) = [b, b, b]) has
    no place in it, and is refused as a list beside a symbolic size, never read as a scalar."""
    if name in _DERIVATIVES or name == "components" or not any(isinstance(a, (sp.NDimArray, sp.MatrixBase)) for a in args):
        return args
    if constants_only(args):
        return [as_constant(a) for a in args]
    raise ShapeError("a list cannot be combined with a vector or matrix of symbolic size")


def _holds_components(name: str, args: list) -> bool:
    """Arguments the tensor engine cannot read at literal sizes: a list of scalars that are not all numbers,
    or a derivative of a value holding the component x[0] beside the tensor x (to the tensor engine x[0]
    would be a stranger to x). Their components are the value's, so the component path answers."""
    return (name in _DERIVATIVES and mixed(*args)) or any(isinstance(a, (sp.NDimArray, sp.MatrixBase)) for a in args)


def _kept_whole(name: str) -> bool:
    """An elementwise function (or simplify and its kin) of a tensor is still a formula of that tensor."""
    record = primitives.lookup(name)
    return name in _KEPT_WHOLE or (record is not None and record.apply == "elementwise")


def _tensor_call(name: str, args: list, nodes: list):
    try:
        return _tensor_value(name, args, nodes)
    except (DiffError, ValueError) as error:
        position = getattr(error, "argument", None)
        if position is not None and position < len(nodes):
            raise error.located(nodes[position].span)
        raise


def _tensor_value(name: str, args: list, nodes: list):
    if name in EXTREMA and len(nodes) == 2 and is_axis_call(name, args, nodes):
        return checked(along_axis(name.removeprefix("reduce_"), *args))  # max(M, axis=1): the axis form
    function = TABLE.get(name)
    if function is not None:
        return checked(function(args))
    if _kept_whole(name) or builtins.lookup(name) is None:
        return None  # the component path's own answer (an unknown name gets its "did you mean")
    raise ShapeNeedsComponents(f"{name} does not take a vector or matrix of symbolic size yet; declare literal sizes")


def numbers_whole(name: str, args: list, nodes: list):
    """A list of numbers where the component forms cannot take it, by the tensor engine (its components given
    back), as a declared tensor is: by an axis (`norm([[3, 4], [6, 8]], axis=1)`, `argmax(L, axis=1)`, a list of
    rank 3, a tuple of axes), and `onehot([1, 0], 3)` of a list of whole numbers (an index tensor, section 3b).
    None where the component forms can take it."""
    if not _engine_takes(name, args, nodes):
        return None
    value, _ = call(name, [as_constant(args[0]), *args[1:]], nodes)
    return None if value is None else lowered(value)


def _engine_takes(name: str, args: list, nodes: list) -> bool:
    first = args[0] if args else None
    if not isinstance(first, (sp.NDimArray, sp.MatrixBase)) or not constants_only([first]):
        return False
    if name == "onehot":
        return all(e.is_Integer for e in elements(first))
    entry = builtins.lookup(name)
    if entry is None or name in JOINS or not is_axis_call(name, args, nodes):
        return False
    fits = entry.max_args is None or len(args) <= entry.max_args
    return not (fits and len(first.shape) <= 2 and not isinstance(args[1], sp.Tuple))
