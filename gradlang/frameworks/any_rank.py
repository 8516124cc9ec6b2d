"""The translators' operations on values of more than two axes, written with section 3b's tensor builtins.

ops.py writes a vector or a matrix with the spellings of section 3a (`outer(v, ones(n))`, `M[:, j]`, `A @ B`);
a value with three or more axes longer than 1 (a DreamerV3 latent `(batch, time, stoch, classes)`, time-major
trajectories `(T, B, D)`) has no such spelling, and ops.py hands it here: `broadcast_to`, `sum(X, axis=(…))`,
`reshape`, `transpose(X, perm)`, `take`, `einsum`, `concat`, `onehot(argmax(X, axis=k), n)`. As in ops.py, an
axis of length 1 is no axis to gradlang: every text here has the value's shape with those axes dropped.
"""

from __future__ import annotations

import string

from gradlang.frameworks.program import ATOM, PRODUCT, TranslateError, Value, fill, wrap


def sizes_text(sizes: tuple) -> str:
    """A shape as gradlang reads it: (2, 3, 4), (5,)."""
    return f"({sizes[0]},)" if len(sizes) == 1 else "(" + ", ".join(str(d) for d in sizes) + ")"


def spread(value: Value, mine: list, theirs: list, shape: tuple) -> Value:
    """`value` (its long axes at positions `mine`) stretched to the long axes `theirs` of `shape`: the axes it
    lacks are put in as length 1 by a reshape, then stretched by broadcast_to (NumPy's broadcasting)."""
    if not set(mine) <= set(theirs):
        raise TranslateError(f"cannot broadcast shape {tuple(value.shape)} to {tuple(shape)}")
    target = tuple(d for d in shape if d != 1)
    sizes = iter(value.sizes)
    inserted = tuple(next(sizes) if p in mine else 1 for p in theirs)
    return Value(f"broadcast_to(reshape({fill(value).text}, {sizes_text(inserted)}), {sizes_text(target)})", shape)


def reduced(name: str, x: Value, gone: list, shape: tuple) -> Value:
    """sum / mean / max / min / logsumexp over several (gradlang) axes, not all: name(x, axis=(i, j))."""
    return Value(f"{name}({x.text}, axis={sizes_text(tuple(gone))})", shape)


def reshaped(a: Value, shape: tuple) -> Value:
    """A reshape that moves components: row-major as NumPy's, which dropping the axes of length 1 keeps."""
    target = tuple(d for d in shape if d != 1)
    if not target:
        return Value(f"sum({fill(a).text})", shape)  # one component: the value itself, as a scalar
    return Value(f"reshape({fill(a).text}, {sizes_text(target)})", shape)


def permuted(a: Value, kept: list, shape: tuple) -> Value:
    """transpose(x, perm) where `kept` lists the long axes of `a` in the result's order."""
    order = sorted(kept)
    return Value(f"transpose({fill(a).text}, {sizes_text(tuple(order.index(p) for p in kept))})", shape)


def indexed(a: Value, axis: int, i: int, shape: tuple) -> Value:
    """One position along gradlang axis `axis` of a value of three or more axes: take(x, i, axis)."""
    return Value(f"take({fill(a).text}, {i}, {axis})", shape)


def einsum(a: Value, b: Value, contracted: tuple, batch: tuple, shape: tuple) -> Value:
    """A dot_general: batch axes, then a's free axes, then b's (JAX's order), as one einsum over the long axes.

    `contracted` and `batch` are pairs of tuples of framework axes ((of a), (of b))."""
    letters = iter(string.ascii_lowercase)
    sub_a = [next(letters) for _ in a.shape]
    sub_b = [None] * len(b.shape)
    for pairs in (zip(*contracted), zip(*batch)):
        for i, j in pairs:
            sub_b[j] = sub_a[i]
    sub_b = [s or next(letters) for s in sub_b]
    out = [sub_a[i] for i in batch[0]] + [sub_a[i] for i in range(len(a.shape)) if i not in (*contracted[0], *batch[0])]
    out += [sub_b[j] for j in range(len(b.shape)) if j not in (*contracted[1], *batch[1])]
    long = {s for s, d in [*zip(sub_a, a.shape), *zip(sub_b, b.shape)] if d != 1}
    spec = ",".join("".join(s for s, d in zip(subs, v.shape) if d != 1) for subs, v in ((sub_a, a), (sub_b, b)))
    result = "".join(s for s, d in zip(out, shape) if d != 1 and s in long)
    return Value(f'einsum("{spec}->{result}", {fill(a).text}, {fill(b).text})', shape)


