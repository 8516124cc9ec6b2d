"""The tensor engine's operations that are no function of the language: their rules, one record each.

`A @ B`, indexing (`v[k]`, `M[i, j]`, `M[i, :]`, `M[:, j]`), dot, outer,
transpose, sum, diag, trace, det, logdet, inv, lists and the constant builders are
builtins or subscripts of the evaluator (core/tensor_values.py,
core/subscripts.py), not primitives of the registry; each `TensorOperation`
below is the one place of its rules at symbolic size. The reverse-mode rules
(`adjoint(node, ybar, k)`, record.TensorRule) as a teacher states them:

    matmul      C = A B        Ā = C̄ Bᵀ,  B̄ = Aᵀ C̄
    dot         c = uᵀv        ū = c̄ v,   v̄ = c̄ u
    outer       C = u vᵀ       ū = C̄ v,   v̄ = C̄ᵀ u
    transpose   C = Aᵀ         Ā = C̄ᵀ
    sum         c = Σ u        ū = c̄ 𝟙
    prod        c = ∏ u        ū_i = c̄ ∏_{j≠i} u_j (exact at zeros, written with where)
    sum(M, a)   c = M 𝟙 (a=1)  M̄ = c̄ 𝟙ᵀ (rows; columns alike)
    index       c = z_k        z̄ = c̄ e_k
    M[i, :]     c = row i      M̄ = e_i c̄ᵀ;   M[:, j]: M̄ = c̄ e_jᵀ
    diag        C = diag(v)    v̄ = diagonal of C̄ (through the identity: (C̄ ⊙ I) 𝟙)
    diag(A)     c = diagonal   Ā = diag(c̄)
    list        c = [u, v, …]  ū = c̄_0, v̄ = c̄_1, …
    trace       c = tr(A)      Ā = c̄ I
    det         c = det(A)     Ā = c̄ cof(A), cof(A) = det(A) A⁻ᵀ the cofactors (finite where A is singular)
    cofactors   C = cof(A)     Ā = ⟨C̄, A⁻ᵀ⟩ C − C C̄ᵀ A⁻ᵀ
    logdet      c = log det(A) Ā = c̄ A⁻ᵀ
    inv         C = A⁻¹        Ā = −A⁻ᵀ C̄ A⁻ᵀ

Each record also holds the operation's tangent for forward mode
(record.TensorRule.tangent, written with tangents.py). onehot, eye, ones,
zeros, argmax and argmin are constants to differentiation: their records say
so (`constant=True`) and have neither rule, so no pass enters them.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import DiffNeedsComponents
from gradlang.expr.component_linalg import log_det
from gradlang.expr.functions import Where
from gradlang.expr.primitives import TensorOperation, TensorRule, frameworks, register_operation
from gradlang.expr.primitives.tangents import TOO_HIGH, DiagTangent, inner, linear, no_vector, sum_of
from gradlang.expr.engine import broadcast, nodes as t, rank, shape_of

full, spread = broadcast.full, broadcast.spread  # the engine's, imported on first use (issue #41)
from gradlang.lazy import np


def _matmul(node, ybar, k):
    a, b = node.args
    ybar = full(ybar, node.shape)
    ra, rb = rank(a), rank(b)
    if k == 0:
        if ra == 2 and rb == 2:
            return t.MatMul(ybar, t.Transpose(b))
        if ra == 2:  # A x: Ā = ȳ xᵀ
            return t.Outer(ybar, b)
        return t.MatMul(b, ybar)  # xᵀB as x @ B: x̄ = B ȳ
    if ra == 2 and rb == 2:
        return t.MatMul(t.Transpose(a), ybar)
    if ra == 2:  # A x: x̄ = Aᵀ ȳ
        return t.MatMul(t.Transpose(a), ybar)
    return t.Outer(a, ybar)  # x @ B: B̄ = x ȳᵀ


def _dot(node, ybar, k):
    return ybar * node.args[1 - k]


def _outer(node, ybar, k):
    ybar = full(ybar, node.shape)
    if k == 0:
        return t.MatMul(ybar, node.args[1])
    return t.MatMul(t.Transpose(ybar), node.args[0])


def _transpose(node, ybar, k):
    return t.Transpose(full(ybar, node.shape))


def _total(node, ybar, k):
    return ybar  # a scalar adjoint broadcasts over the summed shape


def _sum_axis(node, ybar, k):
    return None if k else spread(node, ybar)


def _entry(node, ybar, k):
    if k != 0:
        return None
    base = node.args[0]
    shape = shape_of(base)
    if len(shape) == 1:
        return ybar * t.OneHot(node.args[1], shape[0])
    i, j = node.args[1:]
    return ybar * t.Outer(t.OneHot(i, shape[0]), t.OneHot(j, shape[1]))


def _row(node, ybar, k):
    if k:
        return None
    m, n = shape_of(node.args[0])
    return t.Outer(t.OneHot(node.args[1], m), full(ybar, (n,)))


def _column(node, ybar, k):
    if k:
        return None
    m, n = shape_of(node.args[0])
    return t.Outer(full(ybar, (m,)), t.OneHot(node.args[1], n))


def _diag(node, ybar, k):
    if len(node.shape) == 1:  # the diagonal of a matrix: Ā = diag(ȳ)
        return t.Diag(full(ybar, node.shape))
    n = node.shape[0]
    return t.MatMul(full(ybar, node.shape) * t.Eye(n), t.Ones(n))


def _trace(node, ybar, k):
    return ybar * t.Eye(shape_of(node.args[0])[0])


def _det(node, ybar, k):
    """ȳ cof(A), cof(A) = det(A) A⁻ᵀ the cofactors, finite where A is singular (as jax.grad of det); where ȳ
    carries 1/det(A) (log det(A) written out, 1/det(A)), ȳ det(A) A⁻ᵀ cancels to the teacher's A⁻ᵀ: A must be
    invertible there for the value itself."""
    scale = ybar * node
    if scale.as_powers_dict().get(node, 0) > 0:
        return ybar * t.Cofactor(node.args[0])
    return scale * t.Transpose(t.Inv(node.args[0]))


def _cofactor(node, ybar, k):
    """C = det(A) A⁻ᵀ: Ā = ⟨C̄, A⁻ᵀ⟩ C − C C̄ᵀ A⁻ᵀ (the product rule over det(A) and A⁻ᵀ)."""
    inverse_t = t.Transpose(t.Inv(node.args[0]))
    ybar = full(ybar, node.shape)
    return t.Total(ybar * inverse_t) * node - t.MatMul(t.MatMul(node, t.Transpose(ybar)), inverse_t)


def cofactor_matrix(a):
    """det(A) A⁻ᵀ of a float matrix by whole-array NumPy (expr/tensor/numbers.py), finite where A is singular.

    Where the inverse is finite it is NumPy's det times its inverse (what the
    formula det(A) A⁻ᵀ gives); elsewhere it comes from the SVD A = U S Vᵀ as
    det(U) det(Vᵀ) U adj(S) Vᵀ, adj(S) holding each singular value's product of
    the others (no division), which jax.grad of jnp.linalg.det gives to
    rounding. A matrix with an inf or a nan has none: nan."""
    import numpy

    with numpy.errstate(all="ignore"):
        try:
            product = numpy.linalg.det(a) * numpy.transpose(numpy.linalg.inv(a))
            if numpy.isfinite(product).all():
                return product
        except numpy.linalg.LinAlgError:  # singular to NumPy's LU
            pass
        if not numpy.isfinite(a).all():
            return numpy.full(numpy.shape(a), numpy.nan)
        u, s, vt = numpy.linalg.svd(a)
        before = numpy.concatenate(([1.0], numpy.cumprod(s)[:-1]))
        after = numpy.concatenate((numpy.cumprod(s[::-1])[:-1][::-1], [1.0]))
        sign = numpy.sign(numpy.linalg.det(u) * numpy.linalg.det(vt))
        return sign * numpy.matmul(u * (before * after), vt)


def _logdet(node, ybar, k):
    return ybar * t.Transpose(t.Inv(node.args[0]))


def _inv(node, ybar, k):
    inverse_t = t.Transpose(node)
    return -t.MatMul(t.MatMul(inverse_t, full(ybar, node.shape)), inverse_t)


def _listed(node, ybar, k):
    """A list [u, v, …] of scalars: each entry receives its entry of the adjoint (a scalar ȳ stands for ȳ 𝟙)."""
    if k < node.first or rank(ybar) == 0:
        return None if k < node.first else ybar
    return t.Entry(ybar, *node.position(k))


def others(u):
    """Each component's product of all the others (∂prod(u)/∂u), in the language's where, exact at zeros
    in value and in its own derivatives, as JAX's (whose rule multiplies the products before and after):
    prod(u)/u_i at a non-zero u_i; at a zero, the product of the non-zeros if it is the only zero; at one of
    exactly two zeros, the other zero (the sum of the zeros less u_i) times that product, which is 0 there but
    has the right derivative by the other zero (the hessian's product of the rest); 0 at three zeros or more.
    No condition sits on its boundary at a point without zeros (the count is compared with 1.5 and 2.5), so
    evaluating it warns of no kink there."""
    zero = sp.Eq(u, 0)
    count = t.Total(Where(zero, 1, 0))
    rest = t.ProdOf(Where(zero, 1, u))
    other_zero = t.Total(Where(zero, u, 0)) - u
    at_zero = Where(count < sp.Rational(3, 2), rest, Where(count < sp.Rational(5, 2), other_zero * rest, 0))
    return Where(zero, at_zero, t.ProdOf(u) / Where(zero, 1, u))


def _prod(node, ybar, k):
    return ybar * others(node.args[0])


# --- tangents: tangent(node, d, vector), the vocabulary in tangents.py ---------------------------------


def _matmul_tangent(node, d, vector):
    a, b = node.args
    da, db = d
    if isinstance(da, DiagTangent) or isinstance(db, DiagTangent):
        return _diag_product(a, b, da, db)
    if vector:
        if rank(a) == 2 and rank(b) == 1 and da == 0:  # A x: A J_x
            return t.MatMul(a, db)
        if rank(a) == 1 and rank(b) == 2 and db == 0:  # x @ B: Bᵀ J_x
            return t.MatMul(t.Transpose(b), da)
        raise DiffNeedsComponents(TOO_HIGH)
    return sum_of(t.MatMul(da, b) if da != 0 else None, t.MatMul(a, db) if db != 0 else None)


def _diag_product(a, b, da, db):
    """diag(u) @ b = u ⊙ b (and a @ diag(u) = a ⊙ u): diag(b) J_u + diag(u) J_b, never the rank-three J of diag(u)."""
    if isinstance(da, DiagTangent) and isinstance(db, DiagTangent) or rank(a) + rank(b) != 3:
        raise DiffNeedsComponents(TOO_HIGH)  # diag(u) @ diag(v), or diag(u) @ M: a matrix by a vector
    if isinstance(da, DiagTangent):
        return sum_of(t.MatMul(t.Diag(b), da.of_u), t.MatMul(a, db) if db != 0 else None)
    return sum_of(t.MatMul(t.Diag(a), db.of_u), t.MatMul(t.Transpose(b), da) if da != 0 else None)


def _dot_tangent(node, d, vector):
    a, b = node.args
    da, db = d
    if vector:
        return sum_of(t.MatMul(b, da) if da != 0 else None, t.MatMul(a, db) if db != 0 else None)
    return sum_of(t.Dot(da, b) if da != 0 else None, t.Dot(a, db) if db != 0 else None)


def _listed_tangent(node, d, vector: bool):
    """[u, v, …]: the list of the entries' tangents; by a vector, row i is entry i's gradient (Σ e_i ∂u_iᵀ)."""
    if not vector:
        return node.with_entries(d[node.first:])
    if len(node.shape) != 1:
        raise DiffNeedsComponents(TOO_HIGH)
    length = node.shape[0]
    return sum_of(*(t.Outer(t.OneHot(i, length), e) for i, e in enumerate(d[node.first:]) if e != 0))


def _entry_tangent(node, d, vector):
    if vector:
        return t.MatMul(t.OneHot(node.args[1], shape_of(node.args[0])[0]), d[0])
    return t.Entry(d[0], *node.args[1:])


def _transpose_tangent(node, d, vector):
    return d[0] if rank(node) == 1 else no_vector(lambda m, e: t.Transpose(e[0]))(node, d, vector)


def _diag_tangent(node, d, vector):
    if vector and rank(node) == 2:
        return DiagTangent(d[0])  # J_u, for the product that reads it (forward.py)
    return no_vector(lambda m, e: t.Diag(e[0]))(node, d, vector)


def _outer_tangent(node, d):
    return sum_of(t.Outer(d[0], node.args[1]) if d[0] != 0 else None, t.Outer(node.args[0], d[1]) if d[1] != 0 else None)


_total_tangent = linear(lambda n, d: t.Total(d), lambda n, d: t.MatMul(t.Ones(shape_of(n.args[0])[0]), d))
# by a scalar only: by a vector each would be a tensor of rank three
_trace_tangent = no_vector(lambda n, d: t.Trace(d[0]))
_det_tangent = no_vector(lambda n, d: t.Total(t.Cofactor(n.args[0]) * d[0]))  # Jacobi: ⟨cof(A), dA⟩, at a singular A too
_cofactor_tangent = no_vector(  # C = det(A) A⁻ᵀ: dC = tr(A⁻¹ dA) C − C dAᵀ A⁻ᵀ
    lambda n, d: n * t.Trace(t.MatMul(t.Inv(n.args[0]), d[0])) - t.MatMul(t.MatMul(n, t.Transpose(d[0])),
                                                                            t.Transpose(t.Inv(n.args[0]))))
_logdet_tangent = no_vector(lambda n, d: t.Trace(t.MatMul(t.Inv(n.args[0]), d[0])))  # d log det(A) = tr(A⁻¹ dA)
_inv_tangent = no_vector(lambda n, d: -t.MatMul(t.MatMul(n, d[0]), n))
_sum_axis_tangent = no_vector(lambda n, d: t.SumAxis(d[0], n.args[1]))
_row_tangent = no_vector(lambda n, d: t.Row(d[0], n.args[1]))
_column_tangent = no_vector(lambda n, d: t.Column(d[0], n.args[1]))


def _prod_tangent(node, d, vector):
    return inner(others(node.args[0]), d[0], vector)


# --- the records ------------------------------------------------------------------------------------


def _operation(name: str, *rules: TensorRule) -> None:
    register_operation(TensorOperation(name, rules))


_operation("matmul", TensorRule(t.MatMul, _matmul, (
    "matmul: Ā = Ȳ Bᵀ, B̄ = Aᵀ Ȳ", r"\bar{A} = \bar{Y} B^{\top},\ \bar{B} = A^{\top} \bar{Y}"), _matmul_tangent,
    export=frameworks("jnp.matmul({0}, {1})", "torch.matmul({0}, {1})", "tf.tensordot({0}, {1}, axes=1)")))
_operation("dot", TensorRule(t.Dot, _dot, ("dot: ū = ȳ v, v̄ = ȳ u", r"\bar{u} = \bar{y} v,\ \bar{v} = \bar{y} u"),
                             _dot_tangent,
                             export=frameworks("jnp.dot({0}, {1})", "torch.dot({0}, {1})", "tf.tensordot({0}, {1}, axes=1)")))
_operation("outer", TensorRule(t.Outer, _outer, (
    "outer: ū = Ȳ v, v̄ = Ȳᵀ u", r"\bar{u} = \bar{Y} v,\ \bar{v} = \bar{Y}^{\top} u"), no_vector(_outer_tangent),
    export=frameworks("jnp.outer({0}, {1})", "torch.outer({0}, {1})", "tf.tensordot({0}, {1}, axes=0)")))
_operation("transpose", TensorRule(t.Transpose, _transpose, ("transpose: Ā = Ȳᵀ", r"\bar{A} = \bar{Y}^{\top}"),
                                   _transpose_tangent,
                                   export=frameworks("jnp.transpose({0})", "torch.t({0})", "tf.transpose({0})")))
_operation("sum",
           TensorRule(t.Total, _total, ("sum: ū = ȳ 𝟙", r"\bar{u} = \bar{y} \mathbf{1}"), _total_tangent,
                      export=frameworks("jnp.sum({0})", "torch.sum({0})", "tf.reduce_sum({0})")),
           TensorRule(t.SumAxis, _sum_axis, ("sum along an axis: M̄ = ȳ 𝟙ᵀ", r"\bar{M} = \bar{y} \mathbf{1}^{\top}"),
                      _sum_axis_tangent, export=frameworks("jnp.sum({0}, axis={i1})", "torch.sum({0}, dim={i1})",
                                                           "tf.reduce_sum({0}, axis={i1})")))
_INDEXED = "{0}[{rest_int}]"
_operation("index",
           TensorRule(t.Entry, _entry, ("index: z̄ = ȳ e_k", r"\bar{z} = \bar{y} e_k"), _entry_tangent,
                      export=frameworks(_INDEXED, _INDEXED, _INDEXED)),
           TensorRule(t.Row, _row, ("row: M̄ = e_i ȳᵀ", r"\bar{M} = e_i \bar{y}^{\top}"), _row_tangent,
                      export=frameworks("{0}[{i1}, :]", "{0}[{i1}, :]", "{0}[{i1}, :]")),
           TensorRule(t.Column, _column, ("column: M̄ = ȳ e_jᵀ", r"\bar{M} = \bar{y} e_j^{\top}"), _column_tangent,
                      export=frameworks("{0}[:, {i1}]", "{0}[:, {i1}]", "{0}[:, {i1}]")))
_operation("diag", TensorRule(t.Diag, _diag, tangent=_diag_tangent, export=frameworks(
    "jnp.diag({0})", "torch.diag({0})", "_gl_diag({0})",  # TensorFlow: one function each way
    tf="def _gl_diag(v):\n    return tf.linalg.diag(v) if len(v.shape) == 1 else tf.linalg.diag_part(v)\n")))


def _stacked(node) -> str:
    """A list's template: `_stack` of its entries (of rows, of planes, …), the prelude's stack of each framework."""
    fields = [f"{{{k}}}" for k in range(node.first, len(node.args))]
    return _stacks(fields, [int(n) for n in node.shape])


def _stacks(fields: list, shape: list) -> str:
    if len(shape) == 1:
        return f"_stack({', '.join(fields)})"
    step = len(fields) // shape[0]
    return "_stack(" + ", ".join(_stacks(fields[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + ")"


_operation("list", TensorRule(t.Literal, _listed, ("list: ū_k = ȳ_k", r"\bar{u}_k = \bar{y}_k"), _listed_tangent,
                              export=frameworks(_stacked, _stacked, _stacked)))
_operation("prod", TensorRule(t.ProdOf, _prod, ("prod: ū = ȳ ∏_{j≠i} u_j", r"\bar{u}_i = \bar{y} \prod_{j \neq i} u_j"),
                              _prod_tangent, export=frameworks("jnp.prod({0})", "torch.prod({0})", "tf.reduce_prod({0})")))
_operation("trace", TensorRule(t.Trace, _trace, ("trace: Ā = ȳ I", r"\bar{A} = \bar{y} I"), _trace_tangent,
                               export=frameworks("jnp.trace({0})", "torch.trace({0})", "tf.linalg.trace({0})")))
# the cofactors where TensorFlow has no function transform to take det's gradient by: det(A) A⁻ᵀ, invertible A only
_COFACTOR = {"tf": "def _gl_cofactor(A):\n    return tf.linalg.det(A) * tf.transpose(tf.linalg.inv(A))\n"}
_operation("det", TensorRule(t.Det, _det, ("det: Ā = ȳ det(A) A⁻ᵀ", r"\bar{A} = \bar{y} \det(A) A^{-\top}"),
                             _det_tangent,
                             export=frameworks("jnp.linalg.det({0})", "torch.linalg.det({0})", "tf.linalg.det({0})")),
           TensorRule(t.Cofactor, _cofactor, ("cofactors: Ā = ⟨C̄, A⁻ᵀ⟩ C − C C̄ᵀ A⁻ᵀ",
                                              r"\bar{A} = \langle \bar{C}, A^{-\top} \rangle C - C \bar{C}^{\top} A^{-\top}"),
                      _cofactor_tangent, numpy=cofactor_matrix,  # finite where A is singular
                      export=frameworks("jax.grad(jnp.linalg.det)({0})", "torch.func.grad(torch.linalg.det)({0})",
                                        "_gl_cofactor({0})", **_COFACTOR)))
# log det(A) from the sign and log of |det(A)|, so a large matrix does not overflow (section 6); not a real number
# where det(A) <= 0: NaN in the frameworks, gradlang's refusal as a ValueError in NumPy (which computes no gradient)
_LOGDET = {
    "numpy": "def _gl_logdet(A):\n    sign, logabs = np.linalg.slogdet(A)\n    if not sign > 0:\n"
             "        raise ValueError('logdet needs det(A) > 0')\n    return logabs\n",
    "jax": "def _gl_logdet(A):\n    sign, logabs = jnp.linalg.slogdet(A)\n    return jnp.where(sign > 0, logabs, jnp.nan)\n",
    "tf": "def _gl_logdet(A):\n    sign, logabs = tf.linalg.slogdet(A)\n"
          "    return tf.where(sign > 0, logabs, tf.constant(float('nan'), tf.float64))\n",
}
_operation("logdet", TensorRule(t.LogDet, _logdet, ("logdet: Ā = ȳ A⁻ᵀ", r"\bar{A} = \bar{y} A^{-\top}"),
                                _logdet_tangent, numpy=log_det,  # NumPy's slogdet: no overflow (section 6)
                                export=frameworks("_gl_logdet({0})", "torch.logdet({0})", "_gl_logdet({0})", **_LOGDET)))
_operation("inv", TensorRule(t.Inv, _inv, ("inv: Ā = −A⁻ᵀ Ȳ A⁻ᵀ", r"\bar{A} = -A^{-\top} \bar{Y} A^{-\top}"),
                             _inv_tangent,
                             export=frameworks("jnp.linalg.inv({0})", "torch.linalg.inv({0})", "tf.linalg.inv({0})")))


def _onehot_vector(k, n):
    """e_k of length n by whole-array NumPy (expr/tensor/numbers.py); of an index tensor k, one e_k per entry
    along a new last axis (section 3b)."""
    return (np.asarray(k).astype(int)[..., None] == np.arange(int(n))).astype(float)


_ONEHOT = {  # of an index or an index tensor: a last axis of size n (section 3b)
    "jax": "def _gl_onehot(k, n):\n    k = jnp.asarray(k).astype(int) % int(n)\n"
           "    return jnp.where(k[..., None] == jnp.arange(int(n)), 1.0, 0.0)\n",
    "torch": "def _gl_onehot(k, n):\n    k = torch.as_tensor(k).long() % int(n)\n"
             "    return torch.nn.functional.one_hot(k, int(n)).to(torch.float64)\n",
    "tf": "def _gl_onehot(k, n):\n    return tf.one_hot(tf.cast(k, tf.int64) % int(n), int(n), dtype=tf.float64)\n",
}
_operation("onehot", TensorRule(t.OneHot, constant=True, numpy=_onehot_vector, export=frameworks(
    *3 * ("_gl_onehot({0}, {1})",), **_ONEHOT)))
_CONSTANTS = {  # constants to differentiation: no adjoint, no tangent
    "eye": (t.Eye, frameworks("jnp.eye({0})", "torch.eye({0}, dtype=torch.float64)", "tf.eye({0}, dtype=tf.float64)")),
    "ones": (t.Ones, frameworks("jnp.ones(({all},))", "torch.ones(({all},), dtype=torch.float64)",
                                "tf.ones(({all},), dtype=tf.float64)")),
    "zeros": (t.Zeros, frameworks("jnp.zeros(({all},))", "torch.zeros(({all},), dtype=torch.float64)",
                                  "tf.zeros(({all},), dtype=tf.float64)")),
    "argmax": (t.ArgMax, frameworks("jnp.argmax({0})", "torch.argmax({0})", "tf.argmax({0})")),
    "argmin": (t.ArgMin, frameworks("jnp.argmin({0})", "torch.argmin({0})", "tf.argmin({0})")),
}
for _name, (_node, _spelled) in _CONSTANTS.items():
    _operation(_name, TensorRule(_node, constant=True, export=_spelled))
