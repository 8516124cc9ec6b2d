"""What a statement asks of the derivatives before any is taken: explain's request record and the readable mode.

Kept apart from derivatives.py, which imports the whole reverse-accumulation
engine (derive/dag/): the session, explain's selection and the services a
builtin is given name these on every run, and a program that takes no
derivative (`1 + 1`) should not pay for the engine's import (issue #41).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

BLOCKED_SIMPLIFY_SIZE = 2_000  # tree nodes above which blocked() leaves its difference unsimplified
_READABLE = ContextVar("readable", default=False)  # inside readable(): derivatives a reader follows


@contextmanager
def readable():
    """Derivatives taken inside come from sympy.diff whenever its work is bounded (TREE_WORK_LIMIT).

    For the views a reader follows step by step: explain, whose derivation of
    each component is SymPy's rules applied by hand and must end where the
    value does, and blocked(), whose difference simplify cancels best in
    SymPy's forms. Both are bounded in size, so this costs no scaling.
    """
    token = _READABLE.set(True)
    try:
        yield
    finally:
        _READABLE.reset(token)


@dataclass(frozen=True)
class DerivativeRequest:
    """One derivative taken inside an explain statement: what explain shows.

    operation is "diff", "grad", "jacobian", "hessian" or "blocked"; expr is the
    value differentiated; specs are the (symbol, order) pairs of diff, or wrt the
    variables of the others; result is the value returned; span is where the
    call stands in the source; definitions are the source texts of the user
    functions unfolded while building expr (shown as the definition step).
    """

    operation: str
    expr: object
    wrt: object
    specs: tuple
    result: object
    span: object
    definitions: tuple = ()
    written: tuple | None = None  # the stops the user wrote in expr (core/written_stops.WrittenStop), for the
    # ledger: () when the evaluator met none, None when no evaluator recorded them (a request built by hand)
    named: str = ""  # the user's own name for expr (loss = …), which a title too long to read writes instead
    text: str = ""  # expr as the user wrote it in the statement (Q(mu1, mu2)), for a title too long without a name
    of_gradient: bool = False  # a hessian written jacobian(grad(e, x), x): its title writes it so
    loss: str = "L"  # the letter the derivation writes expr by (∂L/∂u, unstopped(L)): explain/loss_letter.py

