"""A vector-level derivation (explain/formula.py's records) in the four formats.

render/derivation.py calls these when an Explanation carries a vector
derivation instead of component steps. A formula's Math parts have their
own plain and LaTeX spellings; its SymPy parts go through the format's
printer (`show`, with the explanation's abbreviations).
"""

from __future__ import annotations

import re

import sympy as sp

from gradlang.explain.formula import Math, latex_chars

WIDTH = 98          # plain text columns (the CLI prefixes "# ")
_RULE_COLUMN = 56   # where rule names start when the line leaves room
_LATEX_SOURCE = 160  # characters of LaTeX source a line's right sides may take on one row
_TENSOR_LINE = 36    # characters of gradlang text per row when a side is broken (tensor LaTeX is wide: a^T b, \frac)


def text(parts, show, spelling: str = "plain") -> str:
    """A formula in one spelling: Math parts as spelled, values through the printer."""
    shown = "".join(getattr(p, spelling) if isinstance(p, Math) else show(p) for p in parts)
    return latex_chars(shown) if spelling == "latex" else shown


def _name(let, show, spelling: str) -> str:
    """A let's name: notation, a value, or several given one description (`k1, k2, …, k9 = constant arrays …`)."""
    if isinstance(let.name, tuple):
        return ", ".join(getattr(name, spelling) if isinstance(name, Math) else show(name) for name in let.name)
    return getattr(let.name, spelling) if isinstance(let.name, Math) else show(let.name)


def _let_lines(vector, show, legend) -> list[str]:
    bare = getattr(show, "bare", show)
    lets = [(_name(let, show, "plain"), text(let.value, bare), let.note) for let in vector.lets]
    pairs = in_order([(name, stop, "stopped: its gradient is taken as 0") for name, stop in legend], lets)
    lines = []
    for i, (name, value, note) in enumerate(pairs):
        head = f"{'let' if i == 0 else '   '}  {name} = {value}"
        lines.append(_beside(head, f"({note})") if note else head)
    return lines


def in_order(stops: list, lets: list) -> list:
    """The let block with each stop's letter after the lets its stop reads (`c = sg(round(h) - h)` after
    `h = W @ x`, never before it), else first; pairs start (name, value, …) in one spelling."""
    placed = list(lets)
    for stop in reversed(stops):
        value = stop[1] if isinstance(stop[1], str) else " ".join(stop[1])
        reads = [k for k, let in enumerate(placed) if let not in stops and _mentions(value, let[0])]
        placed.insert(reads[-1] + 1 if reads else 0, stop)
    return placed


def _mentions(value: str, name: str) -> bool:
    """Whether a printed value reads the printed name as a whole word (h in round(h), not in h2 or \\phi).
    Pretty marks a stopped value's characters by moving them to a private plane (render/pretty._shift):
    they are read back in the plane of ordinary text."""
    value = "".join(chr(ord(c) & 0xFFFF) if ord(c) >= 0xF0000 else c for c in value)
    return re.search(r"(?<![A-Za-z0-9_\\])" + re.escape(name) + r"(?![A-Za-z0-9_])", value) is not None


def _beside(head: str, remark: str) -> str:
    """The remark in the rule column when it fits the width, else on the next line (a long rule on as many
    as it needs, broken after its rule at "; then" and between its identities)."""
    if len(head) + 2 + len(remark) <= WIDTH:
        return head.ljust(min(_RULE_COLUMN, WIDTH - len(remark) - 2)) + "  " + remark
    return head + "\n" + "\n".join(" " * 6 + part for part in _wrapped(remark, WIDTH - 6))


def _wrapped(remark: str, width: int) -> list[str]:
    """A rule remark in lines of at most `width` (where it can break): the rule, then its identities."""
    if len(remark) <= width or "; then " not in remark:
        return [remark]
    rule, identities = remark.split("; then ", 1)
    lines, current = [rule + ";"], " then"
    for identity in identities.split(", "):
        joined = f"{current} {identity}" if current == " then" else f"{current}, {identity}"
        if len(joined) > width and current != " then":
            lines.append(current.strip() + ",")
            current = "  " + identity
        else:
            current = joined
    return lines + [current.strip() if not current.startswith("  ") else current]


def plain_lines(vector, show, legend=()) -> list[str]:
    """let lines, then numbered lines `(n)  lhs = rhs = …   [rule]`."""
    lines = _let_lines(vector, show, legend)
    for n, line in enumerate(vector.lines, 1):
        equation = " = ".join([text(line.lhs, show)] + [text(r, show) for r in _distinct(line.rhs, show)])
        lines.extend(_ruled(f"({n})  {equation}", text(line.rule, show)).split("\n"))
    return lines


