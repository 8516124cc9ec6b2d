"""What a builtin may ask of the statement it is evaluated in, and nothing more.

A builtin is a function of its arguments; a few also need the statement
around them: `diff` and friends tell explain which derivatives were written,
`plot` labels its curves with their source text and attaches a figure,
`simplify` notes the components it left alone. The evaluator hands each call
a `Services` record of exactly those things instead of itself, so a builtin
cannot read the environment, call user functions or change the interpreter's
state, and a new builtin shows by its use of `Services` what it depends on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradlang import limits
from gradlang.errors import LimitError
from gradlang.expr.bounded import out_of_work, tidy_each, too_large, why_too_large
from gradlang.lazy import deferred, np

# explain's record of a derivative: made on a derivative's first call, so `1 + 1` never imports it (issue #41)
DerivativeRequest = deferred("gradlang.derive.requests", "DerivativeRequest")


@dataclass(frozen=True)
class Services:
    """The statement's sinks and its source, as seen from one builtin call.

    `derivations` is None and `source` empty for a call inside a user
    function's body: explain shows, and plot labels with, only what the
    statement itself says.
    """

    notes: list  # warnings shown under the result
    attachments: list  # records shown after the value (gradcheck reports, plots)
    derivations: list | None = None  # explain's derivative requests; None when not recorded
    source: str = ""  # the statement's text, for the source of an argument
    differentiated: list | None = None  # what every derivative in the statement differentiated, for `at`'s notes
    files: dict = field(default_factory=dict)  # the arrays load() read in the statement, by file: each read once
    loaded: list = field(default_factory=lambda: [0])  # bytes of the arrays load() gave in the statement so far

    def charge_load(self, size: int) -> None:
        """Count a loaded array's float64 bytes, before it is read: a statement's loads share one bound."""
        total = self.loaded[0] + size
        if total > limits.max_memory():
            raise LimitError(limits.memory_refusal("loading these arrays as floats", total))
        self.loaded[0] = total

    def warn(self, note: str) -> None:
        """Add a warning once."""
        if note and note not in self.notes:
            self.notes.append(note)

    def attach(self, record) -> None:
        self.attachments.append(record)

    def record(self, operation, call, wrt, specs, result) -> None:
        """Remember what a derivative differentiated, and the whole request inside an explain statement."""
        if self.differentiated is not None:
            self.differentiated.append(call.args[0])
        if self.derivations is not None:
            text = self.source_text(call.nodes[0]) if call.nodes else None
            request = DerivativeRequest(operation, call.args[0], wrt, specs, result, call.span, call.definitions,
                                        text=" ".join((text or "").split()))
            self.derivations.append(request)

    def source_text(self, node) -> str | None:
        """The source of an argument written in the statement itself (not inside a function body)."""
        if not self.source:
            return None
        return node.text(self.source)

    def bounded(self, function, value, name: str):
        """Apply a SymPy algebra function to every component small enough for it.

        The bounds are a size (limits.SIMPLIFY_MAX_NODES) and a count of work
        (limits.SIMPLIFY_WORK), never a time, so the printed result is the same
        on every machine; larger components are kept as they are, and those
        whose work runs out as far as it got, with a note.
        """
        skipped = too_large(value) if not isinstance(value, np.ndarray) else 0
        if skipped:
            self.notes.append(f"{name} kept {skipped} component{'s' if skipped > 1 else ''} as "
                              f"{'they were' if skipped > 1 else 'it was'}: {why_too_large(value)}")
        tidied = tidy_each(value, function)
        stopped = out_of_work(value, function) if not isinstance(value, np.ndarray) else 0
        if stopped:
            self.notes.append(f"{name} stopped on {stopped} component{'s' if stopped > 1 else ''} where its "
                              f"budget of work ran out ({limits.SIMPLIFY_WORK:,} units: nodes walked, terms "
                              f"created); {'they are' if stopped > 1 else 'it is'} shown as far as it got")
        return tidied
