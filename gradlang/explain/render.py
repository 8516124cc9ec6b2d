"""Four renderings of one Explanation: plain text, LaTeX, a rich tree, JSON.

All four draw the Node trees of layout.py, so folding, numbering, references
and the depth limit are the same everywhere; each format only decides how a
step, its rule and its note look.
"""

from __future__ import annotations

from rich.text import Text
from rich.tree import Tree

from gradlang.expr.values import to_symbolic
from gradlang.explain.why import why_zero
from gradlang.explain.layout import Node, abbreviations, layout, shorten
from gradlang.explain.text import latex, plain

_RULE_WIDTH = 64      # plain text: rule names start in this column when they fit
_STYLES = {"rule": "italic cyan", "stop": "bold red", "note": "dim", "summary": "bold", "number": "dim"}


def rule_label(step) -> str:
    """The rule's name as shown beside the step ("chain (exp)" for a chain step)."""
    return f"{step.rule} ({step.outer})" if step.outer else step.rule


def call_text(request, show=plain) -> str:
    """The derivative call in gradlang syntax, e.g. diff(x^2, x, 2)."""
    expr = show(to_symbolic(request.expr))
    if request.operation == "diff":
        specs = [plain(s) if n == 1 else f"{plain(s)}, {n}" for s, n in request.specs]
        return f"diff({expr}, {', '.join(specs)})"
    return f"{request.operation}({expr}, {plain(to_symbolic(request.wrt))})"


class _Shown:
    """Expression text with long stops abbreviated; shared by the text formats."""

    def __init__(self, explanation, printer):
        self.names = abbreviations(explanation)
        self.printer = printer

    def __call__(self, value) -> str:
        return self.printer(shorten(value, self.names))

    def legend(self) -> list[tuple[str, str]]:
        return [(self.printer(name), self.printer(stop)) for stop, name in self.names.items()]


def _wrapped(text: str, atom: bool) -> str:
    return text if atom else f"({text})"


def _equation(node: Node, show) -> str:
    step = node.step
    expr = _wrapped(show(step.expr), step.expr.is_Atom or step.expr.is_Function)
    return f"d/d{plain(step.variable)} {expr} = {show(step.result)}"


def _remark(node: Node) -> str:
    if node.see:
        return f"as derived in step {node.see}"
    if node.stopped:
        return f"{plain(node.step.variable)} appears here only inside stop_gradient (step {node.stopped}): 0"
    if node.hidden:
        return f"{node.hidden} more step{'s' if node.hidden > 1 else ''} below the depth limit"
    return node.step.note


def _why(root: Node) -> list[str]:
    """The reason an exactly-zero component is zero (at most one sentence)."""
    step = root.step
    if step.result != 0:
        return []
    reason = why_zero(step.expr, step.variable)
    return [reason] if reason else []


def _walk(node: Node):
    yield node
    for child in node.children:
        yield from _walk(child)


# --- plain text -------------------------------------------------------------


def _plain_lines(node: Node, show) -> list[str]:
    indent = "   " * node.level
    head = f"{indent}{node.number}. {_equation(node, show)}"
    lines = [f"{head.ljust(_RULE_WIDTH)}  [{rule_label(node.step)}]"]
    remark = _remark(node)
    if remark:
        lines.append(f"{indent}{' ' * (len(node.number) + 2)}{remark}")
    for child in node.children:
        lines.extend(_plain_lines(child, show))
    return lines


def to_plain(explanation) -> str:
    """Numbered, indented lines with the rule name beside each step."""
    show = _Shown(explanation, plain)
    lines = [f"{call_text(explanation.request, show)}: {explanation.summary}"]
    lines += [f"definition: {text}" for text in _definitions(explanation)]
    lines += [f"where {name} = {stop}" for name, stop in show.legend()]
    for labels, root in layout(explanation):
        if len(explanation.steps) > 1 or len(labels) > 1:
            lines.append(", ".join(labels) + ":")
        lines.extend(_plain_lines(root, show))
        lines.extend(f"why zero: {reason}" for reason in _why(root))
    lines.append(f"blocked: {explanation.blocked_note}")
    return "\n".join(lines)


# --- LaTeX ------------------------------------------------------------------


_LATEX_TEXT_ESCAPES = str.maketrans({
    "\\": r"\textbackslash{}", "_": r"\_", "^": r"\^{}", "#": r"\#", "%": r"\%",
    "&": r"\&", "$": r"\$", "{": r"\{", "}": r"\}",
})


def _latex_text(text: str) -> str:
    """Text safe inside \\text{...} (one pass, so no escape is escaped again)."""
    return text.translate(_LATEX_TEXT_ESCAPES)