def _ruled(head: str, rule: str) -> str:
    """A pass line with its rule beside it: the rule with its formula when it fits the width, else the rule's
    name (and the identities that tidied the line) when that fits (`[exp]`: the formula is the operation's,
    said in full wherever it fits and in JSON), else the whole rule on the lines below. A line already wider
    than the page (a formula no name shortened) ends with the rule's name: a line of its own for the rule would
    only add to a line the reader scrolls anyway."""
    name = rule.split(":", 1)[0] + ("; then " + rule.split("; then ", 1)[1] if "; then " in rule else "")
    if len(head) > WIDTH:
        return f"{head}  [{name}]"
    if len(head) + 2 + len(rule) + 2 > WIDTH and name != rule and len(head) + 2 + len(name) + 2 <= WIDTH:
        return _beside(head, f"[{name}]")
    return _beside(head, f"[{rule}]")


def _distinct(sides, show) -> list:
    """A line's right sides without one that reads as the side before it: a raw and a tidied side that the
    derivation's names make equal (`δ = δ` once δ names the value) are said once, in every format."""
    said = [text(side, show) for side in sides]
    return [side for k, side in enumerate(sides) if k == 0 or said[k] != said[k - 1]]


def latex_rows(vector, show, legend=(), pieces=None) -> list[str]:
    """align* rows: the names, then each line with its rule as a small remark below.

    pieces(value, show), when given, breaks a long formula into rows that fit
    the page; each of a line's right sides then starts a row of its own."""
    bare = getattr(show, "bare", show)
    lets = [(latex_chars(_name(let, show, "latex")), _let_pieces(let.value, bare)) for let in vector.lets]
    rows = []
    for name, parts in in_order([(latex_chars(name), [latex_chars(stop)]) for name, stop in legend], lets):
        rows.append(rf"\text{{let }} {name} &= {parts[0]} \\")
        rows += [rf"&\quad {part} \\" for part in parts[1:]]  # a long definition broken to fit the page
    for n, line in enumerate(vector.lines, 1):
        head = rf"({n})\quad {text(line.lhs, show, 'latex')}"
        sides = _distinct(line.rhs, show)
        rhs = " = ".join(text(r, show, "latex") for r in sides)
        if pieces is None and len(rhs) > _LATEX_SOURCE:  # each right side on a row of its own, aligned at =
            rows += [rf"{head if k == 0 else ''} &= {text(r, show, 'latex')} \\" for k, r in enumerate(sides)]
        elif pieces is None:
            rows.append(rf"{head} &= {rhs} \\")
        else:
            rows += _flush(head, sides, show, pieces, len(head) + len(rhs) > _LATEX_SOURCE)
        rows.append(rf"\intertext{{\small \({text(line.rule, show, 'latex')}\)}}")
    return rows


def _let_pieces(value, bare) -> list[str]:
    """A let's value as LaTeX rows: broken (latex_break.pieces) where it is a formula too long for the page."""
    if len(value) == 1 and isinstance(value[0], sp.Basic):  # a formula of one value, no notation
        from gradlang.render.latex_break import pieces

        return pieces(value[0], bare)
    return [text(value, bare, "latex")]


def _flush(head: str, sides, show, pieces, broken: bool) -> list[str]:
    """Rows flush left, not aligned at `=` (a long left side would push every right side off the page):
    lhs = first side, then = each further side, each broken to fit when the line is long."""
    if not broken:
        return [rf"&{head} = {' = '.join(text(side, show, 'latex') for side in sides)} \\"]
    alone = len(head) > _LATEX_SOURCE // 2  # a long left side has a row of its own, each side below it
    rows = [rf"&{head} \\"] if alone else []
    for k, side in enumerate(sides):
        values = [p for p in side if not isinstance(p, Math)]
        parts = pieces(values[0], show, _TENSOR_LINE) if len(values) == 1 and len(side) == 1 else [text(side, show, "latex")]
        lead = head if k == 0 and not alone else r"\qquad"
        rows.append(rf"&{lead} = {latex_chars(parts[0])} \\")
        rows += [rf"&\qquad\quad {latex_chars(part)} \\" for part in parts[1:]]
    return rows


def json_data(vector, show) -> dict:
    """The identity, the names and the instantiated lines as data."""
    return {"identity": vector.identity,
            "lets": [{"name": _name(let, show, "plain"), "value": text(let.value, show), "note": let.note}
                     for let in vector.lets],
            "lines": [{"lhs": text(line.lhs, show), "rhs": [text(r, show) for r in line.rhs],
                       "rule": text(line.rule, show)} for line in vector.lines],
            "result": show(vector.result)}
