"""The DAG derivative engine: reverse accumulation over distinct subexpressions.

See docs/dag.md. Public interface:

- `build_dag`, `dag_size`: the DAG view of SymPy expressions;
- `reverse_grad(expr, symbols)`: the raw backward pass (shared, unevaluated);
- `derivative`, `gradient_list`, `jacobian_rows`, `hessian_rows`: derivatives as
  lists of components (derive.py shapes them);
- `forward_grad(exprs, symbols)`: forward mode, one pass per symbol;
- `tape(expr, symbols)`: forward and backward tables for the teaching view;
- `named_subexpressions(exprs, min_size)`: t1 = ..., t2 = ... (gradlang.expr.cse, re-exported).
"""

from gradlang.derive.dag.api import derivative, gradient_list, hessian_rows, jacobian_rows
from gradlang.derive.dag.forward import forward_grad
from gradlang.expr.graph import Dag, build_dag, dag_edges, dag_size
from gradlang.expr.cse import lambdify_cse, named_subexpressions
from gradlang.derive.dag.reverse import Backward, backward, reverse_grad
from gradlang.derive.dag.tape import Tape, tape

__all__ = [
    "Backward", "Dag", "backward", "build_dag", "dag_edges", "dag_size", "derivative", "forward_grad",
    "gradient_list", "hessian_rows", "jacobian_rows", "lambdify_cse", "named_subexpressions", "reverse_grad",
    "Tape", "tape",
]
