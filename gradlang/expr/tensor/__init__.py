"""Tensor-level values: vectors and matrices as whole SymPy nodes whose sizes may be symbols.

`nodes` holds the classes (`Var`, and the `TensorOp`s that are not elementwise),
`shapes` the symbolic shape rules, `spelling` how each form writes them,
`broadcast` a scalar's broadcast made explicit (for the adjoint rules),
`components` the entries of a tensor at literal sizes (the component engine's
representation, which is also the oracle), `numbers` whole-array NumPy.

Importing one module of the package loads no other (issue #41): the names below are read on first use
(PEP 562), and the rest of gradlang reaches the engine through expr/engine.py.
"""

_NAMES = {"OPS": "nodes", "TensorOp": "nodes", "Var": "nodes", "is_tensor": "nodes", "rank": "nodes",
          "shape_of": "nodes", "describe": "shapes", "is_size": "shapes", "size_symbol": "shapes"}


def __getattr__(name: str):
    """`from gradlang.expr.tensor import Var` as before, nodes.py imported then."""
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
