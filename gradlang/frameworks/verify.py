"""A translation proves itself: the written program, run by gradlang, must give the framework's loss and gradient.

The program is written from the framework's graph, one rule per operation; a
rule that is wrong, or an operation taken for something it is not, would give
a program that runs and prints numbers the user's model never computes. So
before the program is printed or run, gradlang runs it at the traced point and
compares its value and its gradient by every declared leaf with the
framework's own (jax.grad, torch.autograd, in float64). When they
differ, the error names the first bound intermediate whose value differs, at
the user's line; when every bound intermediate agrees, it names the
operations the difference may come from (values fixed at the point, custom
derivative rules). An error of the program itself is reported at the user's
line of the operation that wrote the statement, never at a line of a program
the user has not seen.
"""

from __future__ import annotations


import numpy as np
from sympy.core.cache import clear_cache

from gradlang.errors import GradlangError
from gradlang.expr.tensor.listed import is_list
from gradlang.frameworks.program import TranslateError, Writer, placed

RELATIVE = 1e-9  # of the largest component of the framework's (or the program's) array
ABSOLUTE = 1e-12
# A program with float32 casts: the framework's backward pass rounds each cotangent that crosses a cast back to
# float32, where float32(u)'s derivative is exactly 1 (LANGUAGE.md 3b), and its float32 reductions sum in their
# own order; the loss and the gradients agree to float32's precision.
FLOAT32_RELATIVE = 1e-6


def verify(program: str, writer: Writer, theirs: list, spec: str, framework: str) -> None:
    """Run `program` (its tail prints the loss, then the gradient by each leaf) and compare with `theirs`."""
    from gradlang.core.session import Session

    try:
        _compared(Session(), program, writer, theirs, spec, framework)
    finally:
        forget_formulas()


def forget_formulas() -> None:
    """Drop every formula the check left in SymPy's cache.

    The shell runs the same program next, in a new Session, and builds formulas equal to the check's but
    other objects; SymPy compares two such formulas path by path, so the run must meet none of the check's
    (a chain of 40 stops: past the 60 s limit without it). gradlang's own caches of formulas compare keys
    by expr/equal.same, each pair of parts once, so the check's formulas left there cost nothing."""
    clear_cache()


def _compared(session, program: str, writer: Writer, theirs: list, spec: str, framework: str) -> None:
    try:
        results = session.run(program)
    except GradlangError as error:
        raise _from_the_program(error, writer.lines, spec) from None
    ours = [floats(value) for result in results for value in entries(result.value)]
    labels = ["the loss", *(f"the gradient by {name}" for name in writer.leaves)]
    for label, a, b in zip(labels, ours, theirs, strict=True):
        if not close(a, b, FLOAT32_RELATIVE if casts(writer) else RELATIVE):
            raise _differs(session, writer, spec, framework, f"{label} is {_shown(a)} where {framework} gives "
                           f"{_shown(b)}")


def entries(value) -> tuple:
    """The values a result stands for: each gradient of grad(loss, [W, b]) at …, else the value itself."""
    return value.entries if is_list(value) else (value,)


def floats(value) -> np.ndarray:
    """A gradlang value without free symbols (a number, a vector, a matrix) as float64."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    return np.asarray(value, dtype=np.float64)


def casts(writer: Writer) -> bool:
    """Whether the program keeps a float32 cast (float32(…))."""
    return any("float32(" in line.text for line in writer.body)


def close(ours, theirs, relative: float = RELATIVE) -> bool:
    """Equal to `relative` of the larger array's scale, ABSOLUTE at least; NaN equals NaN; shapes up to axes of 1."""
    a, b = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    if a.size != b.size:
        return False
    a, b = a.reshape(-1), b.reshape(-1)
    if not np.array_equal(np.isnan(a), np.isnan(b)) or not np.array_equal(np.isinf(a), np.isinf(b)):
        return False
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite], b[~finite]):
        return False
    a, b = a[finite], b[finite]
    if not a.size:
        return True
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    return float(np.max(np.abs(a - b))) <= relative * scale + ABSOLUTE


def _shown(array) -> str:
    array = np.asarray(array, dtype=np.float64)
    text = repr(float(array)) if array.size == 1 else _listed(array.tolist())
    return text if len(text) <= 120 else text[:117] + "..."


def _listed(values) -> str:
    """A nested list of floats as text, NaN and infinities too (a NaN gradient is what a message may show)."""
    if isinstance(values, list):
        return "[" + ", ".join(_listed(v) for v in values) + "]"
    return repr(float(values))


def _from_the_program(error: GradlangError, lines: list, spec: str) -> TranslateError:
    """An error of the written program, placed at the user's line of the operation that wrote the statement."""
    line = lines[error.line - 1] if error.line is not None and 1 <= error.line <= len(lines) else None
    message = f"the translation of {spec} does not run: {error.kind}: {error.message}"
    if line is not None and line.origin is not None:
        return placed(f"{line.origin.op}: {message}", line.origin.where)
    return TranslateError(message)


def _differs(session, writer: Writer, spec: str, framework: str, what: str) -> TranslateError:
    """The first bound intermediate that differs, at its line; else the operations the difference may come from."""
    point = writer.point
    for line in writer.body:
        origin = line.origin
        if origin is None or origin.point is None or not line.name:
            continue
        try:
            value = floats(session.eval(f"{line.name} at {point}" if point else line.name))
        except GradlangError:
            continue
        if not close(value, origin.point):
            return placed(f"{origin.op}: written as `{line.name}`, its value at the traced point is {_shown(value)} "
                          f"where {framework} computes {_shown(origin.point)}; the translation of {spec} is refused",
                          origin.where)
    suspects = ", ".join(f"{op} at {where}" for op, where in writer.suspects)
    message = (f"the translation of {spec} is refused: {what} at the traced point"
               + (f"; the operations it may come from: {suspects}" if suspects else ""))
    return placed(message, writer.suspects[0][1]) if writer.suspects else TranslateError(message)

