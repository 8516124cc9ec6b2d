"""einsum's subscripts as NumPy reads them (`"bij,bjk->bik"`, `"...ij,...jk"`), made explicit.

A spec is checked against its operands' shapes once, where the call is
written, and kept in one explicit form: every `...` written as letters of its
own (the letters no operand uses, in the order `a`…`z`, `A`…`Z`), and the
output written out where `->` is absent (as NumPy: the ellipsis's letters, then
the letters used once, in ASCII order). A letter of size 1 in one operand and
of another size elsewhere is NumPy's broadcasting: that operand's letter is
renamed to a letter of its own, which the sum then runs over (a sum over one
term is that term), so the adjoint sums the broadcast out by the same rule.
Two sizes that differ otherwise are a ShapeError naming the letter and both.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.errors import ShapeError
from gradlang.expr.tensor.shapes import as_basic
from gradlang.expr.values import describe_shape as describe

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Spec:
    """An explicit spec: each operand's letters and the output's (tuples of one-letter strings)."""

    inputs: tuple
    output: tuple

    @property
    def text(self) -> str:
        return ",".join("".join(s) for s in self.inputs) + "->" + "".join(self.output)

    def sizes(self, shapes: list) -> dict:
        """Each letter's size (operands already checked, so any occurrence gives it)."""
        found: dict = {}
        for letters, shape in zip(self.inputs, shapes):
            for letter, size in zip(letters, shape):
                found.setdefault(letter, size)
        return found

    def shape(self, shapes: list) -> tuple:
        sizes = self.sizes(shapes)
        return tuple(sizes[letter] for letter in self.output)

    def summed(self) -> tuple:
        """The letters the sum runs over (in no operand's output), in the order they first appear."""
        used = [letter for letters in self.inputs for letter in letters]
        return tuple(dict.fromkeys(letter for letter in used if letter not in self.output))

    def fresh(self, count: int) -> tuple:
        """`count` letters no operand and no output uses."""
        used = {letter for letters in (*self.inputs, self.output) for letter in letters}
        free = [letter for letter in LETTERS if letter not in used]
        if len(free) < count:
            raise ShapeError("einsum has only 52 letters: this product needs more axes than that")
        return tuple(free[:count])


def parse(text: str, shapes: list) -> Spec:
    """The explicit Spec of NumPy's subscripts `text` for operands of these shapes (a ShapeError if they differ)."""
    text = text.replace(" ", "")
    if text.count("->") > 1 or ("->" not in text and ">" in text) or text.count("-") != text.count("->"):
        raise ShapeError(f'einsum\'s subscripts "{text}" must have at most one ->, as "ij,jk->ik"')
    left, arrow, right = text.partition("->")
    terms = left.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f'einsum\'s subscripts "{text}" name {_count(len(terms), "operand")}, but {len(shapes)} '
                         f'{"is" if len(shapes) == 1 else "are"} given')
    for term in (*terms, right):
        _check_letters(term, text)
    width = max([len(shape) - len(term.replace("...", "")) for term, shape in zip(terms, shapes)] + [0])
    taken = {c for c in text if c.isalpha()}
    extra = tuple(letter for letter in LETTERS if letter not in taken)[:width]
    if len(extra) < width:
        raise ShapeError("einsum has only 52 letters: this product needs more axes than that")
    inputs = tuple(_expanded(term, shape, extra) for term, shape in zip(terms, shapes))
    output = _expanded_output(right, extra, inputs) if arrow else _implicit(inputs, extra)
    return _broadcast(Spec(inputs, output), shapes)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _check_letters(term: str, text: str) -> None:
    rest = term.replace("...", "", 1)
    if not all(c in LETTERS for c in rest):
        raise ShapeError(f'einsum\'s subscripts "{text}" may hold letters, ",", "->" and "..." only')


def _expanded(term: str, shape: tuple, extra: tuple) -> tuple:
    """An operand's letters with its `...` written as the last letters of `extra` (ellipses align from the right)."""
    if "..." not in term:
        if len(term) != len(shape):
            raise ShapeError(f'einsum\'s subscript "{term}" has {_count(len(term), "letter")} for {describe(shape)}')
        return tuple(term)
    before, _, after = term.partition("...")
    width = len(shape) - len(before) - len(after)
    if width < 0:
        raise ShapeError(f'einsum\'s subscript "{term}" has more letters than {describe(shape)} has axes')
    return tuple(before) + (extra[len(extra) - width:] if width else ()) + tuple(after)


def _expanded_output(term: str, extra: tuple, inputs: tuple) -> tuple:
    if "..." not in term and extra:
        raise ShapeError("einsum's output needs '...' where its operands have one that stands for axes")
    before, _, after = term.partition("...")
    output = tuple(before) + (extra if "..." in term else ()) + tuple(after)
    used = {letter for letters in inputs for letter in letters}
    for letter in output:
        if letter not in used:
            raise ShapeError(f"einsum's output letter '{letter}' is in no operand")
    if len(set(output)) != len(output):
        raise ShapeError("einsum's output names a letter twice")
    return output


def _implicit(inputs: tuple, extra: tuple) -> tuple:
    """NumPy's output without `->`: the ellipsis's letters, then each letter used once, in ASCII order."""
    counts: dict = {}
    for letters in inputs:
        for letter in letters:
            if letter not in extra:
                counts[letter] = counts.get(letter, 0) + 1
    return extra + tuple(sorted(letter for letter, count in counts.items() if count == 1))


def _broadcast(spec: Spec, shapes: list) -> Spec:
    """Each letter's sizes agree; one of size 1 beside another size is renamed in its operand (NumPy's broadcasting)."""
    sizes: dict = {}
    for letters, shape in zip(spec.inputs, shapes):
        for letter, size in zip(letters, shape):
            sizes.setdefault(letter, set()).add(as_basic(size))
    renamed = {letter for letter, found in sizes.items() if len(found) == 2 and sp.S.One in found}
    for letter, found in sizes.items():
        if len(found - {sp.S.One}) > 1 or (len(found) > 1 and letter not in renamed):
            shown = " and ".join(sorted(str(s) for s in found))
            raise ShapeError(f"einsum's letter '{letter}' stands for axes of different sizes, {shown}")
    if not renamed:
        return spec
    pool = iter(spec.fresh(sum(len(letters) for letters in spec.inputs)))
    inputs = tuple(tuple(next(pool) if letter in renamed and as_basic(size) == 1 else letter
                         for letter, size in zip(letters, shape)) for letters, shape in zip(spec.inputs, shapes))
    return Spec(inputs, spec.output)


def read(text: str) -> Spec:
    """An explicit spec as its node holds it (`"ij,jk->ik"`): every letter written, no `...`."""
    left, _, right = text.partition("->")
    return Spec(tuple(tuple(term) for term in left.split(",")), tuple(right))
