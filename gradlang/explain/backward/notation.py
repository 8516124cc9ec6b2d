"""The notation of a folded (vector-level) tape: picks, broadcasts, one-hot vectors, reductions.

A folded tape (explain/backward/fold.py) writes one row for a whole vector of scalar
rows, so its expressions need a few symbols the scalar tape never does:
`v6[0]` (a component of a vector row), `v4·1` (a scalar broadcast to every
component), `e₀` (the one-hot vector that routes an adjoint to one
component), `Σ v6` / `max(v1)` (a scalar row that reduces a whole vector
row) and `[e[0], e[1]]` (inputs that are not a whole declared variable). They
are SymPy functions only so the printers can place them inside ordinary
expressions; each prints itself in plain text and LaTeX. `component` says
what a folded expression means: its value at component k, written with the
scalar tape's symbols, which is how the tests check a fold against the tape.
"""

from __future__ import annotations

import sympy as sp

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _grouped(printer, expr) -> str:
    text = printer._print(expr)
    return text if expr.is_Atom or isinstance(expr, (Pick, Components)) else f"({text})"


class Notation(sp.Function):
    """A symbol of the folded tape's notation; LaTeX hands it the exponent when it is a power's base."""

    def _latex(self, printer, exp=None):
        body = self._latex_body(printer)
        return body if exp is None else rf"\left({body}\right)^{{{exp}}}"


class Pick(Notation):
    """Component k of a vector row: v6[0]."""

    nargs = 2

    def _sympystr(self, printer):
        return f"{printer._print(self.args[0])}[{self.args[1]}]"

    def _latex_body(self, printer):
        return f"{printer._print(self.args[0])}[{self.args[1]}]"


class Broadcast(Notation):
    """A scalar standing for the vector with that scalar in every component: v4·1."""

    nargs = 1

    def _sympystr(self, printer):
        return f"{_grouped(printer, self.args[0])}·1"

    def _latex_body(self, printer):
        return rf"{_grouped(printer, self.args[0])}\,\mathbf{{1}}"


class OneHot(Notation):
    """The k-th unit vector e_k: an adjoint sent to one component only."""

    nargs = 1

    def _sympystr(self, printer):
        return "e" + str(self.args[0]).translate(SUBSCRIPTS)

    def _latex_body(self, printer):
        return rf"\mathbf{{e}}_{{{self.args[0]}}}"


REDUCTIONS = {"add": ("Σ ", r"\sum ", sp.Add),
              "max": ("max", r"\max", None), "min": ("min", r"\min", None)}  # None: the primitive's class


def _combine(name: str):
    from gradlang.expr import primitives

    return REDUCTIONS[name][2] or primitives.lookup(name).cls


class Reduced(Notation):
    """A scalar row that combines every component of one vector row: Σ v6, max(v1)."""

    nargs = 2

    def _sympystr(self, printer):
        plain = REDUCTIONS[self.args[0].name][0]
        if plain.endswith(" "):
            return plain + _grouped(printer, self.args[1])
        return f"{plain}({printer._print(self.args[1])})"

    def _latex_body(self, printer):
        name, latex = self.args[0].name, REDUCTIONS[self.args[0].name][1]
        if name == "add":
            return latex + _grouped(printer, self.args[1])
        return latex + rf"\left({printer._print(self.args[1])}\right)"


class Components(Notation):
    """A vector written out component by component: inputs that are not a whole variable."""

    def _sympystr(self, printer):
        return "[" + ", ".join(printer._print(a) for a in self.args) + "]"

    def _latex_body(self, printer):
        return r"\left[" + ", ".join(printer._print(a) for a in self.args) + r"\right]"


class Called(Notation):
    """A builtin of a vector whose value is a vector, shown whole: softmax(v1), whose k-th component is softmax(v1)[k]."""

    nargs = 2

    def _sympystr(self, printer):
        return f"{self.args[0].name}({printer._print(self.args[1])})"

    def _latex_body(self, printer):
        return rf"\operatorname{{{self.args[0].name}}}\left({printer._print(self.args[1])}\right)"


def reduced(operation: str, vector: sp.Symbol) -> sp.Expr:
    return Reduced(sp.Symbol(operation), vector)


def is_vector(expr, vectors) -> bool:
    """Does a folded expression stand for a vector (outside picks and reductions)?"""
    if isinstance(expr, (Pick, Reduced)):
        return False
    if isinstance(expr, (OneHot, Broadcast, Components, Called)) or expr in vectors:
        return True
    return any(is_vector(a, vectors) for a in expr.args)


def broadcast_marked(expr, vectors):
    """A vector expression with each scalar term of a sum written as a broadcast (v1 + v4·1)."""
    if not is_vector(expr, vectors):
        return Broadcast(expr)
    if isinstance(expr, sp.Add):
        return sp.Add(*[a if is_vector(a, vectors) else Broadcast(a) for a in expr.args], evaluate=False)
    return expr


def _whole_vector(expr, members):
    """softmax(v5)[0] (a builtin reading a whole vector row) with the row's components as its arguments, or None."""
    from gradlang.expr import primitives

    record = primitives.by_class(type(expr))
    if record is None or record.form not in ("vector", "component"):
        return None
    head = expr.args[:1] if record.form == "component" else ()
    rest = expr.args[len(head):]
    if len(rest) != 1 or len(members.get(rest[0], ())) < 2:
        return None
    return type(expr)(*head, *members[rest[0]])


def component(expr, k: int, members: dict):
    """The value of a folded expression at component k, in the scalar tape's symbols.

    members maps each folded symbol (v6, v̄6) to the scalar symbols of its
    components; a scalar row maps to a one-element list, used at every k.
    """
    if isinstance(expr, Pick):
        return members[expr.args[0]][int(expr.args[1])]
    if isinstance(expr, Broadcast):
        return component(expr.args[0], k, members)
    if isinstance(expr, OneHot):
        return sp.S.One if int(expr.args[0]) == k else sp.S.Zero
    if isinstance(expr, Reduced):
        over = expr.args[1]
        size = max((len(members[s]) for s in over.free_symbols if s in members), default=1)
        return _combine(expr.args[0].name)(*[component(over, i, members) for i in range(size)])
    if isinstance(expr, Components):
        return expr.args[k]
    if isinstance(expr, Called):
        from gradlang.expr import primitives

        return primitives.lookup(expr.args[0].name).cls(k, *members[expr.args[1]])
    whole = _whole_vector(expr, members)
    if whole is not None:
        return whole
    if isinstance(expr, sp.Symbol) and expr in members:
        parts = members[expr]
        return parts[k] if len(parts) > 1 else parts[0]
    if not expr.args:
        return expr
    return expr.func(*[component(a, k, members) for a in expr.args])
