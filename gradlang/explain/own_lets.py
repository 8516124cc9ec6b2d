"""The stops a let of the user's own binding says: written there as the user wrote them, given no letter.

A long stop gets a letter (layout.abbreviations: c = sg(…)), said once in the let block. Where the user bound
a value that holds the stop (double DQN's target = r + gamma*sg(dot(best, T @ s2))), the lines read the
user's name, and the stop's only reader is the let of that binding: a letter there would hide the user's own
formula (target = 0.99*c + r) behind a name the program never wrote.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.walk import dag_nodes


def said_in_own_lets(form, explanation) -> set:
    """The named stops inside the user's own bindings (a let writes each as the user did) that no other printed
    formula reads by their letter: not a pass line, the value, the ledger, nor a let of a name the pass made up
    (a line holds the binding's name, or a value its name absorbs: 2*(W @ s)[0] - 2.0*target). Such a stop
    needs no letter: the let of the user's binding is where it is said. The STE's sg(round(h) - h) keeps its
    letter: its adjoint line 2*c + 2*h reads it outside q = c + h."""
    vector = explanation.vector
    if vector is None or not vector.own or not form.names:
        return set()
    own = [value for value, name in vector.display if str(name) in vector.own]
    inside = set(dag_nodes(own))
    candidates = {stop: name for stop, name in form.names.items() if isinstance(stop, StopGradient) and stop in inside}
    if not candidates:
        return set()
    printed = [p for line in vector.lines for p in (*line.lhs, *(part for side in line.rhs for part in side))]
    printed += [explanation.derived, vector.result]
    printed += [p for let in vector.lets if str(let.name) not in vector.own for p in let.value]
    printed += [p for sentence in explanation.sentences for n in sentence for p in getattr(n, "parts", ())]
    printed += [p for n in explanation.identity for p in getattr(n, "parts", ())]
    letters = {name for name in candidates.values()}
    read = {n for n in dag_nodes([form(p) for p in printed if isinstance(p, sp.Basic)]) if n in letters}
    return {stop for stop, name in candidates.items() if name not in read}