def _latex_row(node: Node, show) -> str:
    step = node.step
    lhs = r"\frac{d}{d %s}\left(%s\right)" % (latex(step.variable), show(step.expr))
    annotation = f"({node.number}) {rule_label(step)}"
    remark = _remark(node)
    if remark:
        annotation += f": {remark}"
    indent = r"\qquad " * node.level
    return rf"{indent}{lhs} &= {show(step.result)} && \text{{{_latex_text(annotation)}}}"


def to_latex(explanation) -> str:
    """An align* block: one row per step, the rule as \\text beside it."""
    show = _Shown(explanation, latex)
    rows = [rf"&\text{{{_latex_text(explanation.summary)}}}"]
    rows += [rf"&\text{{definition: \texttt{{{_latex_text(text)}}}}}" for text in _definitions(explanation)]
    rows += [rf"&\text{{where }} {name} = {stop}" for name, stop in show.legend()]
    for labels, root in layout(explanation):
        if len(explanation.steps) > 1 or len(labels) > 1:
            rows.append(rf"&\text{{{_latex_text(', '.join(labels))}:}}")
        rows.extend(_latex_row(node, show) for node in _walk(root))
        rows.extend(rf"&\text{{why zero: {_latex_text(reason)}}}" for reason in _why(root))
    rows.append(rf"&\text{{blocked: {_latex_text(explanation.blocked_note)}}}")
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"


# --- rich -------------------------------------------------------------------


def _rich_label(node: Node, show) -> Text:
    step = node.step
    text = Text(f"{node.number}. ", style=_STYLES["number"])
    text.append(_equation(node, show))
    text.append("   ")
    text.append(rule_label(step), style=_STYLES["stop" if step.rule == "stop_gradient" else "rule"])
    remark = _remark(node)
    if remark:
        text.append("\n" + remark, style=_STYLES["note"])
    return text


def _rich_add(tree: Tree, node: Node, show) -> None:
    branch = tree.add(_rich_label(node, show))
    for child in node.children:
        _rich_add(branch, child, show)


def to_rich(explanation) -> Tree:
    """A rich Tree: the summary on top, one branch per step, rule names beside."""
    show = _Shown(explanation, plain)
    tree = Tree(Text(explanation.summary, style=_STYLES["summary"]), guide_style="dim")
    for text in _definitions(explanation):
        tree.add(Text(f"definition: {text}", style=_STYLES["note"]))
    for name, stop in show.legend():
        tree.add(Text(f"where {name} = {stop}", style=_STYLES["note"]))
    for labels, root in layout(explanation):
        parent = tree
        if len(explanation.steps) > 1 or len(labels) > 1:
            parent = tree.add(Text(", ".join(labels), style=_STYLES["summary"]))
        _rich_add(parent, root, show)
        for reason in _why(root):
            parent.add(Text(f"why zero: {reason}", style=_STYLES["note"]))
    tree.add(Text(f"blocked: {explanation.blocked_note}"))
    return tree


# --- JSON -------------------------------------------------------------------


def _json_node(node: Node) -> dict:
    step = node.step
    data = {"rule": step.rule, "expr": plain(step.expr), "variable": plain(step.variable),
            "result": plain(step.result), "substeps": [_json_node(c) for c in node.children]}
    for key, value in (("outer", step.outer), ("note", step.note), ("see", node.see)):
        if value:
            data[key] = value
    if step.blocked is not None:
        data["blocked"] = plain(step.blocked)
    if node.stopped:
        data["note"] = f"{plain(node.step.variable)} appears here only inside stop_gradient (step {node.stopped}): 0"
    if node.hidden:
        data["hidden"] = node.hidden
    return data


def to_json(explanation) -> dict:
    """The whole call as one step (rule = the operation) whose substeps are the components."""
    request = explanation.request
    substeps = []
    for labels, root in layout(explanation):
        why = _why(root)
        substeps.append({"components": list(labels), **_json_node(root), **({"why_zero": why[0]} if why else {})})
    return {"rule": request.operation, "expr": plain(to_symbolic(request.expr)), "call": call_text(request),
            "result": plain(request.result), "summary": explanation.summary, "substeps": substeps,
            "blocked": plain(explanation.blocked), "blocked_note": explanation.blocked_note,
            "definitions": _definitions(explanation)}


def _definitions(explanation) -> list[str]:
    """The user functions unfolded into the differentiated expression, as written."""
    return [" ".join(text.split()) for text in getattr(explanation.request, "definitions", ())]
