"""The tensor nodes of square matrices: trace, det, logdet, inv and the cofactor matrix (their adjoints:
primitives/tensor_ops.py)."""

from __future__ import annotations

from sympy.printing.precedence import PRECEDENCE

from gradlang.expr.tensor.nodes import ScalarOp, TensorOp, shape_of
from gradlang.expr.tensor.spelling import Spelling


class Trace(ScalarOp):
    """`trace(A)`: the sum of the diagonal of a square matrix."""

    zero_in = (0,)
    nargs = 1
    spelling = Spelling("trace({0})", r"\operatorname{tr}\left({0}\right)", "tr({0})", "numpy.trace({0})")


class Det(ScalarOp):
    """`det(A)`: the determinant of a square matrix."""

    nargs = 1
    spelling = Spelling("det({0})", r"\det\left({0}\right)", "det({0})", "numpy.linalg.det({0})")


class LogDet(ScalarOp):
    """`logdet(A)`: log det(A), evaluated without forming det(A), as NumPy's slogdet (section 6)."""

    nargs = 1
    spelling = Spelling("logdet({0})", r"\log\det\left({0}\right)", "log det({0})", "_gl_logdet({0})")


class Inv(TensorOp):
    """`inv(A)`: the inverse of a square matrix."""

    nargs = 1
    spelling = Spelling("inv({0})", r"{0}^{-1}", "{0}⁻¹", "numpy.linalg.inv({0})", postfix=True)

    @property
    def shape(self):
        return shape_of(self.args[0])


class Cofactor(TensorOp):
    """The cofactor matrix of A, det(A) A⁻ᵀ (the transposed adjugate): the gradient of det(A).

    It is a node of its own, not det(A) times A⁻ᵀ, because it is finite where A
    is singular (a singular matrix has cofactors: jax.grad of jnp.linalg.det
    gives them), and A⁻¹ is not. It is spelled as the product it equals where A
    is invertible, which reads back; its numbers and components never divide by det(A)."""

    nargs = 1
    precedence = PRECEDENCE["Mul"]  # spelled as a product: a postfix mark or a power wraps it
    spelling = Spelling("det({0})*transpose(inv({0}))", r"\det\left({b0}\right) {0}^{-\top}", "det({b0}) {0}⁻ᵀ",
                        "_gl_cofactor({0})", postfix=True)

    @property
    def shape(self):
        return shape_of(self.args[0])
