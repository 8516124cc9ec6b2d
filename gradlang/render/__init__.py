"""Renderers: one set of results, four ways to show them (the language reference (docs/language.md), section 8).

- plain  (`to_plain`): gradlang source that reads back to the same value;
- latex  (`to_latex`): a math-mode fragment, stop_gradient as \\operatorname{sg};
- pretty (`pretty.result_renderable`, `pretty.to_pretty`): Unicode mathematics in rich;
- json   (`json.result_to_json`, `json.error_to_json`): JSON lines.
"""

from gradlang.render.latex import to_latex
from gradlang.render.plain import to_plain

__all__ = ["to_plain", "to_latex"]
