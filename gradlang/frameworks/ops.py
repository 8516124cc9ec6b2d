"""The operations both translators write: elementwise arithmetic, broadcasts, reductions, products.

Each takes and gives `Value`s with the framework's shapes; an axis of length 1
is no axis to gradlang (a (1, n) row is a vector of length n), so a reshape
that only adds or drops such axes is the value itself, and a reduction over
one changes nothing. A broadcast is written out: a scalar stays a scalar
where gradlang broadcasts it (elementwise operations) and is filled with
`ones(n)` where it would not be (a sum); a vector spread over a matrix is
`outer(v, ones(n))` or `outer(ones(m), v)`. Whatever does not fit is a
TranslateError, never a guess.
"""

from __future__ import annotations

from gradlang.frameworks import any_rank
from gradlang.frameworks.program import ATOM, POWER, PRODUCT, SUM, UNARY, TranslateError, Value, fill, wrap

BINARY = {"+": SUM, "-": SUM, "*": PRODUCT, "/": PRODUCT}
# Operations (JAX's and PyTorch's names) whose float32 result is one of their inputs' float32 values: moved,
# picked, negated, compared; every other operation computed in float32 rounds, and its result is float32(…).
EXACT_IN_FLOAT32 = frozenset((
    "reshape squeeze expand_dims broadcast_in_dim transpose slice gather dynamic_slice select_n copy copy_p neg abs "
    "max min reduce_max reduce_min sign floor ceil round convert_element_type reduce_precision view _unsafe_view "
    "unsqueeze flatten expand expand_as broadcast_to broadcast_tensors t permute numpy_T select index index_select "
    "embedding take contiguous clone alias lift_fresh_copy relu maximum minimum clamp clamp_min clamp_max amax amin "
    "where to _to_copy detach").split())
NARROW = ("float16", "bfloat16", "float8")
COMPARE = (">", ">=", "<", "<=", "==", "!=")


def _positions(shape: tuple, rank: int) -> list:
    """Where the axes longer than 1 of `shape` sit once it is aligned to the right of a rank-`rank` shape."""
    pad = rank - len(shape)
    return [pad + i for i, d in enumerate(shape) if d != 1]


def spread(value: Value, shape: tuple) -> Value:
    """`value` as an operand of an elementwise operation whose result has `shape`."""
    if value.scalar is not None:
        return value.scalar
    if not value.sizes:
        return value
    rank = max(len(shape), len(value.shape))
    mine, theirs = _positions(value.shape, rank), _positions(shape, rank)
    if mine == theirs:
        return value
    if len(theirs) == 2 and len(mine) == 1 and mine[0] in theirs:
        m, n = (shape[i - (rank - len(shape))] for i in theirs)
        if theirs.index(mine[0]) == 0:
            return Value(f"outer({value.text}, ones({n}))", shape)
        return Value(f"outer(ones({m}), {value.text})", shape)
    return any_rank.spread(value, mine, theirs, shape)


def binary(op: str, a: Value, b: Value, shape: tuple) -> Value:
    """a op b elementwise (+ - * /), broadcasting as the framework does."""
    x, y = spread(a, shape), spread(b, shape)
    prec = BINARY[op]
    text = f"{wrap(x, prec)} {op} {wrap(y, prec + 1)}"
    if _is_scalar(x) and _is_scalar(y) and tuple(d for d in shape if d != 1):
        return Value(text, shape, scalar=Value(text, (), prec))
    return Value(text, shape, prec)


def _is_scalar(value: Value) -> bool:
    return not value.sizes


def power(a: Value, p: Value, shape: tuple) -> Value:
    x, y = spread(a, shape), spread(p, shape)
    text = f"{wrap(x, ATOM)}^{wrap(y, ATOM)}"
    return _keep_scalar(Value(text, shape, POWER), x, y)


def _keep_scalar(result: Value, *operands: Value) -> Value:
    """A result of scalars only, broadcast to a non-scalar shape, is still a broadcast scalar."""
    if all(_is_scalar(v) for v in operands) and tuple(d for d in result.shape if d != 1):
        return Value(result.text, result.shape, result.prec, scalar=Value(result.text, (), result.prec))
    return result


def negate(a: Value) -> Value:
    x = a.scalar or a
    text = f"-{wrap(x, UNARY + 1 if x.prec == UNARY else UNARY)}"
    if a.number is not None:
        return Value(text, a.shape, UNARY, number=-a.number)
    return _keep_scalar(Value(text, a.shape, UNARY), x) if a.scalar else Value(text, a.shape, UNARY)


