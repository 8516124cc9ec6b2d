"""Derivations (explain's Explanation records) in the four formats.

Registered as the renderers of `Explanation` (records.py): each is called with the
calling printer and prints every expression through it. All four draw the Node
trees of explain/layout.py, so folding, numbering, references and the depth
limit are the same everywhere; each format only decides how a step, its rule
and its note look. rich is imported only when a tree is drawn.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.values import elements, shape_of, to_symbolic
from gradlang.explain.scalar.components import step_operator
from gradlang.explain.ledger.arithmetic import in_builtins
from gradlang.explain.ledger.components import adjoint_value, removed_value, written
from gradlang.explain.ledger.words import term_lines
from gradlang.explain.layout import Form, Node, layout, more_line, walk_nodes
from gradlang.render import checked
from gradlang.explain.note import Note, note
from gradlang.render.latex_break import LATEX_LINE as _LATEX_LINE, LHS_HEAD as _LHS_HEAD, breakable as _breakable, pieces as _pieces
from gradlang.render.latex import split_component, text_escape as _latex_text, to_latex as latex_symbol
from gradlang.render.notes import latex_note, latex_rows, plain_note
from gradlang.render.plain import derivation_text, in_derivation, to_plain as plain
from gradlang.render import vector_lines
from gradlang.render.plain_break import broken, simplified_lines, step_lines, titled
from gradlang.render.records import renders

_RULE_WIDTH = 64      # plain text: rule names start in this column when they fit
_RICH_WIDTH = 90      # pretty: columns of a ledger line (a 100-column terminal less the tree's guides)
# pretty: nothing a reader needs is dimmed (only the tree's guides and the depth line, which is an aside)
_STYLES = {"rule": "italic cyan", "stop": "bold red", "note": "dim", "summary": "bold"}


def rule_label(step) -> str:
    """The rule's name as shown beside the step ("chain (exp)" for a chain step)."""
    return f"{step.rule} ({step.outer})" if step.outer else step.rule


_UNBROKEN_TITLE = 80  # the same for a formula that is not a sum, which a title cannot break (100 columns less the call)
_LONG_TITLE = 160  # characters of a formula the title writes out; past it, the user's name for it (loss), or its text


def call_text(request, show=plain) -> str:
    """The derivative call in gradlang syntax, e.g. diff(x^2, x, 2), or grad(x*y, [x, y])[1] for a selection;
    in the user's names alone (show.title), as it stands above the lines that introduce any other."""
    whole = getattr(request, "whole", None)
    if whole is not None:
        return call_text(whole, show) + "[" + ", ".join(str(i) for i in request.indices) + "]"
    from gradlang.explain.tensor.constants import holds_constant_array  # its entries never print: a title names it

    show = getattr(show, "title", show)
    formula = to_symbolic(request.expr)
    expr = show(formula)
    # SwAV's loss: four lines of formula; EM's Q(mu1, mu2) eight; I-JEPA's one line of 121 columns, not a sum
    # (a title breaks only between the terms of a sum: render/plain_break.titled)
    if (len(expr) > _LONG_TITLE or len(expr) > _UNBROKEN_TITLE and not isinstance(formula, sp.Add)
            or holds_constant_array(formula)):
        written = getattr(request, "text", "")
        if getattr(request, "named", ""):
            expr = show(sp.Symbol(request.named))
        elif written and len(written) < len(expr):
            expr = written
    if request.operation == "diff":
        specs = [show(s) if n == 1 else f"{show(s)}, {n}" for s, n in request.specs]
        return f"diff({expr}, {', '.join(specs)})"
    variables = _variables(to_symbolic(request.wrt), show)
    if getattr(request, "of_gradient", False):  # a hessian, as written (core/explaining.of_gradients)
        return f"jacobian(grad({expr}, {variables}), {variables})"
    return f"{request.operation}({expr}, {variables})"


def _variables(wrt, show) -> str:
    """The variables by their declared name (x for [x[0], x[1], x[2]]) when they are all of it, in order."""
    if isinstance(wrt, tuple):  # a grad by a list of scalars, as the tensor pass records it
        return "[" + ", ".join(show(w) for w in wrt) + "]"
    items = elements(wrt) if shape_of(wrt) else [wrt]
    names = [split_component(getattr(e, "name", "")) for e in items]
    bases = {n[0] for n in names if n is not None}
    if shape_of(wrt) and None not in names and len(bases) == 1:
        base = bases.pop()
        expected = [f"{base}[{i}]" for i in range(len(items))] if len(shape_of(wrt)) == 1 else [
            f"{base}[{i}, {j}]" for i in range(shape_of(wrt)[0]) for j in range(shape_of(wrt)[1])]
        if [e.name for e in items] == expected:
            return base
    return show(wrt)


