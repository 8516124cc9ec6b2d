"""explain: step-by-step derivations, and where and why the gradient stops.

`derivation(expr, symbol)` derives one scalar rule by rule; `explain(request)`
explains a whole diff/grad/jacobian/hessian/blocked call, component by
component, with a one-line summary and what the stops blocked; the renderers
show the same records as plain text, LaTeX, JSON or a rich tree.
"""

from .engine import derivation
from .steps import Step

__all__ = ["Step", "derivation"]