def taken(a: Value, picks, shape: tuple) -> Value:
    """Entries at fixed positions (flat, row-major, one per entry of the result): a take from the flattened
    value, reshaped to the result; one entry is an index."""
    import numpy as np

    picks, x = np.asarray(picks, dtype=np.int64), fill(a)
    out = tuple(d for d in shape if d != 1)
    if not out:
        at = ", ".join(str(int(i)) for i in np.unravel_index(int(picks.reshape(())), a.sizes))
        return Value(f"{wrap(x, ATOM)}[{at}]", shape)
    flat = x.text if len(a.sizes) == 1 else f"reshape({x.text}, ({int(np.prod(a.sizes))},))"
    read = f"take({flat}, {[int(i) for i in picks.reshape(-1)]}, 0)"
    return Value(read if len(out) == 1 else f"reshape({read}, {sizes_text(out)})", shape)


def onehot_of_extreme(y: Value, axis: int, n: int, shape: tuple, name: str) -> Value:
    """onehot(argmax(y, axis=k), n) of a value of three or more axes; onehot adds a last axis (section 3b), moved
    back to k by a transpose where k is not the last: VQGAN's and the Gumbel quantiser's codes over (b, n, h, w)."""
    rank = len(y.sizes)
    text = f"onehot({name}({fill(y).text}, axis={axis}), {n})"
    if axis == rank - 1:
        return Value(text, shape)
    order = (*range(axis), rank - 1, *range(axis, rank - 1))
    return Value(f"transpose({text}, {sizes_text(order)})", shape)


def concatenated(parts: list, axis: int, shape: tuple) -> Value:
    """concat([a, b, …], k) along framework axis `axis`. A part of length 1 along it has no such axis in gradlang:
    beside a vector it is a tensor of length 1 (`_length_one`), so the join stays one node of the formula; a run
    of them in a matrix is stacked (`stack([s, t], k)`), and a vector of them only is their stack."""
    long = [i for i, d in enumerate(shape) if d != 1]
    if shape[axis] == 1 or len(parts) == 1:
        return Value(parts[0].text, shape, parts[0].prec, parts[0].scalar, number=parts[0].number)
    beside_a_vector = len(long) == 1 and any(part.shape[axis] != 1 for part in parts)
    place, blocks, run = long.index(axis), [], []
    for part in [*parts, None]:
        if part is not None and part.shape[axis] == 1 and not beside_a_vector:
            run.append(fill(_stretched(part, shape, axis)).text)
            continue
        if len(run) > 1:
            blocks.append(f"stack([{', '.join(run)}], {place})")
        elif run:
            raise TranslateError(f"a concatenate of shape {tuple(shape)} with one part of length 1 along the axis")
        run = []
        if part is not None:
            blocks.append(_length_one(part) if part.shape[axis] == 1 else fill(_stretched(part, shape, axis)).text)
    if len(blocks) == 1:  # every part of length 1 along the axis: their stack
        return Value(blocks[0], shape)
    return Value(f"concat([{', '.join(blocks)}], {place})", shape)


def _length_one(part: Value) -> str:
    """A scalar joined to a vector, as a tensor of length 1: an entry of a vector (rlax's `v_t[-1:]`) as its
    slice `v[i:i+1]`, a number as the literal `[c]`, any other scalar as `s * onehot(0, 1)`. The literal `[s]`
    of a formula is a list of components, and a join of one takes the whole loss to its components (rlax's
    V-trace: more than 100 000 nodes as a tree for explain, over 60 s for export)."""
    if part.entry is not None:
        vector, i = part.entry
        return f"{wrap(vector, ATOM)}[{i}:{i + 1}]"
    scalar = fill(part)
    if scalar.number is not None:
        return f"[{scalar.text}]"
    return f"{wrap(scalar, PRODUCT)} * onehot(0, 1)"


def _stretched(part: Value, shape: tuple, axis: int) -> Value:
    """A part with the result's long axes (but `axis`): a broadcast scalar or a smaller part stretched."""
    want = tuple(1 if i == axis and part.shape[i] == 1 else d for i, d in enumerate(shape))
    want = tuple(part.shape[i] if i == axis else d for i, d in enumerate(want))
    if tuple(d for d in want if d != 1) == part.sizes:
        return part
    from gradlang.frameworks import ops

    return ops.spread(part, want)


def stacked(parts: list, axis: int, shape: tuple) -> Value:
    """stack([a, b, …], k): a new framework axis `axis`, at place k among the result's long axes."""
    if shape[axis] == 1:
        return Value(parts[0].text, shape, parts[0].prec, parts[0].scalar, number=parts[0].number)
    place = sum(1 for d in shape[:axis] if d != 1)
    return Value(f"stack([{', '.join(fill(p).text for p in parts)}], {place})", shape)
