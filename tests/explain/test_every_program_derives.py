"""Every derivation program of tests/ and examples/ derives in all four formats without an error (issue 40),
and its ledger has one entry per stop the user wrote, a verdict for each, and the identity true = kept + removed.

The programs are the derivation tables of tests/explain at a literal and a symbolic size, every .grad
file that explains something, and each derivative statement of every example explained after the
example's statements before it (tests/explain/every_program.py). A statement's error would be a
GradlangError raised by the session; a renderer's would be an exception here; neither may happen.
"""

from __future__ import annotations

import io
import json

import pytest

from gradlang.core.session import Session
from gradlang.explain.explanation import Explanation
from gradlang.render import to_json, to_latex, to_plain, to_rich
from tests.explain.every_program import every_program

PROGRAMS = every_program()
# programs whose ledger is still wrong, and why (strict: remove when fixed); none since the hessian got its ledger
OPEN: dict = {}


def _params(programs) -> list:
    return [pytest.param(name, source, id=name,
                         marks=[pytest.mark.xfail(strict=True, reason=OPEN[name])] if name in OPEN else [])
            for name, source in programs]


def _four_formats(result) -> list[str]:
    from rich.console import Console

    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(result))
    return [to_plain(result), to_latex(result), console.export_text(), json.dumps(to_json(result))]


@pytest.mark.parametrize("name, source", _params(PROGRAMS))
def test_the_program_derives_in_every_format(name, source):
    explained = [r for r in Session().run(source) if r is not None and r.kind == "explain"]
    assert explained, source
    for result in explained:
        for text in _four_formats(result):
            assert "InternalError" not in text and "Traceback" not in text, text
        for step in result.steps:  # a derivation with a result ends with its check, at every size
            if isinstance(step, Explanation) and step.derived is not None:
                assert step.check is not None and step.check.agrees, to_plain(result)
            if isinstance(step, Explanation):
                _one_entry_per_written_stop(step)


def _written_reaching(step) -> int:
    """The stops the user wrote that the derivative meets: sites giving a stop of the formula met outside
    every stop (as written, or in components at literal sizes) or inside one, sites of one stop counted once
    (sg(x) written twice, one node, is two entries: the second "the same stop"), each stop written on a
    constant (sg(2)), and each stop in a case a fixed condition does not take."""
    from gradlang.explain.ledger.components import outermost_stops
    from gradlang.explain.ledger.written import _integral, _stops_of
    from gradlang.expr.walk import dag_nodes
    from gradlang.expr.tensor.lower import lowered
    from gradlang.expr.values import elements, is_scalar, to_symbolic

    expr = to_symbolic(step.request.expr)
    met = set()
    for form in (expr, _lowered(expr, lowered)):
        met |= {_integral(s) for s in outermost_stops(elements(form) if not is_scalar(form) else [form])}
    groups, constants, own, inside = [], [], 0, []
    within = set(dag_nodes([stop.args[0] for stop in met]))  # what the stops met hold
    for site in step.request.written:
        stops = {_integral(s) for s in _stops_of(site.values)}  # a float formula's 1.0*mu is the stop written
        if site.untaken:  # in a case a fixed condition does not take: its own entry (never reached)
            own += 1
        elif not stops:
            constants.append(site.text)
        elif stops & met and not any(stops & group for group in groups):
            groups.append(stops)
        elif stops & met:  # sg(…) of the same value as another's (t24 and t17): its own entry, "the same"
            own += 1
        elif stops & within and not stops & met:
            inside.append(stops)  # written inside another stop: its own entry, irrelevant (one per stop node)
    return len(groups) + len(constants) + own + len(inside)


def _lowered(expr, lowered):
    """The formula's components; the formula itself where it has none without numbers (VQ-VAE's
    onehot(argmin(D, axis=3), 5): an index has no formula)."""
    from gradlang.errors import NeedsNumbers

    try:
        return lowered(expr)
    except NeedsNumbers:
        return expr


def _one_entry_per_written_stop(step) -> None:
    """The ledger (issue 40): one entry per stop the user wrote, each with its verdict and words, and the
    identity true = kept + removed; none for a builtin's own stop."""
    from gradlang.explain.ledger.components import VERDICTS

    text = to_plain(step)
    if step.request.written is None:
        return
    assert len(step.ledger) == _written_reaching(step), text
    assert all(entry.verdict in VERDICTS for entry in step.ledger), text
    assert len(step.verdicts) == len(step.ledger) and all(step.verdicts), text
    assert ("true = kept + removed: " in text) == bool(step.ledger), text


def test_the_programs_cover_the_examples_and_both_sizes():
    names = [name for name, _ in PROGRAMS]
    assert any(name.endswith("@n") for name in names) and any(name.endswith("@3") for name in names)
    assert {"tour", "vq_vae", "em_gaussian_mixture", "sizes"} <= {name.split(":")[0] for name in names}
