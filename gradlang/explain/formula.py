"""Records of a vector-level derivation: formulas in two spellings, lines, names.

A vector identity (∇ logsumexp = softmax, ∂softmax = diag(s) − s sᵀ) is not
a SymPy value: gradlang's values are arrays of scalars. So a formula is a
tuple of parts, each either `Math` (the same notation spelled for plain
text and for LaTeX) or a SymPy value, which each renderer prints with its
own printer (and its abbreviations). The records are data, like scalar/steps.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


@dataclass(frozen=True)
class Math:
    """Notation that is not a gradlang value: ∇, e₀, diag(s) − s sᵀ, in plain Unicode and in LaTeX."""

    plain: str
    latex: str


def math(plain: str, latex: str | None = None) -> Math:
    """Notation in both spellings; the LaTeX one, when not given, translated from the Unicode."""
    return Math(plain, latex_math(plain) if latex is None else latex)


_LATEX = {"∇": r"\nabla ", "−": "-", "·": r"\cdot ", "ᵀ": r"^{\top}", "Σ": r"\sum", "‖": r"\|", "≔": ":=",
          "δ": r"\delta ", "∂": r"\partial ", "ⁿ": "^{n}", "⁻": "^{-}", "¹": "1", "ᵥ": "_{v}", "ₖ": "_{k}",
          "ⱼ": "_{j}", "ᵢ": "_{i}", "…": r"\ldots ", "≠": r"\neq ", "²": "^{2}", "³": "^{3}"}
_LATEX.update({d: f"_{{{k}}}" for k, d in enumerate("₀₁₂₃₄₅₆₇₈₉")})
_LATEX.update({"σ": r"\sigma ", "ρ": r"\rho ", "ω": r"\omega ", "α": r"\alpha ", "β": r"\beta ", "π": r"\pi ",
               "′": "'", "ε": r"\varepsilon ", "γ": r"\gamma ", "μ": r"\mu ", "θ": r"\theta "})
_OPERATORS = {"log": r"\log", "exp": r"\exp", "diag": r"\operatorname{diag}", "softmax": r"\operatorname{softmax}",
              "logsumexp": r"\operatorname{logsumexp}", "sum": r"\operatorname{sum}", "dot": r"\operatorname{dot}"}


_MARKS = {"⁻ᵀ": r"^{-\top}", "⁻¹": "^{-1}"}  # one superscript each (A^{-}^{\top} is a double superscript)
_SPECIAL = {"$": r"\$"}  # a dollar inside a formula would end the mathematics


def latex_chars(text: str) -> str:
    """LaTeX from a printer with Unicode names left in it (the let names δ, uⱼ, dᵢ): only those translated
    (A⁻ᵀ as one superscript), and a dollar escaped."""
    for mark, latex in _MARKS.items():
        text = text.replace(mark, latex)
    return "".join(_SPECIAL.get(c, c) if c.isascii() else _LATEX.get(c, "") for c in text)


def text_box(word: str) -> str:
    """A rule's name as LaTeX text: \\text{broadcast\\_to} (a bare _ in a \\text box is a LaTeX error)."""
    return r"\text{" + word.replace("_", r"\_") + "}"


def latex_math(text: str) -> str:
    """Unicode notation as LaTeX math: ∇ → \\nabla, e₀ → e_{0}, words of a rule → \\text{…}."""
    out: list = []
    for word, char in re.findall(r"([A-Za-z]{2,})|(.)", text):
        if word:
            out.append(_OPERATORS.get(word, rf"\text{{{word}}}"))
        elif char == " ":
            out.append(r"\ " if out and (out[-1].startswith(r"\text") or out[-1] in (":", ",", ";")) else " ")
        else:
            ascii_or_none = _SPECIAL.get(char, char) if char.isascii() else ""  # pdflatex knows no other Unicode
            out.append(_LATEX.get(char, ascii_or_none))
    text = "".join(out).replace("^{-}1", "^{-1}")
    for mark in ("_", r"\^"):  # x_{i}_{j} is a LaTeX error: x_{ij}
        text = re.sub(mark + r"\{([^{}]*)\} ?" + mark + r"\{([^{}]*)\}", lambda m: m.group(0)[0] + "{" + m.group(1) + m.group(2) + "}", text)
    return text


def sub(n) -> str:
    """A subscript index: 0 → ₀."""
    return str(n).translate(_SUBSCRIPTS)


def basis(k: int) -> Math:
    """The unit vector e_k."""
    return Math(f"e{sub(k)}", f"e_{{{k}}}")


def formula(*parts) -> tuple:
    """A formula from parts: str (same in both spellings), Math, or SymPy values."""
    return tuple(math(p) if isinstance(p, str) else p for p in parts)


@dataclass(frozen=True)
class Let:
    """A name for a repeated subexpression: `let s = softmax(x − m)`, with a note."""

    name: object   # a Symbol, Math for a vector name, or a tuple of Symbols that value describes
    value: tuple   # a formula
    note: str = ""


@dataclass(frozen=True)
class VectorLine:
    """One numbered line: lhs = rhs₁ = rhs₂ …, by the named rule (instantiated)."""

    lhs: tuple
    rhs: tuple     # formulas, each one more `= …`
    rule: str


@dataclass(frozen=True)
class VectorDerivation:
    """A gradient or Jacobian derived once, in vector form, then instantiated.

    identity names the vector identity the derivation rests on (for the
    summary); lets are the names it introduces; lines are the numbered
    steps; result is the derivative as a gradlang value (checked equal to
    grad/jacobian); names are the stops it names itself; adjoints maps a stop to the formula of the adjoint that
    arrives at it (−1ᵀ(e₀ − s) = −1 + Σₖ sₖ), for the ledger.
    """

    identity: str
    lets: tuple
    lines: tuple
    result: object
    adjoints: tuple = ()
    names: tuple = ()    # (stop, Symbol): stops named by the derivation (REINFORCE's advantage A)
    display: tuple = ()  # (value, Symbol): subexpressions shown by their let name (s[0], δ, u[1])
    values: tuple = ()   # (Symbol, value): what each let name stands for
    removes: tuple = ()  # (stop, formula): the term a blocking stop removes, as the identity states it (γ·δ·∇max)
    own: frozenset = frozenset()  # the names of the display that are the user's bindings (h, loss), not made up

    def instantiated(self):
        """The result with every let name replaced by its value: equal to grad/jacobian."""
        values = dict(self.values)
        if hasattr(self.result, "applyfunc"):
            return self.result.applyfunc(lambda e: e.xreplace(values))
        return self.result.xreplace(values)


def symbols_of(name: str, n: int) -> list:
    """The component symbols s[0], …, s[n-1] of a named vector."""
    return [sp.Symbol(f"{name}[{k}]", real=True) for k in range(n)]
