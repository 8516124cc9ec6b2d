"""Folding the scalar reverse-mode tape into a vector-level one, for `explain backward`.

The tape of gradlang.derive.dag.tape has one row per scalar: the stable
softmax of x ∈ ℝ³ computes x[0] − m, x[1] − m, x[2] − m on three rows, then
three exps, and its backward table repeats them (issue 14: 45 lines where a
teacher writes a handful). Folding groups the rows that apply the same
operation to the corresponding components of earlier groups (component k
of a group reads component k of each group it reads, or the same scalar in
every component: a broadcast; an input x[k] is component k, whatever order
the tape computes them in) into one vector row, `v5 = v1 + v4·1`,
`v6 = exp(v5)`; a scalar row that combines a whole group becomes a reduction
(`v7 = Σ v6`, `max(v1)`), and a scalar row that reads one component picks it
(`v6[0]`). The backward rows follow the same groups: a vector adjoint is the
sum of what each consumer sends it, written elementwise when every component
gets the same thing from the same component (`v6*v̄6`), broadcast from a
scalar consumer (`v̄7·1`), or routed to one component (`v8*v̄9·e₀`), which is
always right and is the fallback. Nothing is folded that would not expand
back to the scalar rows: a group whose row does not re-expand to each of its
members, that misses a component, whose operand groups have another length,
or that no row reads whole (parallel scalar work), is split up again. The
cuts and the ledger are computed on the scalar tape (explain/backward/view.py) and
only renumbered here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import sympy as sp

from gradlang.derive.dag.tape import adjoint_symbol, value_symbol
from gradlang.explain.backward.notation import Called, Components, OneHot, Pick, broadcast_marked, component, reduced

INPUT_NAME = re.compile(r"^(.+)\[(\d+(?:, \d+)*)\]$")


@dataclass(frozen=True)
class Ref:
    """A scalar row's place in the folded tape: row `index`, and its component when that row is a vector."""

    index: int
    component: int | None = None

    def __str__(self) -> str:
        return f"{self.index}" if self.component is None else f"{self.index}[{self.component}]"


@dataclass(frozen=True)
class VectorRow:
    """A forward row of the folded tape; members are the scalar rows it stands for, in component order."""

    index: int
    expr: object
    operation: str
    inputs: tuple
    local: sp.Basic
    stopped: bool
    members: tuple

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class VectorAdjoint:
    """A backward row of the folded tape: (consumer row or None, term) pairs, their sum, the adjoint's value."""

    index: int
    contributions: tuple
    local: sp.Basic
    adjoint: object
    members: tuple
    size: int


def _place(symbol):
    """(variable name, indices) of a component x[k] or W[i, j], or None."""
    match = INPUT_NAME.match(symbol.name) if isinstance(symbol, sp.Symbol) else None
    return (match.group(1), tuple(int(i) for i in match.group(2).split(", "))) if match else None


def _input_place(row):
    return _place(row.expr) if row.operation == "input" else None


def _kind(row) -> tuple:
    return row.operation, row.stopped, len(row.inputs)


def _input_position(first, row, axis: int):
    """row's component in the group of input first, along the axis (W[0, 1], W[1, 1], … down axis 0), or None."""
    a, b = _input_place(first), _input_place(row)
    if not (a and b and a[0] == b[0] and len(a[1]) == len(b[1])):
        return None
    axis = axis % len(a[1])
    same = all(a[1][i] == b[1][i] for i in range(len(a[1])) if i != axis)
    return b[1][axis] if same else None