def call(name: str, a: Value, *extra: str) -> Value:
    """An elementwise builtin of one tensor: exp(a), tanh(a), round(a), …"""
    x = a.scalar or a
    text = f"{name}({', '.join([x.text, *extra])})"
    return _keep_scalar(Value(text, a.shape), x) if a.scalar else Value(text, a.shape)


def in_float32(value: Value, op: str) -> Value:
    """A result the framework computes in float32 (after a cast): float32(value), as it is rounded there."""
    if op in EXACT_IN_FLOAT32 or _is_call(value.text, "float32"):
        return value
    return call("float32", value)


def _is_call(text: str, name: str) -> bool:
    """`text` is one call of `name` as a whole (float32(a) is, float32(a) * 3 is not)."""
    if not text.startswith(name + "(") or not text.endswith(")"):
        return False
    depth = 0
    for i, ch in enumerate(text[len(name):]):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(text) - len(name) - 1
    return False


def cast(value: Value, source: str, target: str) -> Value:
    """A cast between float dtypes: to float32 from a wider float is float32(value); widening is the value."""
    if any(target.startswith(n) for n in NARROW):
        raise TranslateError(f"a cast to {target}: gradlang keeps float32 casts only (float32(…))")
    if target == "float32" and source not in ("float32",) + NARROW:
        return call("float32", value)
    return value


def extremum(name: str, a: Value, b: Value, shape: tuple) -> Value:
    """max(a, b) / min(a, b) elementwise (gradlang's one reduction over its arguments: ties share)."""
    x, y = spread(a, shape), spread(b, shape)
    if x.sizes and y.sizes == () and x.shape != shape:
        x = fill(x)
    return _keep_scalar(Value(f"{name}({x.text}, {y.text})", shape), x, y)


def compare(op: str, a: Value, b: Value, shape: tuple) -> Value:
    x, y = spread(a, shape), spread(b, shape)
    return Value(f"{wrap(x, SUM)} {op} {wrap(y, SUM)}", shape, SUM - 1, condition=True)


def where(condition: Value, a: Value, b: Value, shape: tuple) -> Value:
    """where(c, a, b); a condition that is not a comparison (a mask of numbers) is compared with 0."""
    c = condition if condition.condition else compare("!=", condition, Value("0", ()), shape)
    x, y = fill(_full(a, shape)), fill(_full(b, shape))
    return Value(f"where({c.text}, {x.text}, {y.text})", shape)


def _full(value: Value, shape: tuple) -> Value:
    if value.sizes == tuple(d for d in shape if d != 1) or not value.sizes:
        return value if value.sizes or not shape else Value(value.text, shape, value.prec, scalar=value)
    return spread(value, shape)


def reduce(name: str, a: Value, axes: tuple) -> Value:
    """sum / max / min (or mean, logsumexp) over framework axes: all of gradlang's axes, one of a matrix's, or none."""
    shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    kept = [i for i, d in enumerate(a.shape) if d != 1]
    gone = [kept.index(i) for i in axes if i in kept]
    if not gone:
        return Value(a.text, shape, a.prec, a.scalar, number=a.number) if name != "mean" else a
    x = fill(a)
    if len(gone) == len(kept):
        return Value(f"{name}({x.text})", shape)
    if len(gone) > 1:
        return any_rank.reduced(name, x, gone, shape)
    axis = f"axis={gone[0]}" if name in ("max", "min") else str(gone[0])  # max(M, 1) is elementwise (section 6)
    return Value(f"{name}({x.text}, {axis})", shape)


def along(name: str, a: Value, axis: int) -> Value:
    """softmax / log_softmax along one framework axis; the result keeps the shape."""
    kept = [i for i, d in enumerate(a.shape) if d != 1]
    axis = axis % len(a.shape) if a.shape else 0
    if axis not in kept:
        raise TranslateError(f"{name} along an axis of length 1")
    if len(kept) == 1:
        return Value(f"{name}({fill(a).text})", a.shape)
    return Value(f"{name}({fill(a).text}, {kept.index(axis)})", a.shape)


def broadcast(a: Value, shape: tuple, dims: tuple) -> Value:
    """a placed at axes `dims` of a result of `shape` (jax's broadcast_in_dim, torch's expand)."""
    if not a.sizes:
        scalar = a.scalar or a
        return Value(scalar.text, shape, scalar.prec, scalar=scalar) if any(d != 1 for d in shape) else (
            Value(scalar.text, shape, scalar.prec, number=scalar.number))
    placed = [1] * len(shape)
    for axis, d in zip(dims, a.shape):
        placed[axis] = d
    if tuple(d for d in placed if d != 1) != a.sizes:
        raise TranslateError(f"cannot broadcast shape {tuple(a.shape)} to {tuple(shape)}")
    return spread(Value(a.text, tuple(placed), a.prec), shape)


