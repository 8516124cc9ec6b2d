"""A bound on what is typed key by key into one input at the REPL's prompt.

prompt_toolkit handles every typed key on its own: it looks up the key
bindings, edits the buffer and redraws the whole input, so a line of a million
characters typed (or pasted by a terminal without bracketed paste, which sends
a paste as keys) took far longer than any statement may run (issue 29, row 20).
A paste that arrives as one bracketed paste is a single key and is not bounded
here; a program of any length up to the source limit can be pasted or loaded.

Once the input reaches `limits.MAX_TYPED_CHARS`, the guard's binding takes
every further key but Enter: it empties the input (so redraws are small
again) and drops the keys already read, so the rest of the line costs one key
lookup per read instead of one per character. Enter then ends the input with
`DROPPED`, and the REPL reports a LimitError instead of running a cut line.
"""

from __future__ import annotations

from gradlang import limits

DROPPED = "\0dropped: a line typed beyond the limit\0"  # what prompt() returns for such a line


class TypedLineGuard:
    """Watches one prompt's input; `over` from the first key beyond the limit to the next Enter."""

    def __init__(self, limit: int | None = None):
        self.limit = limits.MAX_TYPED_CHARS if limit is None else limit
        self.over = False

    def active(self) -> bool:
        """The filter of the dropping binding: at the limit already, or dropping until Enter."""
        from prompt_toolkit.application import get_app

        return self.over or len(get_app().current_buffer.text) >= self.limit

    def drop(self, event) -> None:
        """A key beyond the limit: empty the input and drop the keys read with it, up to an Enter."""
        self.over = True
        if event.current_buffer.text:
            event.current_buffer.reset()
        queue = event.app.key_processor.input_queue
        pending = list(queue)
        queue.clear()
        from prompt_toolkit.keys import Keys

        enter = next((i for i, k in enumerate(pending) if k.key in (Keys.ControlM, Keys.ControlJ)), None)
        if enter is not None:
            queue.extend(pending[enter:])

    def enter(self, event) -> bool:
        """Enter after dropped keys ends the input with DROPPED (True); otherwise False."""
        if not self.over:
            return False
        self.over = False
        event.current_buffer.reset()
        event.app.exit(result=DROPPED)
        return True

    def add_to(self, bindings) -> None:
        """Register the dropping binding (after the defaults, so it wins over self-insert)."""
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.keys import Keys

        bindings.add(Keys.Any, filter=Condition(self.active))(self.drop)


def dropped_message(limit: int) -> str:
    return (f"a line typed at the prompt holds at most {limit} characters, so this one was dropped; "
            "paste it, or :load it from a file")