class _Shown:
    """Expressions in the explanation's own form (explain/layout.py's Form), through the calling printer."""

    def __init__(self, explanation, printer):
        self.form = Form(explanation)
        self.printer = printer

    def __call__(self, value) -> str:
        return self.printer(self.form(value))

    def title(self, value) -> str:
        """In the user's names alone (a title: no let or legend has introduced a letter yet)."""
        return self.printer(self.form.titled(value))

    def bare(self, value) -> str:
        """Without the vector derivation's display names (a let's own value: δ = r − q, not δ = δ)."""
        return self.printer(self.form(value, display=False))

    def legend(self) -> list[tuple[str, str]]:
        """Each stop's name once, with the stop as the formula writes it (the first of its spellings)."""
        first = {}
        for stop, name in self.form.names.items():
            first.setdefault(name, stop)
        return [(self.printer(name), self.printer(self.form(stop, stops=False))) for name, stop in first.items()]


def _wrapped(text: str, atom: bool) -> str:
    return text if atom else f"({text})"


def _equation(node: Node, show) -> str:
    step = node.step
    expr = _wrapped(show(step.expr), step.expr.is_Atom or step.expr.is_Function)
    return f"{step_operator(step.variable)} {expr} = {show(step.result)}"


def _given(step, show) -> str:
    """The rule's letters instantiated: u = x^2, v = stop_gradient(x)."""
    return ", ".join(f"{name} = {show(e)}" for name, e in step.given)


def _remark(node: Node, show, latex: bool = False) -> str:
    """The step's note and instantiated rule (u = …); in LaTeX, the words as text and the expressions as math."""
    spell = (lambda n: latex_note(n, show)) if latex else (lambda n: plain_note(n, show))
    if node.see and node.alike and node.step.rule == "stop_gradient":
        return ""  # the stop was said to be a constant at its first step: = 0 [stop_gradient] says the rest
    if node.see:
        return f"the same rules as step {node.see}, the same result" if node.alike else f"as derived in step {node.see}"
    if node.stopped:
        return spell(note(node.step.variable, f" appears here only inside stop_gradient (step {node.stopped}): 0"))
    if latex:
        given = ", ".join(f"${latex_symbol(sp.Symbol(name))} = {_breakable(e, show)}$" for name, e in node.step.given)
    else:
        given = _given(node.step, show)
    said = spell(node.step.note)
    text = f"{said}   {given}" if given and said else (given or said)
    if node.hidden:
        more = f"{node.hidden} more step{'s' if node.hidden > 1 else ''} below the depth limit"
        return f"{text}; {more}" if text else more
    return text


def _why(explanation, root: Node) -> list:
    """The reason explain gave for an exactly-zero component (at most one Note)."""
    reason = dict(zip(explanation.steps, explanation.why)).get(root.step)
    return [reason] if reason else []


def _simpler(explanation, root: Node) -> list:
    """The simpler form of a component's result, if explain found one (at most one)."""
    forms = dict(zip(explanation.steps, explanation.simplified))
    simpler = forms.get(root.step)
    return [simpler] if simpler is not None else []


def _walk(node: Node):
    yield from walk_nodes(node)


# --- plain text -------------------------------------------------------------


def _plain_lines(node: Node, show, header: str = "") -> list[str]:
    """The step and those below it; `header` (a component's label, `∂²/∂x₁∂x₀:`) opens the step's own line."""
    indent = "   " * node.level
    step = node.step
    lhs = _equation(node, show).removesuffix(f" = {show(step.result)}")
    lead = f"{header} {indent}{node.number}. " if header else f"{indent}{node.number}. "
    lines = step_lines(lead, lhs, show(step.result), f"[{rule_label(step)}]", _RULE_WIDTH)
    remark = _remark(node, show)
    if remark:
        lines.append(f"{indent}{' ' * (len(node.number) + 2)}{remark}")
    for child in node.children:
        lines.extend(_plain_lines(child, show))
    return lines


