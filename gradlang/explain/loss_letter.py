"""The loss's letter in a derivation: ∂L/∂u, unstopped(L), decided once per derivative request.

A derivation writes the function it differentiates as L: the reverse pass's lines are ∂L/∂u, the ledger's
identity grad(unstopped(L), x) = g + r₁. L is the textbook's letter, but it is a letter a user may bind to
something else: soft Q-learning's program binds L to the TD error and its loss is `loss = L^2/2`, where
∂L/∂L = … would say two things with one letter. So the letter is chosen once, before any line is written
(core/explain_views.explanations puts it on the request, `request.loss`), and every line, the identity and
the ledger read it from there:

- L, unless the program binds L to something other than the function differentiated;
- else the user's own name for that function when the call writes it by a name of at most OWN_CHARACTERS
  (∂loss/∂W; VQ-VAE's ∂commit/∂W, where the example's L is its whole loss);
- else the first of FALLBACK the program does not bind (∂E/∂W), then L1, L2, ….
"""

from __future__ import annotations

import re

import sympy as sp

from gradlang.explain.formula import Math
from gradlang.expr.tensor.nodes import Var

LETTER = "L"
FALLBACK = ("E", "C")  # never g, k, r, q (the ledger's kept and removed terms), J (a Jacobian's), c, m (a stop's)
OWN_CHARACTERS = 8  # a user's name for the loss up to this long is written (loss, commit, codebook); longer would widen every line
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def loss_letter(request, bound) -> str:
    """The letter for the request's function, never a name the program binds (bound) to anything else."""
    written = getattr(request, "text", "") or ""
    own = written if _NAME.fullmatch(written) else ""
    if LETTER not in bound or own == LETTER:
        return LETTER
    if own and len(own) <= OWN_CHARACTERS:
        return own
    return next(letter for letter in (*FALLBACK, *(f"{LETTER}{k}" for k in range(1, 1000))) if letter not in bound)


def loss_of(request) -> str:
    """The request's loss letter (a request built by hand has L)."""
    return getattr(request, "loss", LETTER)


def latex_letter(loss: str) -> str:
    """The letter as LaTeX math writes a name: L, L_{1}, loss."""
    return sp.latex(sp.Symbol(loss))


def spelled(loss: str, plain: str) -> Math:
    """Text that holds the loss as {L}, in both spellings: spelled("L", "unstopped({L}), ")."""
    return Math(plain.format(L=loss), plain.format(L=latex_letter(loss)))


def adjoint_of(loss: str) -> Math:
    """∂L/∂, the head of an adjoint's line."""
    return Math(f"∂{loss}/∂", rf"\partial {latex_letter(loss)}/\partial ")


class AdjointName(Var):
    """∂L/∂z1: the adjoint of a node the user named, standing for it in the lines below (a tensor symbol
    of the node's shape, so every rule takes it as it takes the adjoint itself); `loss` is the loss's letter."""

    def __new__(cls, name: str, shape: tuple, loss: str = LETTER):
        made = Var.__new__(cls, name, shape)
        made._loss = loss
        return made

    def __getnewargs_ex__(self):
        return ((self.name, self._shape, self._loss), {})

    def _hashable_content(self):
        return super()._hashable_content() + (self._loss,)

    def _sympystr(self, printer):
        return f"∂{self._loss}/∂{self.name}"

    def _gradlang_line(self, printer):
        from sympy.printing.pretty.pretty_symbology import pretty_symbol

        return f"∂{self._loss}/∂{pretty_symbol(self.name)}"  # as the let line writes the name: δ, π, z₁₂

    def _pretty(self, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(self._gradlang_line(printer))

    def _latex(self, printer, exp=None):
        name = printer._print(sp.Symbol(self.name))
        text = rf"\frac{{\partial {latex_letter(self._loss)}}}{{\partial {name}}}"
        return text if exp is None else rf"\left({text}\right)^{{{exp}}}"
