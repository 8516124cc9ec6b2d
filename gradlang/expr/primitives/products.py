"""The records of einsum, reshape, take and take's adjoint (expr/tensor/products.py), section 3b.

As a teacher states them (reverse mode, record.TensorRule):

    einsum      Y = einsum("s1,s2->o", A, B)   Ā = einsum("o,s2->s1", Ȳ, B)   (the cotangent's letters for A's)
    reshape     Y = reshape(X, shape)          X̄ = reshape(Ȳ, X's shape)
    take        Y = take(X, idx, axis)         X̄ = scatter_add(Ȳ, idx, axis, n)  (np.add.at: a repeated index adds)
    scatter     Y = scatter_add(V, idx, a, n)  V̄ = take(Ȳ, idx, a)

einsum's adjoint is an einsum for every spec: a letter A repeats (its
diagonal, "ii->i") comes back through an identity, `eye(n)` under a letter of
its own; a letter of A that nothing else holds (summed out in A alone,
"ij->i") comes back through `ones(n)`, the broadcast made explicit. Each is
linear in each operand, so its tangent is the same operation on the tangent
(for a vector variable, with the variable's axis as one more letter).
"""

from __future__ import annotations

from gradlang.errors import DiffNeedsComponents
from gradlang.expr.primitives import TensorOperation, TensorRule, register_operation
from gradlang.expr.primitives.record import frameworks
from gradlang.expr.primitives.tangents import TOO_HIGH, DiagTangent, sum_of
from gradlang.expr.engine import broadcast, nodes as t, rank, shape_of
from gradlang.lazy import deferred, deferred_module

# The engine's, imported on first use: the records are made at start-up, the engine is not (issue #41).
Einsum, Reshape, ScatterAdd, Take, explicit, scatter_numbers, take_numbers = deferred_module(
    "gradlang.expr.tensor.products").names("Einsum", "Reshape", "ScatterAdd", "Take", "explicit", "scatter_numbers",
                                           "take_numbers")
Spec, full = deferred("gradlang.expr.tensor.subscripts", "Spec"), broadcast.full


def _einsum(node, ybar, k):
    """Operand k − 1 receives the einsum of the cotangent and the other operands into its own letters."""
    if k == 0:
        return None
    spec, operands = node.spec, list(node.operands)
    target, sizes = spec.inputs[k - 1], spec.sizes([shape_of(o) for o in operands])
    inputs = [spec.output] + [s for j, s in enumerate(spec.inputs) if j != k - 1]
    args = [full(ybar, node.shape)] + [o for j, o in enumerate(operands) if j != k - 1]
    fresh, out = iter(spec.fresh(len(target))), []
    for letter in target:
        if letter in out:  # a diagonal: the repeat gets a letter of its own, tied to the first by the identity
            twin = next(fresh)
            inputs.append((letter, twin))
            args.append(t.Eye(sizes[letter]))
            letter = twin
        out.append(letter)
    held = {x for letters in inputs for x in letters}
    for letter in dict.fromkeys(out):
        if letter not in held:  # summed in this operand alone: the adjoint is broadcast along it
            inputs.append((letter,))
            args.append(t.Ones(sizes[letter]))
    return explicit(Spec(tuple(inputs), tuple(out)), args)


def _variable_length(operands, d):
    """The length of the vector variable, read from a tangent that has one more axis than its operand."""
    for operand, dk in zip(operands, d):
        if dk != 0 and rank(dk) == rank(operand) + 1:
            return shape_of(dk)[-1]
    raise DiffNeedsComponents(TOO_HIGH)


def _einsum_tangent(node, d, vector):
    """The sum over operands of the einsum with that operand's tangent in its place."""
    if any(isinstance(dk, DiagTangent) for dk in d):
        raise DiffNeedsComponents(TOO_HIGH)
    spec, operands = node.spec, list(node.operands)
    extra = spec.fresh(1) if vector else ()
    length = (_variable_length(operands, d[1:]),) if vector else ()
    terms = []
    for k, dk in enumerate(d[1:]):
        if dk == 0:
            continue
        args = operands[:k] + [full(dk, shape_of(operands[k]) + length)] + operands[k + 1:]
        inputs = spec.inputs[:k] + (spec.inputs[k] + extra,) + spec.inputs[k + 1:]
        terms.append(explicit(Spec(inputs, spec.output + extra), args))
    return sum_of(*terms)


def _reshape(node, ybar, k):
    return None if k else Reshape(full(ybar, node.shape), *shape_of(node.args[0]))


def _reshape_tangent(node, d, vector):
    base = shape_of(node.args[0])
    if not vector:
        return Reshape(full(d[0], base), *node.args[1:])
    length = _variable_length([node.args[0]], d[:1])
    return Reshape(full(d[0], base + (length,)), *node.args[1:], length)


def _take(node, ybar, k):
    if k:
        return None
    base, index, axis = node.args
    return ScatterAdd(full(ybar, node.shape), index, axis, shape_of(base)[int(axis)])


def _take_tangent(node, d, vector):
    base = node.args[0]
    length = (_variable_length([base], d[:1]),) if vector else ()
    return Take(full(d[0], shape_of(base) + length), *node.args[1:])