def _component_lines(root: Node, show, header: str) -> list[str]:
    """A component's derivation under its label; a derivation of one step that fits the page on the label's
    line (a Hessian of x₀x₁x₂ by components was 12 labels over 12 one-step derivations, 32 lines)."""
    if not header:
        return _plain_lines(root, show)
    if not root.children:
        lines = _plain_lines(root, show, header)
        if len(lines[0]) <= vector_lines.WIDTH:
            return lines
    return [header] + _plain_lines(root, show)


@renders("Explanation", "plain")
def plain_text(printer, explanation) -> str:
    """Numbered, indented lines with the rule name beside each step, stops written `sg(u)`."""
    show = _Shown(explanation, in_derivation(printer).doprint)
    lines = titled(f"{call_text(explanation.request, show)}:", explanation.summary)
    lines += [line for text in _definitions(explanation) for line in broken("definition:", text, " = ")]
    if explanation.vector is not None:
        lines += vector_lines.plain_lines(explanation.vector, show, show.legend())
    else:
        lines += [f"where {name} = {stop}" for name, stop in show.legend()]
    for labels, root in layout(explanation):
        header = ", ".join(labels) + ":" if len(explanation.steps) > 1 or len(labels) > 1 else ""
        lines.extend(_component_lines(root, show, header))
        lines.extend(line for simpler in _simpler(explanation, root) for line in simplified_lines(show(simpler)))
        lines.extend(f"why zero: {plain_note(reason, show)}" for reason in _why(explanation, root))
    for head, *said in _ledger(explanation):
        lines += ledger_lines("", head, show)
        lines += [line for verdict in said for line in ledger_lines("   ", verdict, show)]
    lines += [more] if (more := more_line(explanation)) else []
    lines += [checked.plain_line(explanation.check)] if explanation.check is not None else []
    return "\n".join(lines)


def ledger_lines(lead: str, said, show, width: int = vector_lines.WIDTH) -> list[str]:
    """A ledger line that fits the page: broken before a + or − outside every bracket of its formulas (a
    removed term of two terms, DiCE's, on two lines; never in its words, "kept + removed"), each further
    line indented under its words."""
    line = lead + plain_note(said, show)
    if len(line) <= width:
        return [line]
    spans, at = [], len(lead)
    for words, parts in said.spans():
        length = len(Note(tuple(parts)).spelled(show))
        spans += [] if words else [(at, at + length)]
        at += length
    pieces = term_lines(line, width, width - len(lead) - 3, spans)
    return pieces[:1] + [f"{lead}   {piece}" for piece in pieces[1:]]


# --- LaTeX ------------------------------------------------------------------


def _latex_rows(node: Node, show) -> list[str]:
    """The step's equation (broken to fit the page), then its rule and remark as text.

    Every row starts in the align's second column (left-aligned): steps are
    different equations, and a shared first column would add the widest
    left side of the whole derivation to every row's width.
    """
    step = node.step
    d = r"\partial" if "[" in plain(step.variable) else "d"
    indent = r"\qquad " * node.level
    lhs = r"\frac{%s}{%s %s}\left(%s\right)" % (d, d, latex_symbol(step.variable), show(step.expr))
    rhs = _pieces(step.result, show, _LATEX_LINE - _LHS_HEAD - 4 * node.level)  # after the indent and \qquad
    if step.rule == "stop_gradient" and step.result == 0:
        rhs = [r"\underbrace{0}_{\text{stop}}"]  # the stop acts here: its derivative is set to 0
    if len(plain(step.expr)) + len(plain(step.result)) <= _LATEX_LINE:
        rows = [rf"&{indent}{lhs} = {rhs[0]} \\"]
    else:
        rows = [rf"&{indent}{piece} \\" for piece in _pieces_lhs(step, show, d, node.level)]
        rows += [rf"&{indent}\qquad = {rhs[0]} \\"]
    rows += [rf"&{indent}\qquad\quad {piece} \\" for piece in rhs[1:]]
    annotation = _latex_text(f"({node.number}) {rule_label(step)}")
    remark = _remark(node, show, latex=True)
    if remark:
        annotation += f": {remark}"
    return rows + [rf"\intertext{{\sloppy\small {annotation}}}"]


def _pieces_lhs(step, show, d, level: int) -> list[str]:
    """The left side ∂/∂x of a long expression, broken like a result."""
    pieces = _pieces(step.expr, show, _LATEX_LINE - _LHS_HEAD - 4 * level)
    head = r"\frac{%s}{%s %s}\Bigl(" % (d, d, latex_symbol(step.variable))
    if len(pieces) == 1:
        return [head + pieces[0] + r"\Bigr)"]
    return [head + pieces[0]] + [r"\quad " + p for p in pieces[1:-1]] + [r"\quad " + pieces[-1] + r"\Bigr)"]