def reshape(a: Value, shape: tuple) -> Value:
    """A reshape that only adds or drops axes of length 1 (vector <-> row or column)."""
    if tuple(d for d in shape if d != 1) != a.sizes:
        return any_rank.reshaped(a, tuple(shape))
    return Value(a.text, tuple(shape), a.prec, a.scalar, a.condition, a.number)


def permute(a: Value, perm: tuple) -> Value:
    """A transpose: the matrix transpose when the two long axes swap, else the value itself."""
    shape = tuple(a.shape[p] for p in perm)
    kept = [p for p in perm if a.shape[p] != 1]
    if kept == sorted(kept):
        return Value(a.text, shape, a.prec, a.scalar, number=a.number)
    if len(kept) > 2:
        return any_rank.permuted(a, kept, shape)
    return Value(f"transpose({fill(a).text})", shape)


def index(a: Value, axis: int, i: int, shape: tuple) -> Value:
    """One position along one axis (a slice of length 1): v[i], M[i, :] or M[:, j]."""
    if a.shape[axis] == 1:
        return reshape(a, shape)
    x = fill(a)
    kept = [k for k, d in enumerate(a.shape) if d != 1]
    if len(kept) == 1:
        return Value(f"{wrap(x, ATOM)}[{i}]", shape, entry=(x, i))
    if len(kept) > 2:
        return any_rank.indexed(a, kept.index(axis), i, shape)
    return Value(f"{wrap(x, ATOM)}[{i}, :]" if kept.index(axis) == 0 else f"{wrap(x, ATOM)}[:, {i}]", shape)


def contract(a: Value, b: Value, axes_a: tuple, axes_b: tuple, shape: tuple) -> Value:
    """A product contracting one axis of each operand (no batch axes): @, dot, or outer when none.

    Axes of length 1 are no axes to gradlang: the operands are read at their gradlang sizes and the
    contracted axis at its place among them (a (1, 3) weight times a vector is a dot product).
    """
    x, y = fill(a), fill(b)
    ra, rb = len(a.sizes), len(b.sizes)
    if len(axes_a) > 1 or any(a.shape[i] == 1 for i in axes_a) or ra > 2 or rb > 2 or (not axes_a and ra and rb and ra + rb > 2):
        return any_rank.einsum(a, b, (tuple(axes_a), tuple(axes_b)), ((), ()), shape)
    if not axes_a:
        return _no_contraction(x, y, shape)
    ca = [i for i, d in enumerate(a.shape) if d != 1].index(axes_a[0])
    cb = [i for i, d in enumerate(b.shape) if d != 1].index(axes_b[0])
    if ra == 1 and rb == 1:
        return Value(f"dot({x.text}, {y.text})", shape)
    if ra > 2 and rb <= 2 and ca == ra - 1:  # a batch of rows times a matrix: NumPy's batched @ (section 3b)
        right = y if rb == 1 or cb == 0 else Value(f"transpose({y.text})", b.shape[::-1])
        return Value(f"{wrap(x, PRODUCT)} @ {wrap(right, PRODUCT + 1)}", shape, PRODUCT)
    if ra == 1:  # v @ B is B^T v
        flipped = y if cb == 1 else Value(f"transpose({y.text})", b.shape[::-1])
        return Value(f"{wrap(flipped, PRODUCT)} @ {wrap(x, PRODUCT + 1)}", shape, PRODUCT)
    left = x if ca == 1 else Value(f"transpose({x.text})", a.shape[::-1])
    right = y if rb == 1 or cb == 0 else Value(f"transpose({y.text})", b.shape[::-1])
    return Value(f"{wrap(left, PRODUCT)} @ {wrap(right, PRODUCT + 1)}", shape, PRODUCT)


def _no_contraction(x: Value, y: Value, shape: tuple) -> Value:
    if len(x.shape) == 1 and len(y.shape) == 1:
        return Value(f"outer({x.text}, {y.text})", shape)
    if not x.shape or not y.shape:
        return binary("*", x, y, shape)
    raise TranslateError(f"an outer product of shapes {tuple(x.shape)} and {tuple(y.shape)}")


def rowwise_dot(a: Value, b: Value, shape: tuple) -> Value:
    """A product with one batch axis and one contracted axis, both matrices: sum(A * B, 1)."""
    return Value(f"sum({wrap(fill(a), PRODUCT)} * {wrap(fill(b), PRODUCT + 1)}, 1)", shape)