def _scatter(node, ybar, k):
    return None if k else Take(full(ybar, node.shape), node.args[1], node.args[2])


def _scatter_tangent(node, d, vector):
    values = node.args[0]
    length = (_variable_length([values], d[:1]),) if vector else ()
    return ScatterAdd(full(d[0], shape_of(values) + length), *node.args[1:])


def _einsum_export(framework: str):
    """einsum's template in a framework: its own einsum with the node's explicit subscripts."""

    def spelled(node) -> str:
        operands = ", ".join(f"{{{k}}}" for k in range(1, len(node.args)))
        return f'{framework}.einsum("{node.args[0].name}", {operands})'

    return spelled


_SIZES = "({rest},)"
_TAKE = {
    "numpy": "def _gl_take(x, idx, axis):\n    return np.take(x, np.asarray(idx).astype(int), axis=int(axis))\n",
    "jax": "def _gl_take(x, idx, axis):\n    return jnp.take(x, jnp.asarray(idx).astype(int), axis=int(axis))\n",
    "torch": "def _gl_take(x, idx, axis):\n    idx = torch.as_tensor(idx).long()\n"
             "    picked = torch.index_select(x, int(axis), idx.reshape(-1))\n"
             "    return picked.reshape(x.shape[:int(axis)] + idx.shape + x.shape[int(axis) + 1:])\n",
    "tf": "def _gl_take(x, idx, axis):\n    return tf.gather(x, tf.cast(idx, tf.int64), axis=int(axis))\n",
}
_SCATTER = {
    "numpy": "def _gl_scatter_add(v, idx, axis, n):\n    idx, axis = np.asarray(idx).astype(int), int(axis)\n"
             "    out = np.zeros(v.shape[:axis] + (int(n),) + v.shape[axis + idx.ndim:])\n"
             "    np.add.at(out, (slice(None),) * axis + (idx,), v)\n    return out\n",
    "jax": "def _gl_scatter_add(v, idx, axis, n):\n    idx, axis = jnp.asarray(idx).astype(int), int(axis)\n"
           "    out = jnp.zeros(v.shape[:axis] + (int(n),) + v.shape[axis + idx.ndim:], dtype=v.dtype)\n"
           "    return out.at[(slice(None),) * axis + (idx,)].add(v)\n",
    "torch": "def _gl_scatter_add(v, idx, axis, n):\n    idx, axis = torch.as_tensor(idx).long(), int(axis)\n"
             "    flat = v.reshape(v.shape[:axis] + (-1,) + v.shape[axis + idx.dim():])\n"
             "    out = torch.zeros(v.shape[:axis] + (int(n),) + v.shape[axis + idx.dim():], dtype=v.dtype)\n"
             "    return out.index_add(axis, idx.reshape(-1), flat)\n",
    "tf": "def _gl_scatter_add(v, idx, axis, n):\n    axis = int(axis)\n"
          "    moved = tf.experimental.numpy.moveaxis(v, list(range(axis, axis + len(idx.shape))), "
          "list(range(len(idx.shape))))\n"
          "    rest = moved.shape[len(idx.shape):]\n"
          "    out = tf.tensor_scatter_nd_add(tf.zeros((int(n),) + tuple(rest), dtype=v.dtype), "
          "tf.reshape(tf.cast(idx, tf.int64), (-1, 1)), tf.reshape(moved, (-1,) + tuple(rest)))\n"
          "    return tf.experimental.numpy.moveaxis(out, 0, axis)\n",
}

register_operation(TensorOperation("einsum", (
    TensorRule(Einsum, _einsum, ('einsum: Ā = einsum("o,s₂->s₁", Ȳ, B) (the cotangent\'s letters swapped with A\'s)',
                                 r"\bar{A}_{s_1} = \sum \bar{Y}_{o} B_{s_2}"), _einsum_tangent,
               export=frameworks(_einsum_export("jnp"), _einsum_export("torch"), _einsum_export("tf"))),)))
register_operation(TensorOperation("reshape", (
    TensorRule(Reshape, _reshape, ("reshape: X̄ = reshape(Ȳ, shape of X)", r"\bar{X} = \operatorname{reshape}(\bar{Y})"),
               _reshape_tangent, export=frameworks(f"jnp.reshape({{0}}, {_SIZES})", f"torch.reshape({{0}}, {_SIZES})",
                                                   f"tf.reshape({{0}}, {_SIZES})")),)))
register_operation(TensorOperation("take", (
    TensorRule(Take, _take, ("take: X̄ = scatter_add(Ȳ, idx) (each slice added where it was taken)",
                             r"\bar{X} = \operatorname{scatter}(\bar{Y})"), _take_tangent, numpy=take_numbers,
               export=frameworks(*3 * ("_gl_take({0}, {1}, {i2})",), **_TAKE)),
    TensorRule(ScatterAdd, _scatter, ("scatter_add: V̄ = take(Ȳ, idx)", r"\bar{V} = \operatorname{take}(\bar{Y})"),
               _scatter_tangent, numpy=scatter_numbers,
               export=frameworks(*3 * ("_gl_scatter_add({0}, {1}, {i2}, {3})",), **_SCATTER)),
)))
