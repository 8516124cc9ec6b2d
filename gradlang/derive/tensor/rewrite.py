"""The bounded rewrites that turn a raw adjoint into the form a teacher writes.

Each rule (identities.py) is a function of one node that returns a simpler
equal node, or None, registered in RULES with the identity a derivation names
it by. `tidy` applies them bottom-up over the DAG, each node at most
`MAX_PASSES` times and within a budget of work counted in nodes visited and
terms created (work.py), so the work is bounded and the result is the same on every
run and every machine. The identities:

    scalars out of linear maps   outer(c u, v) = c outer(u, v), A (c x) = c A x, (c A)ᵀ = c Aᵀ
    basis vectors                ⟨e_k, v⟩ = v_k,   e_k ⊙ v = v_k e_k,   Σ e_k = 1,   (f(u))_k = f(u_k)
    softmax sums to one          Σ softmax(z) = 1,  ⟨𝟙, v⟩ = Σ v,  Σ (u ⊙ v) = ⟨u, v⟩,  ⟨u ⊘ s, s⟩ = Σ u
    ones                         Σ (c 𝟙) = n c,  A I = A,  I A = A
    products                     (A B)ᵀ = Bᵀ Aᵀ,  A W + B W = (A + B) W
    distribute where it cancels  s ⊙ (1 − e_k/s_k) = s − e_k  (kept only when the result is smaller)
    where's two branches         a ⊙ where(c, 1, 0) + b ⊙ where(c, 0, 1) = where(c, a, b)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from gradlang.derive.tensor.identities import (
    MAX_EXPAND_OPS, collect_right, common_factor, diag_sum, dot_basis, dot_of_sum, dot_ones, dot_self,
    dot_quotient, elementwise_cancel, entry_inside, hadamard_basis, numeric_factor, ones, ones_factor,
    scalar_coefficient, scalar_out, softmax_quotient, sum_of_ones, sums_to_one, total_of_constant,
    total_of_product, total_of_sum, transpose_product, where_branches,
)
from gradlang.derive.tensor.work import TREE, WORK, Work, affordable, expandable, ops, small, spend
from gradlang.expr.tensor.nodes import rank

MAX_PASSES = 6
MAX_WORK = 30_000  # units of work per tidy (work.py: nodes visited, terms created): bounds it on a large formula, by count
_WORK = object()  # the memo's entry for the units left
DERIVATION_TREE = 400  # the same bound for the many formulas of a derivation's lines (a Tidier)
DERIVATION_WORK = 30_000  # the work for all the formulas of one derivation, its lines and its ledger entry


@dataclass(frozen=True)
class Rewrite:
    """One identity of the registry: `rule(node)` gives a simpler equal node, or None; `identity`
    is how a derivation names it when it is used (explain/tensor/reverse_pass.py)."""

    rule: Callable
    identity: str
    latex: str
    algebra: bool = False  # plain algebra (a number or scalar factored out): done, not named in a derivation


# The registry, in the order the rules are tried at each node. docs/explain.md says how to add one.
RULES = (
    Rewrite(numeric_factor, "numbers factored out", r"\text{numbers factored out}", algebra=True),
    Rewrite(scalar_out, "A (c x) = c A x", r"A (c x) = c A x", algebra=True),
    Rewrite(ones_factor, "𝟙 ⊙ v = v", r"\mathbf{1} \odot v = v"),
    Rewrite(transpose_product, "(A B)ᵀ = Bᵀ Aᵀ", r"(A B)^\top = B^\top A^\top"),
    Rewrite(collect_right, "A W + B W = (A + B) W", r"A W + B W = (A + B) W"),
    Rewrite(diag_sum, "a diag(u) + b diag(v) = diag(a u + b v)", r"a \operatorname{diag}(u) + b \operatorname{diag}(v) = \operatorname{diag}(a u + b v)"),
    Rewrite(common_factor, "common factor out of a linear map", r"\text{common factor out of a linear map}", algebra=True),
    Rewrite(dot_basis, "⟨eₖ, v⟩ = vₖ", r"\langle e_k, v \rangle = v_k"),
    Rewrite(dot_self, "⟨u, u⟩ = ‖u‖²", r"\langle u, u \rangle = \|u\|^2"),
    Rewrite(dot_ones, "⟨𝟙, v⟩ = Σ v", r"\langle \mathbf{1}, v \rangle = \textstyle\sum v"),
    Rewrite(sums_to_one, "Σₖ sₖ = 1", r"\textstyle\sum_k s_k = 1"),
    Rewrite(sum_of_ones, "Σ 𝟙 = n", r"\textstyle\sum \mathbf{1} = n"),
    Rewrite(softmax_quotient, "exp(u) ⊘ Σ exp(u) = softmax(u)", r"e^{u} \oslash \textstyle\sum e^{u} = \operatorname{softmax}(u)"),
    Rewrite(total_of_constant, "Σ of a list of numbers is their sum", r"\text{the sum of a list of numbers}"),
    Rewrite(dot_of_sum, "⟨a + b, v⟩ = ⟨a, v⟩ + ⟨b, v⟩", r"\langle a + b, v \rangle = \langle a, v \rangle + \langle b, v \rangle"),
    Rewrite(dot_quotient, "⟨u ⊘ s, s⟩ = Σ u", r"\langle u \oslash s, s \rangle = \textstyle\sum u"),
    Rewrite(hadamard_basis, "eₖ ⊙ v = vₖ eₖ", r"e_k \odot v = v_k e_k"),
    Rewrite(ones, "A I = A, Σ(c 𝟙) = n c", r"A I = A,\ \textstyle\sum(c \mathbf{1}) = n c"),
    Rewrite(total_of_sum, "Σ(u + v) = Σ u + Σ v", r"\textstyle\sum(u + v) = \sum u + \sum v"),
    Rewrite(scalar_coefficient, "scalar factors cancelled", r"\text{scalar factors cancelled}"),
    Rewrite(elementwise_cancel, "elementwise factors cancelled", r"\text{elementwise factors cancelled}"),
    Rewrite(where_branches, "a ⊙ where(c, 1, 0) + b ⊙ where(c, 0, 1) = where(c, a, b)", r"a \odot [c] + b \odot [\lnot c] = \text{where}(c, a, b)"),
    Rewrite(entry_inside, "(f(u))ₖ = f(uₖ)", r"(f(u))_k = f(u_k)"),
    Rewrite(total_of_product, "Σ(u ⊙ v) = ⟨u, v⟩", r"\textstyle\sum(u \odot v) = \langle u, v \rangle"),
)
DISTRIBUTED = Rewrite(None, "products distributed where terms cancel", r"\text{products distributed where terms cancel}",
                      algebra=True)


def _step(node, used: list | None):
    """The first rewrite that changes the node, while the budget of work lasts (a count, never a time)."""
    if not spend(1):
        return None
    for rewrite in RULES:
        result = rewrite.rule(node)
        if result is not None and result != node:
            if used is not None and rewrite.identity not in used:
                used.append(rewrite.identity)
            return result
    return None


FORWARD = (RULES[[r.rule for r in RULES].index(softmax_quotient)],)


def normal_form(expr, used: list | None = None):
    """The expression with the builtins it spells out named (exp(u) ⊘ Σ exp(u) = softmax(u)), so the
    reverse pass takes the builtin's rule: the same function, read as a teacher reads it."""
    memo: dict = {}

    def walk(node):
        if node in memo or not isinstance(node, sp.Basic) or not node.args or isinstance(node, sp.Symbol):
            return memo.get(node, node)
        args = [walk(a) for a in node.args]
        new = node.func(*args) if any(a is not b for a, b in zip(args, node.args)) else node
        for rewrite in FORWARD:
            changed = rewrite.rule(new)
            if changed is not None and changed != new:
                new = changed
                if used is not None and rewrite not in used:
                    used.append(rewrite)
        memo[node] = new
        return new

    try:
        return walk(expr)
    except RecursionError:
        return expr


