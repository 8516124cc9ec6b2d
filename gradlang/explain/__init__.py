"""explain: step-by-step derivations, and where and why the gradient stops.

`derivation(expr, symbol)` derives one scalar rule by rule (its root result
equals `derive.derivative`); `explain(request, depth)` explains a whole
diff/grad/jacobian/hessian/blocked call, one derivation per distinct
component, with a one-line summary and what the stops blocked; `to_plain`,
`to_latex`, `to_rich` and `to_json` render the same records. See docs/explain.md.
"""

from gradlang.explain.engine import derivation
from gradlang.explain.explanation import Explanation, explain
from gradlang.explain import render as _render
from gradlang.explain.steps import Step


def to_plain(explanation) -> str:
    """Plain text of an Explanation, or of another view that renders itself (backward)."""
    return explanation.to_plain() if hasattr(explanation, "to_plain") else _render.to_plain(explanation)


def to_latex(explanation) -> str:
    return explanation.to_latex() if hasattr(explanation, "to_latex") else _render.to_latex(explanation)


def to_rich(explanation):
    return explanation.to_rich() if hasattr(explanation, "to_rich") else _render.to_rich(explanation)


def to_json(explanation) -> dict:
    return explanation.to_json() if hasattr(explanation, "to_json") else _render.to_json(explanation)


__all__ = ["Explanation", "Step", "derivation", "explain", "to_json", "to_latex", "to_plain", "to_rich"]
