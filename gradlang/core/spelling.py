"""Warnings for names that are probably misspelled.

In gradlang any name that is not bound is a fresh real symbol, as in SymPy.
That is what makes `diff(x^2, x)` work without a declaration, and it is also
why a typo is silent: `loss = x^2*sg(x); diff(los, x)` differentiates a new
symbol `los` and prints 0. A teaching tool should say so, but only when the
name is close to one the session knows, so ordinary free symbols stay quiet.
The same goes for an `at` that binds a name the expression does not contain
(warned only where the user is likely wrong: not for a point reused from
another line), and for a name bound twice in one `at` (the last value would
win silently). Errors for an unknown function or help topic name the near
miss too (`suggested_name`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlang.core.substitute import free_symbols
from gradlang.remembered import remembered
from gradlang.expr.stopgrad import unstopped_symbols
from gradlang.expr.values import elements, shape_of, to_symbolic

# How alike two names must be (difflib's ratio) to count as a likely typo.
# 0.75 pairs `los`/`loss` and `thetta`/`theta` but not `mu`/`mu2` or `x1`/`x2`.
_CLOSE = 0.75


def near_name(name: str, known) -> str | None:
    """The known name `name` is probably a misspelling of, or None."""
    candidates = sorted(k for k in known if k != name and isinstance(k, str))  # sorted: no hash-seed order
    for candidate in candidates:
        if candidate.lower() == name.lower():
            return candidate  # X for x, Loss for loss
    if len(name) < 3:
        return None  # one- and two-letter names are ordinary symbols, not typos
    import difflib  # on the first near name: a run with no misspelling never imports it (start-up, issue #41)

    close = difflib.get_close_matches(name, candidates, n=1, cutoff=_CLOSE)
    return close[0] if close else None


def suggested_name(name: str, known) -> str | None:
    """The known name a user probably meant by an unknown one: a near spelling, or the one name it begins.

    For an error (`dif(x^2, x)`, `:help stop`): the user is already stopped, so
    a start shared by exactly one known name (`stop` for `stop_gradient`) is
    worth offering too, where a warning would only be noise.
    """
    near = near_name(name, known)
    if near is not None or len(name) < 3:
        return near
    starting = [k for k in known if isinstance(k, str) and k.startswith(name) and k != name]
    return starting[0] if len(starting) == 1 else None


def did_you_mean(name: str, known) -> str:
    """' (did you mean 'diff'?)' for an unknown name close to a known one, else ''."""
    near = suggested_name(name, known)
    return f" (did you mean '{near}'?)" if near else ""


def new_symbol_note(name: str, known) -> str | None:
    """A warning when an unbound name looks like a typo of a bound one."""
    near = near_name(name, known)
    if near is None:
        return None
    return (
        f"'{name}' is not defined, so it is a new symbol here (did you mean '{near}'?); "
        f"a new symbol's derivative with respect to anything else is 0"
    )


@dataclass(frozen=True)
class AtContext:
    """What an `at` is checked against: why a name it binds might be missing from the value."""

    known: frozenset  # names bound in the session or written in an earlier statement
    written: frozenset = frozenset()  # names written in the expression before `at`
    differentiated: tuple = ()  # what the derivatives inside that expression differentiated


def unused_binding_notes(value, names: list[str], context: AtContext) -> list[str]:
    """Warnings for the names an `at` binds that its value lacks, where the user is likely wrong or a stop is why.

    One point is often reused for every line of a script, and a derivative
    need not depend on the point (the slope of a line): a name the session
    knows, or one differentiated away, stays quiet. A name written in this very
    expression that cancelled is said to have cancelled, since SymPy cancels
    before any number is seen (`W/W` is 1, `y - y` is 0). A name that occurs
    only inside a stop where it is differentiated is the lesson itself, and is
    said so. A name nobody wrote is probably a typo, and is named with the
    near one.
    """
    present = _symbol_names(value)
    if not present:
        return []  # a number: every 'at' changes nothing, by design (diff(round(w), w) at w = 0.8 is 0), not by a typo
    notes = []
    for name in names:
        if _occurs(name, present):
            continue
        note = _missing_note(name, present, context)
        if note:
            notes.append(note)
    return notes


def missing_names(value, names: list[str]) -> list[str]:
    """The names an `at` binds that its value lacks (none: no note is due, and its context is not needed)."""
    present = _symbol_names(value)
    return [name for name in names if present and not _occurs(name, present)]


def _missing_note(name: str, present: set, context: AtContext) -> str | None:
    """Why the bound name `name` is not in the value, when that is worth saying."""
    stopped, free = _in_operands(name, context.differentiated)
    if stopped and not free:
        return (f"the value no longer depends on '{name}': where it is differentiated, it occurs only inside "
                f"stop_gradient, whose derivative is 0 (so a derivative with respect to '{name}' is 0, where "
                f"TensorFlow's tape returns None), and 'at {name} = …' changes nothing")
    if free or name in context.known - context.written:
        return None  # differentiated away (the slope of a line is the same everywhere), or a point reused
    if name in context.written:
        return (f"the value no longer depends on '{name}' (it cancelled before any number was given), "
                f"so 'at {name} = …' changes nothing")
    near = near_name(name, present) or near_name(name, context.known)
    hint = f" (did you mean '{near}'?)" if near else ""
    return f"'{name}' does not occur in the expression, so 'at {name} = …' changes nothing{hint}"


def _occurs(name: str, present: set) -> bool:
    """Is the symbol `name`, or a component of it (`x[0]` of `x`), among `present`?"""
    return name in present or any(p.startswith(name + "[") for p in present)


def _in_operands(name: str, operands: tuple) -> tuple[bool, bool]:
    """Does `name` occur in what was differentiated (anywhere, and outside stop_gradient)?"""
    anywhere = any(_occurs(name, _symbol_names(operand)) for operand in operands)
    free = anywhere and any(_occurs(name, _symbol_names(operand, stopped=False)) for operand in operands)
    return anywhere, free


def repeated_binding_note(names: list[str]) -> str | None:
    """A warning when one `at` binds a name twice: the last value is the one used."""
    seen: set = set()
    for name in names:
        if name in seen:
            return f"'{name}' is bound twice in one 'at'; the last value is the one used"
        seen.add(name)
    return None


def _symbol_names(value, stopped: bool = True) -> frozenset[str]:
    """The names of the symbols in a value (a number, vector or matrix); with stopped=False, those outside stops.

    Walked once per value (remembered.py): an `at` run again in a loop checks the same names."""
    return remembered("symbol names" if stopped else "unstopped names", value, lambda v: _names_in(v, stopped))


def _names_in(value, stopped: bool) -> frozenset[str]:
    value = to_symbolic(value)
    items = elements(value) if shape_of(value) else [value]
    if stopped:
        return frozenset(str(s) for s in free_symbols(items))
    return frozenset(str(s) for s in unstopped_symbols(items))