class Grouping:
    """Which group (in order of first appearance) and component each scalar forward row takes.

    A row's component is that of the rows it reads: exp(x[10]) is component
    10 of its group whatever order the tape computes the components in (the
    tape follows SymPy's argument order, x[0], x[10], x[11], …, x[1]). An
    input takes its index, a group's first row the component its operands
    agree on (max(x[0], x[1], x[2]) and what is computed from it have none:
    they take 0 and can only be broadcast).
    """

    def __init__(self, forward, barred: frozenset, axis: int = 0):
        self.axis = axis  # the index inputs of a matrix vary along within a group
        self.slots: list[dict] = []  # per group: component → row
        self.creators: list = []  # per group: (first row, its component)
        self.place: dict = {}
        self.positioned: set = set()
        self.kinds: dict = defaultdict(list)  # (operation, stopped, operand count) → groups  # rows whose component says which component of a vector they are
        self.aligned: dict = defaultdict(set)  # group → groups it reads component by component
        for row in forward:
            joined = None if row.index in barred else self._joining(row)
            if joined is None:
                position = self._own_position(row)
                self.place[row.index] = (len(self.slots), position)
                self.kinds[_kind(row)].append(len(self.slots))
                self.slots.append({position: row})
                self.creators.append((row, position))
            else:
                g, q = joined
                self.place[row.index] = (g, q)
                self.slots[g][q] = row
                self.positioned.add(row.index)
        self.groups = [[slots[p] for p in sorted(slots)] for slots in self.slots]
        for g, slots in enumerate(self.slots):
            if len(slots) == 1:
                self.place[self.creators[g][0].index] = (g, 0)

    def _own_position(self, row) -> int:
        place = _input_place(row)
        if place is not None:
            self.positioned.add(row.index)
            return place[1][self.axis % len(place[1])]
        agreed = {self.place[j][1] for j in row.inputs if j in self.positioned}
        if len(agreed) != 1:
            return 0
        self.positioned.add(row.index)
        return agreed.pop()

    def _joining(self, row):
        for g in self.kinds[_kind(row)]:  # only groups of the same operation: the tape can be long
            joined = self._aligned_with(g, row)
            if joined is not None:
                self.aligned[g] |= joined[1]
                return g, joined[0]
        return None

    def _aligned_with(self, g: int, row):
        """(component, groups read component by component) if row is a component of group g, else None."""
        first, a = self.creators[g]
        if row.operation == "input":
            q = _input_position(first, row, self.axis)
            return None if q is None or q in self.slots[g] else (q, set())
        read = defaultdict(set)
        for i in row.inputs:
            read[self.place[i][0]].add(self.place[i][1])
        ours, theirs, groups, components = {}, {}, set(), set()
        for j in set(first.inputs):
            h, p = self.place[j]
            others = read.get(h, set()) - {a}
            if p != a or len(others) != 1:
                continue  # a broadcast operand, or one row reads twice
            q = others.pop()
            slot = sp.Dummy(f"g{h}")
            ours[value_symbol(j)], theirs[value_symbol(self.slots[h][q].index)] = slot, slot
            groups.add(h)
            components.add(q)
        if len(components) != 1 or first.local.xreplace(ours) != row.local.xreplace(theirs):
            return None
        q = components.pop()
        return None if q in self.slots[g] else (q, groups)

    def unsound(self) -> set:
        """Rows (but the first) of groups with a missing component or reading a group of another length."""
        out = set()
        for g, slots in enumerate(self.slots):
            broken = sorted(slots) != list(range(len(slots)))
            if broken or any(len(self.slots[h]) != len(slots) for h in self.aligned[g]):
                out |= {row.index for row in slots.values()} - {self.creators[g][0].index}
        return out