def tidy(expr, used: list | None = None):
    """expr with the rewrites applied bottom-up, then products distributed where that cancels terms.

    `used`, when given, receives the identity of each rewrite that changed something, in order."""
    memo: dict = {_WORK: Work(MAX_WORK)}
    token = WORK.set(memo[_WORK])
    try:
        result = _tidy(expr, memo, used)
        return _distribute(result, memo, {}, used)
    except RecursionError:
        return expr
    finally:
        WORK.reset(token)


class Tidier:
    """tidy with one memo for many calls: the lines of one derivation share their subexpressions, so each
    is tidied once (an identity used inside a part tidied before is not named again)."""

    def __init__(self, work: int = DERIVATION_WORK, tree: int = DERIVATION_TREE):
        self.memo: dict = {_WORK: Work(work)}
        self.done: dict = {}
        self.tree = tree

    def __call__(self, expr, used: list | None = None):
        tokens = TREE.set(self.tree), WORK.set(self.memo[_WORK])
        try:
            return _distribute(_tidy(expr, self.memo, used), self.memo, self.done, used)
        except RecursionError:
            return expr
        finally:
            WORK.reset(tokens[1])
            TREE.reset(tokens[0])


def _tidy(expr, memo: dict, used: list | None = None):
    """expr tidied bottom-up; memo keeps each part's result with the identities that gave it.

    A part met again while it is being tidied is a cycle: 2 (a − b) rebuilt from its arguments is
    2 a − 2 b again, which factors to 2 (a − b). It is kept as it is, so every part is tidied once."""
    if expr in memo:
        node, identities = memo[expr]
        _record(used, identities)
        return node
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, sp.Symbol):
        return expr
    memo[expr] = (expr, ())  # until it is done: a cycle back to it ends here
    mine: list = []
    args = [_tidy(a, memo, mine) for a in expr.args]
    node = expr.func(*args) if any(a != b for a, b in zip(args, expr.args)) else expr
    for _ in range(MAX_PASSES):
        stepped = _step(node, mine)
        if stepped is None:
            break
        node = _tidy(stepped, memo, mine) if stepped.args and stepped != node else stepped
    memo[expr] = (node, tuple(mine))
    _record(used, mine)
    return node