def _intertext(text: str, small: bool = False) -> str:
    """A paragraph between the equations: it wraps, so no note runs off the page."""
    size = r"\small" if small else ""
    return rf"\intertext{{\sloppy{size} {_latex_text(text)}}}"


@renders("Explanation", "latex")
def latex_text(printer, explanation) -> str:
    """An align* block: each step's equation, broken to fit, with its rule as text below it."""
    show = _Shown(explanation, printer.doprint)
    rows = [_intertext(explanation.summary)]
    rows += [rf"\intertext{{\sloppy definition: \texttt{{{_latex_text(text)}}}}}" for text in _definitions(explanation)]
    if explanation.vector is not None:
        flush = "at the tensor level" in explanation.vector.identity  # the tensor passes' long left sides
        rows += vector_lines.latex_rows(explanation.vector, show, show.legend(), _pieces if flush else None)
    else:
        rows += [rf"\intertext{{where ${name} = {stop}$}}" for name, stop in show.legend()]
    for labels, root in layout(explanation):
        if len(explanation.steps) > 1 or len(labels) > 1:
            rows.append(_intertext(", ".join(labels) + ":"))
        for node in _walk(root):
            rows.extend(_latex_rows(node, show))
        rows.extend(rf"&\qquad = {piece} \\" for simpler in _simpler(explanation, root) for piece in _pieces(simpler, show))
        rows.extend(rf"\intertext{{\sloppy why zero: {latex_note(reason, show)}}}" for reason in _why(explanation, root))
    rows += [row for sentence in _ledger(explanation) for said in sentence for row in latex_rows(said, show, _pieces)]
    rows += [_intertext(more, small=True)] if (more := more_line(explanation)) else []
    rows += [checked.latex_line(explanation.check)] if explanation.check is not None else []
    if rows[-1].endswith(r" \\"):
        rows[-1] = rows[-1][:-3]
    return "\\begin{align*}\n" + "\n".join(rows) + "\n\\end{align*}"


# --- rich -------------------------------------------------------------------


def _rich_label(node: Node, show):
    """The step's equation in Unicode mathematics (stops coloured where they act), its rule, its remark."""
    from rich.text import Text

    from gradlang.render.pretty import STOP_LABEL_STYLE, styled, tidy_line

    step = node.step
    text = Text(f"{node.number}. ")
    equation = _equation(node, show)
    if step.rule == "stop_gradient":  # the stopped factor's derivative is the 0 that a stop puts there
        head, _, result = equation.rpartition(" = ")
        text.append_text(styled(head + " = "))
        text.append(styled(result).plain, STOP_LABEL_STYLE)
    else:
        text.append_text(styled(equation))
    text.append("   ")
    text.append(rule_label(step), style=_STYLES["stop" if step.rule == "stop_gradient" else "rule"])
    remark = _remark(node, show)
    if remark:
        text.append("\n")
        text.append_text(styled(tidy_line(remark)))
    return text


def _rich_add(tree, node: Node, show) -> None:
    branch = tree.add(_rich_label(node, show))
    for child in node.children:
        _rich_add(branch, child, show)


@renders("Explanation", "pretty")
def rich_tree(printer, explanation):
    """A rich Tree: the call and summary on top, one branch per step in Unicode mathematics, the check last."""
    from rich.text import Text
    from rich.tree import Tree

    from gradlang.render.pretty import styled_line as styled, tidy_line, to_line

    show = _Shown(explanation, lambda value: to_line(value, printer._settings["full"]))
    title = styled(call_text(explanation.request, show) + ": ")
    title.append(explanation.summary, style=_STYLES["summary"])
    tree = Tree(title, guide_style="dim")
    for text in _definitions(explanation):
        tree.add(Text(f"definition: {text}"))
    if explanation.vector is not None:
        for line in vector_lines.plain_lines(explanation.vector, show, show.legend()):
            tree.add(styled(line))  # a let line's stopped value is marked: styled shifts it back
    else:
        for name, stop in show.legend():
            tree.add(styled(f"where {name} = {stop}"))
    for labels, root in layout(explanation):
        parent = tree
        if len(explanation.steps) > 1 or len(labels) > 1:
            parent = tree.add(Text(", ".join(labels), style=_STYLES["summary"]))
        _rich_add(parent, root, show)
        for simpler in _simpler(explanation, root):
            parent.add(styled(f"= {show(simpler)}").append("   simplified", style=_STYLES["rule"]))
        for reason in _why(explanation, root):
            parent.add(styled(tidy_line(f"why zero: {plain_note(reason, show)}")))
    for head, *said in _ledger(explanation):
        line = styled("\n".join(ledger_lines("", head, show, _RICH_WIDTH)))
        line.stylize(_STYLES["stop"], 0, len("stop") if line.plain.startswith("stop") else 0)
        branch = tree.add(line)
        for verdict in said:
            branch.add(styled("\n".join(ledger_lines("", verdict, show, _RICH_WIDTH))))
    if more := more_line(explanation):
        tree.add(Text(more, style=_STYLES["note"]))
    if explanation.check is not None:
        tree.add(checked.rich_line(explanation.check))
    return tree


