"""explain: step-by-step derivations, and where and why the gradient stops.

`derivation(expr, symbol)` derives one scalar rule by rule (its root result
equals `derive.derivative`); `explain(request, depth)` explains a whole
diff/grad/jacobian/hessian/blocked call, one derivation per distinct
component, with a one-line summary and what the stops blocked. The records
are data: gradlang.render prints them in every format. See docs/explain.md.
"""

from gradlang.explain.scalar.engine import derivation
from gradlang.explain.explanation import Explanation, explain
from gradlang.explain.scalar.steps import Step

__all__ = ["Explanation", "Step", "derivation", "explain"]