def _record(used: list | None, identities) -> None:
    if used is not None:
        used.extend(i for i in identities if i not in used)


def _distribute(expr, memo: dict, done: dict, used: list | None = None):
    """Distribute a product over its sums when the result, tidied, is smaller (s ⊙ (1 − e_k/s_k) = s − e_k).

    done keeps each part's result with the identities that gave it, as _tidy's memo does."""
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, sp.Symbol):
        return expr
    if expr not in done:
        mine: list = []
        done[expr] = (_distributed(expr, memo, done, mine), tuple(mine))
    node, identities = done[expr]
    _record(used, identities)
    return node


def _distributed(expr, memo: dict, done: dict, used: list):
    args = [_distribute(a, memo, done, used) for a in expr.args]
    node = expr.func(*args) if any(a is not b for a, b in zip(args, expr.args)) else expr
    if isinstance(node, sp.Mul) and rank(node) > 0 and any(isinstance(f, sp.Add) for f in node.args):
        if small(node) and ops(node) <= MAX_EXPAND_OPS and affordable(node) and expandable(node):
            tried: list = []
            spread = _tidy(spread_out(node), memo, tried)
            if ops(spread) < ops(node):
                _record(used, [DISTRIBUTED.identity, *tried])
                return spread
    return node


def spread_out(node):
    """The product multiplied out over its sums, and nothing inside its factors' arguments: the terms
    `expandable` counted and paid for. A product inside an argument (a Σ's, a stopped value's, a norm's) is
    tried where it stands, bottom-up; SymPy's deep expand_mul spread it again at every product above it,
    a layer norm's Σ(g ⊙ (x − μ) ⊙ (…)) into seven dots, half its gradient's time, and rewrote a stopped
    value away from the form the program gave it (issue #41)."""
    return sp.expand_mul(node, deep=False)
