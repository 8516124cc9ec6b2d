"""The page's Python side: run a program, post each result as the `gradlang --json` line it would print.

The worker (worker.js) imports this module once and calls `run(source, post)`
for each run. Every result and the error that ends a run go to `post` as a JSON
text: `{"json": LINE, "latex_steps": [...]}`, where LINE is exactly what
`gradlang --json` prints for it (docs/output.md), so the page and the command
can be compared, and `latex_steps` is each derivation's `align*` as
`gradlang --latex` writes it, which the page shows as mathematics. Before each
statement it posts `{"running": LINE}`, so the page knows where a statement
that runs out of time stood. The same module runs under CPython in
tests/web/test_runner.py.
"""

import json

from gradlang import Session
from gradlang.core import session as session_module
from gradlang.render import json as json_render
from gradlang.render.latex import to_latex
from gradlang.shell.loop import run_and_report


class _PageReporter:
    """Posts results and the closing error as they come (the CLI's Emitter writes the same JSON)."""

    def __init__(self, post):
        self.post = post
        self.line = None  # the statement running, so a stop is shown at its line

    def result(self, result) -> None:
        line = json_render.dumps(json_render.to_json(result))
        self.post(json.dumps({"json": line, "latex_steps": [to_latex(step) for step in result.steps]}))

    def error(self, error) -> None:
        self.post(json.dumps({"json": json_render.dumps(json_render.to_json(error)), "latex_steps": []}))

    def interrupted(self, stop=None) -> None:
        """The page's Stop (a KeyboardInterrupt through Pyodide's interrupt buffer), at the statement it ended."""
        error = {"kind": "error", "error": "Interrupted", "line": self.line, "column": 1,
                 "message": "stopped (the Stop button)"}
        self.post(json.dumps({"json": json.dumps(error), "latex_steps": []}))


class _AnnouncingSession(Session):
    """A Session that says which statement it starts (the page's time limit names it)."""

    reporter = None

    def _run_statement(self, statement, source):
        line = statement.span.line if statement.span is not None else None
        if self.reporter is not None and line is not None:
            self.reporter.line = line
            self.reporter.post(json.dumps({"running": line}))
        return super()._run_statement(statement, source)


def run(source: str, post) -> int:
    """Run `source` in a fresh session; 0 when it finished, 1 when an error ended it."""
    session = _AnnouncingSession()
    session.reporter = _PageReporter(post)
    return run_and_report(session, source, "<page>", session.reporter)


assert hasattr(session_module.Session, "_run_statement")  # the hook above overrides it
