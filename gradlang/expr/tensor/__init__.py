"""Tensor-level values: vectors and matrices as whole SymPy nodes whose sizes may be symbols.

`nodes` holds the classes (`Var`, and the `TensorOp`s that are not elementwise),
`shapes` the symbolic shape rules, `spelling` how each form writes them,
`broadcast` a scalar's broadcast made explicit (for the adjoint rules),
`components` the entries of a tensor at literal sizes (the component engine's
representation, which is also the oracle), `numbers` whole-array NumPy.
"""

from gradlang.expr.tensor.nodes import OPS, TensorOp, Var, is_tensor, rank, shape_of  # noqa: F401
from gradlang.expr.tensor.shapes import describe, is_size, size_symbol  # noqa: F401
