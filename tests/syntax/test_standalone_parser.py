"""The parser shipped in syntax/standalone_parser.py is the grammar's (grammar/build_parser.py writes it).

lark's stand-alone generator numbers the LALR states differently from run to run, so the shipped tables are
compared with lark's, built now from grammar/gradlang.lark with the options parse.py used to give lark, as
automata: states renumbered in the order a walk from the start state meets them. A grammar edited without
running grammar/build_parser.py fails here. The trees and the errors are compared on real programs too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark
from lark.exceptions import UnexpectedInput
from lark.grammar import Rule
from lark.lexer import TerminalDef

from gradlang.syntax import standalone_parser
from gradlang.syntax.parse import PARSER, _BracketNewlines, _grammar_text

ROOT = Path(__file__).resolve().parents[2]
REBUILD = "grammar/gradlang.lark changed: run `python grammar/build_parser.py`"


@pytest.fixture(scope="module")
def lark_parser() -> Lark:
    """The parser as parse.py built it before it was shipped built."""
    return Lark(_grammar_text(), parser="lalr", propagate_positions=True, maybe_placeholders=False,
                postlex=_BracketNewlines())


def _rule(entry: dict) -> str:
    return repr({key: value for key, value in entry.items() if key != "@"})


def _resolve(value, memo: dict):
    """A memo reference ({'@': n}) replaced by what it refers to, written without its number."""
    return _rule(memo[value["@"]]) if isinstance(value, dict) and "@" in value else value


def _automaton(data: dict, memo: dict) -> list:
    """The LALR table as a list of states in the order a walk from the start state meets them, each state a
    sorted list of (symbol, action, next state's place in that order or the rule reduced)."""
    table = data["parser"]["parser"]
    tokens, states = table["tokens"], table["states"]
    order, walk = {}, [table["start_states"]["start"]]
    while walk:
        state = walk.pop(0)
        if state in order:
            continue
        order[state] = len(order)
        moves = sorted(states[state].items(), key=lambda item: tokens[item[0]])
        walk.extend(target for _, (action, target) in moves if action == 0)
    assert len(order) == len(states), "a state no walk from the start reaches"
    return [sorted((tokens[token], action, order[target] if action == 0 else _resolve(target, memo))
                   for token, (action, target) in states[state].items())
            for state in sorted(order, key=order.get)]


def _terminals(data: dict, memo: dict) -> list:
    return sorted(_resolve(reference, memo) for reference in data["parser"]["lexer_conf"]["terminals"])


def _rules(data: dict, memo: dict) -> list:
    return sorted(_resolve(reference, memo) for reference in data["rules"])


def test_the_shipped_tables_are_the_grammars(lark_parser):
    built, memo = lark_parser.memo_serialize([TerminalDef, Rule])
    shipped, shipped_memo = standalone_parser.DATA, standalone_parser.MEMO
    assert _terminals(shipped, shipped_memo) == _terminals(built, memo), REBUILD
    assert _rules(shipped, shipped_memo) == _rules(built, memo), REBUILD
    assert _automaton(shipped, shipped_memo) == _automaton(built, memo), REBUILD
    assert shipped["parser"]["lexer_conf"]["ignore"] == built["parser"]["lexer_conf"]["ignore"]


def test_the_shipped_parser_has_the_options_parse_py_needs():
    options = standalone_parser.DATA["options"]
    assert (options["parser"], options["lexer"]) == ("lalr", "contextual")
    assert options["propagate_positions"] and not options["maybe_placeholders"]
    assert not options["keep_all_tokens"]


def _programs() -> list:
    examples = sorted((ROOT / "examples").glob("*.grad"))
    return [path.read_text(encoding="utf-8") for path in examples] + [
        "f(a,\n  b) = a - b\nf(3,\n1)",  # newlines inside brackets: the post-lexer
        "explain[depth=2, unfold] grad(sum(exp(x)), x)",
        "M[:, 1] + M[0, :] + X[..., 1:2] + v[a:b] # a comment",
    ]


def _positions(tree) -> list:
    """Every node and token with its place: the trees must agree on positions too."""
    found = []
    for node in tree.iter_subtrees_topdown():
        meta = node.meta
        found.append((node.data, getattr(meta, "line", None), getattr(meta, "column", None),
                      getattr(meta, "end_line", None), getattr(meta, "end_column", None)))
        found += [(child.type, str(child), child.line, child.column, child.end_line, child.end_column)
                  for child in node.children if not hasattr(child, "data")]
    return found


@pytest.mark.parametrize("index", range(len(_programs())))
def test_the_shipped_parser_gives_lark_parsers_trees(lark_parser, index):
    program = _programs()[index]
    assert _positions(PARSER.parse(program)) == _positions(lark_parser.parse(program))


@pytest.mark.parametrize("program", ["1 + * 2", "f(1, 2", "x: R^", "a = = 1", "1 $ 2", "[1, 2]]", "explain"])
def test_the_shipped_parser_fails_where_lark_fails_and_expects_the_same(lark_parser, program):
    def failure(parser, kind):
        try:
            parser.parse(program)
        except kind as error:
            token = getattr(error, "token", None)
            return (type(error).__name__, error.line, error.column, str(token), sorted(getattr(error, "expected", ())))
        return None

    shipped = failure(PARSER, standalone_parser.UnexpectedInput)
    assert shipped is not None and shipped == failure(lark_parser, UnexpectedInput)


def _contextual_lexer(parser):
    """The contextual lexer under the post-lexer's connector."""
    return parser.parser.lexer.lexer


def test_the_contextual_lexers_are_built_on_first_use_and_are_larks(lark_parser):
    """grammar/build_parser.py builds each parser state's lexer on the state's first token (1.4 ms of every
    start, issue #41): a new parser holds none, `1 + 1` builds a few, states accepting the same terminals share
    one, and every state's lexer accepts the terminals lark's own (built eagerly) accepts in that state."""
    fresh = standalone_parser.Lark_StandAlone(postlex=_BracketNewlines())
    lexers = _contextual_lexer(fresh).lexers
    assert len(lexers) == 0
    fresh.parse("1 + 1\n")
    assert 0 < len(lexers) < len(lexers._states)
    shipped_states = fresh.parser.parser.parser.parse_table.states
    larks_states = lark_parser.parser.parser.parser.parse_table.states
    larks_lexers = _contextual_lexer(lark_parser).lexers
    by_tokens = {}
    for state in shipped_states:
        by_tokens.setdefault(frozenset(lexers._states[state]), set()).add(id(lexers[state]))
    assert all(len(ids) == 1 for ids in by_tokens.values())
    shipped = sorted(sorted(t.name for t in lexers[state].terminals) for state in shipped_states)
    larks = sorted(sorted(t.name for t in larks_lexers[state].terminals) for state in larks_states)
    assert shipped == larks