def picked(a: Value, picks, shape: tuple) -> Value:
    """The entries of `a` at fixed positions (a gather whose indices are constants at the traced point).

    `picks` holds, for each entry of the result, the position (flat, row-major) of the entry of `a` it
    reads; the result is written with constant one-hot matrices: S @ v, R @ M, or sum((R @ M) * C, 1).
    """
    import numpy as np

    out = tuple(d for d in shape if d != 1)
    picks = np.asarray(picks, dtype=np.int64).reshape(out)
    source, x = a.sizes, fill(a)
    if not source:
        return Value(x.text, shape, x.prec, scalar=x) if out else x
    if len(source) > 2 or picks.ndim > 2:
        return any_rank.taken(a, picks, shape)
    rows, cols = np.divmod(picks, source[1]) if len(source) == 2 else (None, picks)
    if picks.ndim == 0:
        text = f"{wrap(x, ATOM)}[{int(cols)}]" if rows is None else f"{wrap(x, ATOM)}[{int(rows)}, {int(cols)}]"
        return Value(text, shape)
    if rows is None and picks.ndim == 1 and _is_range(cols):  # v[1:], v[:-1]: a range reads back as one
        return Value(f"{wrap(x, ATOM)}[{int(cols[0])}:{int(cols[-1]) + 1}]", shape)
    if rows is None and picks.ndim == 1:
        return Value(f"{_one_hot_rows(cols, source[0])} @ {wrap(x, PRODUCT + 1)}", shape, PRODUCT)
    if rows is not None and picks.ndim == 2 and out[0] == source[0] and (rows.T == np.arange(source[0])).all() and (
            _is_range(cols[0]) and (cols == cols[0]).all()):
        return Value(f"{wrap(x, ATOM)}[:, {int(cols[0][0])}:{int(cols[0][-1]) + 1}]", shape)
    if rows is not None and picks.ndim == 1:
        chosen = f"{_one_hot_rows(rows, source[0])} @ {wrap(x, PRODUCT + 1)}"
        return Value(f"sum(({chosen}) * {_one_hot_rows(cols, source[1])}, 1)", shape)
    if rows is not None and picks.ndim == 2 and out[1] == source[1] and (cols == np.arange(source[1])).all():
        return Value(f"{_one_hot_rows(rows[:, 0], source[0])} @ {wrap(x, PRODUCT + 1)}", shape, PRODUCT)
    if rows is not None and picks.ndim == 2 and out[0] == source[0] and (rows.T == np.arange(source[0])).all() and (
            cols == cols[0]).all():  # every row reads the same columns (a row-wise topk reads its own)
        return Value(f"{wrap(x, PRODUCT)} @ transpose({_one_hot_rows(cols[0], source[1])})", shape, PRODUCT)
    return any_rank.taken(a, picks, shape)


def _is_range(positions) -> bool:
    """Consecutive positions, first to last (a slice of step 1)."""
    import numpy as np

    positions = np.asarray(positions)
    return positions.size > 1 and bool((np.diff(positions) == 1).all())


def _one_hot_rows(positions, length: int) -> str:
    """A constant matrix with one 1 per row, at the given positions."""
    rows = [[1.0 if j == int(p) else 0.0 for j in range(length)] for p in positions]
    return "[" + ", ".join("[" + ", ".join(repr(v) for v in row) + "]" for row in rows) + "]"


def onehot_of_argmax(y: Value, axis: int, shape: tuple, name: str = "argmax") -> Value:
    """The one-hot of argmax(y) (or argmin) along `axis`, at y's shape: onehot(argmax(y), n) of a vector; of a
    matrix, one per row (or column), stacked. `y` should be a name: a matrix is read once per row."""
    n, kept = shape[axis], [i for i, d in enumerate(shape) if d != 1]
    if len(kept) == 1:
        return Value(f"onehot({name}({fill(y).text}), {n})", shape)
    if len(kept) > 2 and axis in kept:
        return any_rank.onehot_of_extreme(y, kept.index(axis), n, shape, name)
    if len(kept) != 2 or axis not in kept:
        raise TranslateError(f"a one-hot of an {name} of shape {tuple(shape)}")
    other = next(i for i in kept if i != axis)
    parts = [f"onehot({name}({index(y, other, i, ()).text}), {n})" for i in range(shape[other])]
    return Value(f"stack([{', '.join(parts)}], {0 if other < axis else 1})", shape)  # stacked along the other axis

