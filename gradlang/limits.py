"""Resource limits: the bounds that keep any input from hanging or exhausting memory.

Each is checked at the place that could blow up, and exceeding it raises a
`LimitError` at the offending source position. The numbers are generous for
teaching-sized programs and documented in docs/limits.md.

Arrays are bounded by memory alone, estimated from their shapes before any is
made: a declared tensor, a file load() reads, the float64 arrays a
statement's loads give, and the arrays one whole-array evaluation holds at
once (expr/tensor/cost.py) are each refused above max_memory(), a number
fixed by default (MAX_MEMORY_BYTES, the same on every machine, so a program
is refused the same way everywhere) that a user raises with --max-memory or
Session(max_memory=...).
"""

import contextlib
import contextvars

MAX_SOURCE_CHARS = 1_000_000    # characters of one program (a file, a cell, a line pasted)
MAX_TYPED_CHARS = 5_000         # characters typed key by key into one REPL input (shell/typed.py)
MAX_STATEMENTS = 10_000         # statements of one program
MAX_SOURCE_NESTING = 200        # open ( and [ at once
MAX_TREE_DEPTH = 400            # depth of the parse tree after parsing
MAX_ELEMENTS = 100_000          # components of one vector or matrix value
MAX_RANK = 32                   # axes of one tensor (NumPy's own bound): a declaration, a list, ones(…)
MAX_ROW_ARGUMENTS = 4_000_000   # arguments a row-wise function's components hold (softmax of n: n², core/builtins.py)
MAX_NUMERIC_POINTS = 1_000_000  # points of linspace / elementwise evaluation
MAX_GRADCHECK_CELLS = 20_000_000  # numbers gradcheck's finite differences evaluate at once (160 MB)
MAX_MATMUL_PRODUCTS = 125_000  # products of entries one symbolic matrix product builds (50×50 @ 50×50)
MAX_INTEGER_BITS = 100_000      # size of an exact integer power (about 30 000 digits)
MAX_DERIVATIVE_ORDER = 100      # n in diff(e, x, n), summed over all variables
MAX_DERIVATIVE_NODES = 20_000   # distinct subexpressions a derivative may add before it is differentiated again
NAMED_PARTS_ABOVE = 2_000       # tree nodes above which a result is shown as t1 = …, t2 = …
MAX_LAID_OUT_COMPONENTS = 400  # components of a value the pretty format lays out in 2-D (else one line)
MAX_ORDERED_TERMS = 256        # terms of a sum printed in polynomial order (a longer one keeps its own)
MAX_EXPLAINED_TREE_NODES = 100_000  # tree nodes of an expression the rule table derives step by step (core/explaining.py)
MAX_EXPLAINED_NODES = 100_000  # distinct subexpressions of an expression explain derives (core/explaining.py)
MAX_PRINTED_NODES = 200_000     # nodes of a result written out, with its shared parts named
MAX_CALL_DEPTH = 100            # nested calls of user functions (recursion)
MAX_USER_CALLS = 10_000         # calls of user functions in one statement (f2(y) = f1(f1(y)), … doubles them)
STATEMENT_TIME_LIMIT = 60.0     # CPU seconds of a statement's thread (budget.py), where a timer can be set
SIMPLIFY_MAX_NODES = 500        # tree nodes of a component that simplify/expand/factor will rewrite
MAX_EXPANDED_TERMS = 10_000     # terms a component of simplify/expand/factor may multiply out to (expr/bounded.py)
SIMPLIFY_WORK = 25_000          # units of work of one component's simplify/cancel/factor: nodes walked, monomials
                                # created, counted before each step (expr/simplify_steps.py); about 0.6 s of SymPy
DECIDED_COMPARISON_NODES = 500  # tree nodes of a comparison SymPy decides before numbers are given (expr/walk.py)
BLOCKED_SIMPLIFY_WORK = 4_500   # nodes times generators of a component blocked() simplifies (expr/bounded.py)
BLOCKED_SIMPLIFY_SYMBOLS = 6    # symbols of a component blocked() simplifies (expr/bounded.py)
MAX_SYMBOLIC_MATRIX_ORDER = 5   # n of an n×n matrix of symbols under det, logdet, inv (the formula has n! terms)
MAX_EXACT_MATRIX_ORDER = 100   # n of an n×n matrix of integers or rationals under det, logdet, inv
MAX_TRANSLATED_STATEMENTS = 200  # bindings of a --from-jax/--from-torch program (frameworks/program.py)
MAX_MEMORY_BYTES = 4 * 1024 ** 3  # default bytes of arrays a statement may need (max_memory(): --max-memory raises it)
MAX_NUMERIC_PRODUCTS = 10_000_000_000  # multiply-adds of the @, einsum, inv and det one whole-array evaluation computes


_MEMORY = contextvars.ContextVar("gradlang_max_memory", default=None)  # the running session's, per thread


def max_memory() -> int:
    """Bytes of arrays the running statement may need: its session's --max-memory, else MAX_MEMORY_BYTES."""
    value = _MEMORY.get()
    return MAX_MEMORY_BYTES if value is None else value


def max_tensor_elements() -> int:
    """Components one tensor may hold within max_memory() (8 bytes each): a declared tensor, ones(n), eye(n)."""
    return max_memory() // 8


def memory_limit(size: int | None):
    """max_memory() is `size` inside (None: the default), in this thread only; a context that does nothing
    where it is so already (a statement run again in a loop, issue #41)."""
    return _UNCHANGED if _MEMORY.get() == size else _memory_limit(size)


_UNCHANGED = contextlib.nullcontext()


@contextlib.contextmanager
def _memory_limit(size: int | None):
    token = _MEMORY.set(size)
    try:
        yield
    finally:
        _MEMORY.reset(token)


def readable_bytes(size: int) -> str:
    """A number of bytes as people read it: 74.5 GiB, 128.0 MiB, 800 bytes."""
    if size >= 1024 ** 3 // 10:
        return f"{size / 1024 ** 3:.1f} GiB"
    return f"{size / 1024 ** 2:.1f} MiB" if size >= 100 * 1024 else f"{size} bytes"


def memory_refusal(what: str, estimate: int) -> str:
    """The text of a LimitError for arrays above max_memory(): the estimate, the limit, and how to raise it."""
    return (f"{what} needs about {readable_bytes(estimate)} of memory, above the limit of "
            f"{readable_bytes(max_memory())}; raise it with --max-memory (Session(max_memory=...) in Python)")
