"""The REPL's help texts: statements, commands, and every builtin from its table entry.

Builtin descriptions and examples live next to their implementations in
builtins.py (`doc`, `example`); this module only arranges them, so help
cannot drift from what the language offers.
"""

from __future__ import annotations

import re
import textwrap

STATEMENTS = (
    ("x: R  ·  v: R^3  ·  W: R^(2,3)", "declare a real scalar, a vector or a matrix of symbols"),
    ("name = expr", "evaluate now and bind the name"),
    ("f(a, b) = expr", "define a function (the body is resolved at each call)"),
    ("expr", "evaluate and print"),
    ("explain expr", "the step-by-step derivation of every diff/grad/jacobian/hessian inside"),
    ("explain[depth=N] expr", "the same, N levels of substeps deep (depth=all: every step)"),
    ("explain[unfold] expr", "derive builtins (softmax, sigmoid, norm, ...) from their definitions"),
    ("explain grad(e, x)[1]", "derive only the selected components (also jacobian(f, x)[i, j])"),
    ("expr at x = 2, v = [1, 2]", "substitute values and evaluate"),
)

COMMANDS = {
    "help": (":help [NAME]", "this help, or help on one builtin, command or name"),
    "vars": (":vars", "the names you have defined and their values"),
    "reset": (":reset", "forget every definition"),
    "load": (":load FILE", "run a script in this session"),
    "format": (":format [NAME]", "show or set the output: pretty, plain, latex or json"),
    "full": (":full [on|off]", "print large values whole, or summarised (the default) as NumPy does"),
    "export": (":export TARGET [FILE]", "this session's functions and losses as Python for jax, torch, tf or numpy"),
    "quit": (":quit", "leave (Ctrl-D does too)"),
}

KEYWORDS = {
    "at": "expr at x = v, y = w: substitute the values and evaluate (derivatives are taken first)",
    "explain": "explain expr: print the derivation of every derivative inside expr, then its value; "
               "explain[depth=N] expr (or depth=all) chooses how deep; explain[unfold] expr derives the "
               "builtins from their definitions; explain grad(e, x)[1] derives "
               "only that component; with `at x = …` the last line checks the result numerically there",
}

_EXPLAIN_OPTION = re.compile(r"\bexplain\s*\[(?:[^\]]*,)?\s*([A-Za-z_]*)(=?)([A-Za-z_0-9]*)$")


def explain_completions(before: str) -> tuple[str, list[str]] | None:
    """Inside `explain[…`: (the word being typed, what can complete it), or None elsewhere."""
    from gradlang.core.explaining import FLAGS, OPTIONS

    match = _EXPLAIN_OPTION.search(before)
    if match is None:
        return None
    name, equals, value = match.groups()
    if equals:
        return value, ["all"] if name == "depth" else []
    return name, [f"{option}=" for option in OPTIONS] + list(FLAGS)

GROUP_TITLES = {
    "core": "core",
    "elementwise": "elementwise",
    "reduction": "reductions",
    "vector": "vectors",
    "matrix": "matrices",
    "data": "data",
    "algebra": "algebra",
}


def _table() -> dict:
    from gradlang.core.builtins import TABLE

    return TABLE


def _constants() -> dict:
    from gradlang.core.builtins import CONSTANTS

    return CONSTANTS


def _aliases(name: str) -> list[str]:
    table = _table()
    return [other for other, e in table.items() if e.function is table[name].function and other != name]


def _builtin_groups() -> dict[str, list]:
    """Builtins by group, in the table's order; an alias is listed with its first name."""
    groups: dict[str, list] = {}
    seen = set()
    for entry in _table().values():
        if entry.function not in seen:
            seen.add(entry.function)
            groups.setdefault(entry.group, []).append(entry)
    return groups


def builtin_line(entry) -> tuple[str, str]:
    """A builtin's name (with its aliases) and its description with an example."""
    aliases = _aliases(entry.name)
    name = entry.name + (f" ({', '.join(aliases)})" if aliases else "")
    return name, f"{entry.doc}\ne.g. {entry.example}"


def _rows(pairs, column: int, width: int) -> list[str]:
    """Two columns; a long description (paragraphs split by newlines) wraps under itself, not under the name."""
    lines = []
    for name, text in pairs:
        head = f"  {name:<{column - 3}} "
        if len(head) > column:
            lines.append(head.rstrip())
            head = " " * column
        for paragraph in text.split("\n"):
            lines += textwrap.wrap(paragraph, width=max(width, column + 20), initial_indent=head.ljust(column),
                                   subsequent_indent=" " * column, break_on_hyphens=False)
            head = ""
    return lines


def general_help(width: int = 80) -> str:
    """Statements, commands and every builtin with a one-line description and example, wrapped to `width`."""
    lines = ["Statements (separated by newlines or ';'; newlines inside brackets continue):"]
    lines += _rows(STATEMENTS, 35, width)
    lines.append("\nCommands:")
    lines += _rows(COMMANDS.values(), 24, width)
    for group, entries in _builtin_groups().items():
        lines.append(f"\nBuiltins, {GROUP_TITLES.get(group, group)}:")
        lines += _rows([builtin_line(entry) for entry in entries], 29, width)
    lines.append("\nConstants: " + ", ".join(_constants()))
    lines += textwrap.wrap("_ is the last result.  :help NAME (or help(NAME), ?NAME) for one builtin, e.g. :help grad. "
                           "Leave with :quit, exit or Ctrl-D.", width=max(width, 40))
    return "\n".join(lines)


def topic_help(name: str, user_names: dict | None = None) -> str:
    """Help on one builtin, keyword, command, constant or user name."""
    name = name.strip().lstrip(":")
    table = _table()
    if name in table:
        entry = table[name]
        aliases = _aliases(name)
        also = f"\n  also called: {', '.join(aliases)}" if aliases else ""
        return f"{name}: {entry.doc}\n  example: {entry.example}{also}"
    if name in KEYWORDS:
        return f"{name} (keyword): {KEYWORDS[name]}"
    if name in COMMANDS:
        form, text = COMMANDS[name]
        return f"{form}: {text}"
    if name in _constants():
        return f"{name}: constant"
    if user_names and name in user_names:
        return f"{name}: defined in this session (see :vars)"
    from gradlang.core.spelling import did_you_mean

    known = [*table, *KEYWORDS, *COMMANDS, *_constants(), *(user_names or {})]
    return f"no help for '{name}'{did_you_mean(name, known)}; :help lists every builtin"