class Fold:
    """A folded tape's rows and the translation of scalar-tape expressions into its numbering."""

    def __init__(self, forward, variables=(), axis: int = 0):
        barred: frozenset = frozenset({forward[-1].index}) if forward else frozenset()
        for _ in range(len(forward) + 1):  # each round splits at least one group, or stops
            grouping = Grouping(forward, barred, axis)
            unsound = grouping.unsound()
            if unsound:
                barred = barred | unsound
                continue
            self.reducing: set = set()
            self.groups, self.place, self.aligned = grouping.groups, grouping.place, grouping.aligned
            self.creators = [row.index for row, _ in grouping.creators]
            self._symbols = {}
            for j, (g, p) in self.place.items():
                self._symbols[value_symbol(j)] = (g, p, False)
                self._symbols[adjoint_symbol(j)] = (g, p, True)
            self.vectors = {f(g + 1) for g, m in enumerate(self.groups) if len(m) > 1 for f in (value_symbol, adjoint_symbol)}
            self.forward = tuple(self._row(g, members, variables) for g, members in enumerate(self.groups))
            split = self._not_reexpanding() | self._unread()
            if not split:
                break
            barred = barred | split

    def ref(self, index) -> Ref | None:
        if index is None or index not in self.place:
            return None
        g, p = self.place[index]
        return Ref(g + 1, p if len(self.groups[g]) > 1 else None)

    def translated(self, expr, k=None, aligned=None):
        """expr (scalar-tape symbols) in the folded numbering: components k of vector rows as the rows, others picked.

        aligned limits the groups read at component k to those (a forward row's
        operands); None lets every vector row at component k stand for itself.
        """
        if not isinstance(expr, sp.Basic):
            return expr
        expr, wholes = self._whole_arguments(expr, k)
        mapping = {}
        for symbol in expr.free_symbols:
            hit = self._symbols.get(symbol)
            if hit is None:
                continue
            g, p, bar = hit
            target = (adjoint_symbol if bar else value_symbol)(g + 1)
            whole = len(self.groups[g]) == 1 or (p == k and (aligned is None or g in aligned))
            mapping[symbol] = target if whole else Pick(target, p)
        expr = expr.xreplace(mapping)
        if not wholes:
            return expr
        with sp.evaluate(False):  # softmax of one symbol would evaluate as a builtin of a scalar
            return expr.xreplace(wholes)

    def _whole_arguments(self, expr, k=None):
        """softmax([v9, v10, v11])[2] as softmax(v5)[2] when v9, v10, v11 are the components of v5, in order.

        The builtins that take a vector (softmax, logsumexp, norm) read a
        vector row whole; at component k, softmax(v5)[k] is the vector
        softmax(v5) (so ∇logsumexp's adjoint reads v̄5*softmax(v1)). The vector
        symbol stands in a placeholder until the scalar symbols are renumbered
        (the two numberings share names).
        """
        from gradlang.expr import primitives

        found, wholes = {}, {}
        for node in sp.preorder_traversal(expr):
            record = primitives.by_class(type(node))
            if record is None or record.form not in ("vector", "component") or node in found:
                continue
            head = node.args[:1] if record.form == "component" else ()
            hits = [self._symbols.get(a) for a in node.args[len(head):]]
            g = hits[0][0] if hits and hits[0] and not hits[0][2] else None
            if g is None or len(hits) < 2 or hits != [(g, p, False) for p in range(len(self.groups[g]))]:
                continue
            slot = wholes.setdefault(g, sp.Dummy(f"v{g + 1}"))
            if head and k is not None and head[0] == k:
                found[node] = Called(sp.Symbol(record.name), slot)
            else:
                found[node] = type(node)(*head, slot, evaluate=False)
            self.reducing.add(g)
        return expr.xreplace(found), {slot: value_symbol(g + 1) for g, slot in wholes.items()}

    def members(self) -> dict:
        """Each folded symbol (v6, v̄6) → the scalar symbols of its components (for tape_notation.component)."""
        out = {}
        for g, rows in enumerate(self.groups):
            out[value_symbol(g + 1)] = [value_symbol(r.index) for r in rows]
            out[adjoint_symbol(g + 1)] = [adjoint_symbol(r.index) for r in rows]
        return out

    def _row(self, g: int, members: list, variables) -> VectorRow:
        first = members[0]
        inputs = tuple(sorted({self.place[j][0] + 1 for r in members for j in r.inputs}))
        indices = tuple(r.index for r in members)
        if len(members) == 1:
            local, operation = self._reduction(first) or (self.translated(first.local), first.operation)
            return VectorRow(g + 1, first.expr, operation, inputs, local, first.stopped, indices)
        exprs = Components(*[r.expr for r in members])
        if first.operation == "input":
            local = _slice(members, variables) or exprs
        else:
            local = broadcast_marked(self.translated(first.local, 0, self.aligned[g]), self.vectors)
        return VectorRow(g + 1, exprs, first.operation, inputs, local, first.stopped, indices)

    def _reduction(self, row):
        """(Σ v6, "sum") for a scalar row that adds (maxes) every component of a vector row: Σ v6 + v3, max(v1)."""
        kind = {"add": "add", "max": "max", "min": "min"}.get(row.operation)
        args = list(row.local.args) if kind else []
        whole = [g for g in sorted({self.place[j][0] for j in row.inputs})
                 if len(self.groups[g]) > 1 and {value_symbol(r.index) for r in self.groups[g]} <= set(args)]
        inside = {value_symbol(r.index) for g in whole for r in self.groups[g]}
        rest = [a for a in args if a not in inside]
        if not whole or (kind != "add" and (rest or len(whole) > 1)):
            return None
        self.reducing |= set(whole)
        parts = [reduced(kind, value_symbol(g + 1)) for g in whole] + [self.translated(a) for a in rest]
        names = {"add": "sum", "max": "max", "min": "min"}
        return (sp.Add(*parts), names[kind] if len(parts) == 1 else row.operation) if kind == "add" else (parts[0], kind)

    def _unread(self) -> set:
        """Members (but the first) of vector rows no row reads whole: parallel scalar chains, not a vector computation.

        x[0]*x[1] + x[2] stays scalar: x[0] and x[1] would fold into an input
        row, but only picks of it are ever used.
        """
        read = {h for g in range(len(self.groups)) for h in self.aligned[g] if len(self.groups[g]) > 1}
        read |= self.reducing
        return {i for g, rows in enumerate(self.groups) if len(rows) > 1 and g not in read for i in self._joined(g)}

    def _joined(self, g: int) -> set:
        """The rows of group g but the one that started it: what is barred from joining to split it up."""
        return {r.index for r in self.groups[g]} - {self.creators[g]}

    def _not_reexpanding(self) -> set:
        """Members of vector rows whose folded row does not give back that member's own row."""
        members, out = self.members(), set()
        for g, (row, rows) in enumerate(zip(self.forward, self.groups)):
            if len(rows) > 1 and rows[0].operation != "input":
                if any(_rebuilt(component(row.local, k, members)) != _rebuilt(r.local) for k, r in enumerate(rows)):
                    out |= self._joined(g)
        return out

    def adjoints(self, rows) -> list[VectorAdjoint]:
        """The backward rows folded by the forward groups, last row first."""
        by_group = defaultdict(dict)
        for row in rows:
            g, p = self.place[row.index]
            by_group[g][p] = row
        return [self._adjoint(g, by_group[g]) for g in sorted(by_group, reverse=True)]

    def _adjoint(self, g: int, rows: dict) -> VectorAdjoint:
        size = len(self.groups[g])
        sent = defaultdict(list)  # consumer group (None: the output) → (component here, component there, term)
        for k, row in rows.items():
            for parent, term in row.contributions:
                there = (None, 0) if parent is None else self.place[parent]
                sent[there[0]].append((k, there[1], term))
        order = sorted(sent, key=lambda c: -1 if c is None else c)
        terms = tuple((None if c is None else c + 1, self._sent(size, c, sent[c])) for c in order)
        adjoint = rows[0].adjoint if size == 1 else Components(*[rows[k].adjoint if k in rows else 0 for k in range(size)])
        local = sp.Add(*[t for _, t in terms])
        return VectorAdjoint(g + 1, terms, local, adjoint, tuple(rows[k].index for k in sorted(rows)), size)

    def _sent(self, size: int, consumer, items: list):
        """What one consumer sends a row: elementwise, broadcast, summed, or routed component by component."""
        width = 1 if consumer is None else len(self.groups[consumer])
        if size == 1:
            if width > 1 and sorted(j for _, j, _ in items) == list(range(width)):
                same = {self.translated(term, j) for _, j, term in items}
                if len(same) == 1:
                    return reduced("add", same.pop())
            return sp.Add(*[self.translated(term) for _, _, term in items])
        if sorted(k for k, _, _ in items) == list(range(size)) and (width == 1 or all(k == j for k, j, _ in items)):
            same = {self.translated(term, k) for k, _, term in items}
            if len(same) == 1:
                return broadcast_marked(same.pop(), self.vectors)
        return sp.Add(*[self.translated(term) * OneHot(k) for k, _, term in items])


def _rebuilt(expr):
    """expr with every node built again: the tape builds nodes in its own argument order, SymPy in its."""
    return expr if not expr.args else expr.func(*[_rebuilt(a) for a in expr.args])


def _slice(members, variables):
    """x, W[:, 0] or W[1, :] when the inputs are all of a variable or one whole row or column of it, else None."""
    base, first = _input_place(members[0])
    places = [_input_place(r)[1] for r in members]
    axis = next((i for i in range(len(first)) if places[-1][i] != first[i]), 0)
    expected = [p for b, p in filter(None, map(_place, variables)) if b == base
                and all(p[i] == first[i] for i in range(len(first)) if i != axis)]
    if sorted(expected, key=lambda p: p[axis]) != places:
        return None
    if len(first) == 1:
        return sp.Symbol(base)
    return sp.Symbol(base + "[" + ", ".join(":" if i == axis else str(first[i]) for i in range(len(first))) + "]")


def folded_tape(forward, variables=()) -> Fold:
    """The fold with the fewest rows: inputs of a matrix grouped down its columns (W @ x) or along its rows (x @ W)."""
    folds = [Fold(forward, variables, axis) for axis in (0, -1)]
    return min(folds, key=lambda f: len(f.forward))
