"""explain: step-by-step derivations, and where and why the gradient stops.

`derivation(expr, symbol)` derives one scalar rule by rule (its root result
equals `derive.derivative`); `explain(request, depth)` explains a whole
diff/grad/jacobian/hessian/blocked call, one derivation per distinct
component, with a one-line summary and what the stops blocked; `to_plain`,
`to_latex`, `to_rich` and `to_json` render the same records. See docs/explain.md.
"""

from .engine import derivation
from .explanation import Explanation, explain
from .render import to_json, to_latex, to_plain, to_rich
from .steps import Step

__all__ = ["Explanation", "Step", "derivation", "explain", "to_json", "to_latex", "to_plain", "to_rich"]