# --- JSON -------------------------------------------------------------------


def _json_node(node: Node, show) -> dict:
    step = node.step
    data = {"rule": step.rule, "expr": show(step.expr), "variable": show(step.variable),
            "result": show(step.result), "substeps": [_json_node(c, show) for c in node.children]}
    for key, value in (("outer", step.outer), ("note", plain_note(step.note, show)), ("see", node.see), ("alike", node.alike)):
        if value:
            data[key] = value
    if step.given:
        data["given"] = {name: show(e) for name, e in step.given}
    if step.blocked is not None:
        data["blocked"] = show(step.blocked)
    if node.stopped:
        data["note"] = _remark(node, show)
    if node.hidden:
        data["hidden"] = node.hidden
    return data


@renders("Explanation", "json")
def json_data(printer, explanation) -> dict:
    """The whole call as one step (rule = the operation) whose substeps are the components."""
    request = explanation.request
    show = lambda value: derivation_text(in_builtins(value), printer._settings["full"])  # noqa: E731 (as Form writes them)
    substeps = []
    for labels, root in layout(explanation):
        why = [plain_note(reason, show) for reason in _why(explanation, root)]
        simpler = [{"simplified": show(e)} for e in _simpler(explanation, root)]
        substeps.append({"components": list(labels), **_json_node(root, show), **({"why_zero": why[0]} if why else {}),
                         **(simpler[0] if simpler else {})})
    return {"rule": request.operation, "expr": show(to_symbolic(request.expr)), "call": call_text(request, show),
            "result": show(request.result), "summary": explanation.summary, "substeps": substeps,
            "blocked": written(explanation.blocked, show, explanation.ledger), "stops": [_json_stop(e, w, show) for e, w in zip(explanation.ledger, explanation.verdicts)],
            "ledger": [[plain_note(said, show) for said in sentence] for sentence in _ledger(explanation)],
            "definitions": _definitions(explanation), **({"more": more} if (more := more_line(explanation)) else {}),
            **({"vector": vector_lines.json_data(explanation.vector, show)} if explanation.vector is not None else {}),
            **({"check": checked.json_data(explanation.check)} if explanation.check is not None else {}),
            **({"selection": [int(i) for i in request.indices]} if getattr(request, "whole", None) is not None else {})}


def _ledger(explanation) -> tuple:
    """The ledger's sentences, one tuple of Notes per stop (its head, then the lines under it), then the
    identity true = kept + removed: the same in every format."""
    identity = getattr(explanation, "identity", ())
    return tuple(explanation.sentences) + ((tuple(identity),) if identity else ())


def _json_stop(entry, words, show) -> dict:
    """One ledger entry as data: the stop, its path, adjoint, removed term and verdict."""
    data = {"stop": show(entry.stop), "verdict": entry.verdict, "reaching": [show(v) for v in entry.reaching],
            "words": plain_note(words, show)}
    if entry.same:  # a stop written again: which written stop's entry counts its value (by name, else by place)
        data["same_as"] = str(entry.same[1])
    if entry.verdict != "irrelevant" and entry.order >= 2:  # no adjoint arrives (explain/ledger/higher.py)
        data.update(order=entry.order, removed=written(removed_value(entry), show, (entry,)))
    elif entry.verdict != "irrelevant":
        data.update(adjoint=written(adjoint_value(entry), show, (entry,)),  # null: not written, as words say
                    removed=written(removed_value(entry), show, (entry,)))
    return data



def _definitions(explanation) -> list[str]:
    """The user functions unfolded into the differentiated expression, as written."""
    return [" ".join(text.split()) for text in getattr(explanation.request, "definitions", ())]
