"""The interpreter of expressions: a lark tree and an environment to a SymPy value.

One small method per grammar alias (`_sum`, `_power`, `_call`, ...). Names
resolve to function parameters first, then the session's bindings, then the
constants, and otherwise are real scalar symbols. User functions are bodies
evaluated at each call (late binding). Any gradlang error raised below a node
without a place is given that node's place on the way up, so errors point at
the innermost syntax that caused them.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from gradlang import limits
from gradlang.core import builtins, tensor_hooks as tensors
from gradlang.core import builtins_axes
from gradlang.core.tensor_hooks import aligned, fit, stretched
from gradlang.expr import engine
from gradlang.core.bindings import _component, _pair_up, _target_index
from gradlang.errors import GradlangError, LimitError, NameError, ShapeError, SyntaxError, ValueError
from gradlang.expr.exact import (
    power as _power, product as _product_of, to_sympy_number,
)
from gradlang.expr.domain import kept
from gradlang.lazy import deferred_module, np
from gradlang.remembered import remembered
from gradlang.core.services import Services
from gradlang.core.written_stops import CHOICES, RECORDED, STOPS, StopSites, as_in_formula, text_in
from gradlang.core.substitute import substitute
from gradlang.core.scalar_arithmetic import _COMPARISONS, _PRODUCT_OPS, _add, _is_scalar_expr
from gradlang.expr.values import (
    check_count,
    describe_shape,
    elements,
    elementwise,
    from_elements,
    is_condition,
    is_scalar,
    shape_of,
    to_symbolic,
)
from gradlang.expr.engine import TensorList, is_list, without_zeros
from gradlang.syntax import lowered as lo
from gradlang.syntax.lowered import written_names

explaining = deferred_module("gradlang.core.explaining")  # on the first builtin call (issue #41)
FunctionDef = tensors.FunctionDef  # importers read it here too; deferred in core/tensor_hooks.py
at_plan = deferred_module("gradlang.core.at_plan")  # the plans of `at` statements, on the first `at`
spelling = deferred_module("gradlang.core.spelling")  # notes and hints: on a first new name, at or misspelling


def symbol(name: str) -> sp.Symbol:
    """The real scalar symbol a name stands for when it is not bound."""
    return sp.Symbol(name, real=True)


class Evaluator:
    """Evaluates expression trees against the session's bindings."""

    def __init__(self, env: dict, notes: list, derivations: list | None = None, source: str = "",
                 seen: frozenset = frozenset(), sites: dict | None = None):
        self.env = env
        self.stops = StopSites({} if sites is None else sites)  # the stops written, for explain's ledger
        self.notes = notes
        self.attachments: list = []
        self.differentiated: list = []  # every operand of a derivative in the statement, for `at`'s notes
        self.seen = seen  # names written in the statements before this one, for `at`'s notes
        self.services = Services(notes, self.attachments, derivations, source, self.differentiated)
        self.unfolded: list = []  # user functions called, in order (for explain)
        self.call_depth = 0
        self.calls = [0]  # user function calls of the statement: limits.MAX_USER_CALLS
        self._defining: list = []  # the user functions being called, innermost last (a stop's text)

    # --- dispatch -------------------------------------------------------

    def evaluate(self, node: lo.Node, frame: dict | None = None):
        method = getattr(self, "_" + node.kind)
        try:
            value = method(node, frame or {})
            if node.kind in _SHAPED:
                return tensors.checked(value)
            return value
        except GradlangError as error:
            raise error.located(node.span)
        except RecursionError:
            raise LimitError("the computation nests too deeply", node.span) from None

    def _values(self, nodes, frame) -> list:
        return [self.evaluate(n, frame) for n in nodes]

    # --- atoms ----------------------------------------------------------

    def _number(self, node, frame):
        """A literal's number, made once per written literal (remembered.py): a statement run again in a loop
        does not read `0.1` again."""
        return remembered("number", node, self._literal)

    @staticmethod
    def _literal(node):
        text = node.literal
        if any(c in text for c in ".eE"):
            return to_sympy_number(float(text))
        if len(text) > limits.MAX_INTEGER_BITS // 3:
            raise LimitError("this integer literal is too long")
        return sp.Integer(text)

    def _name(self, node, frame):
        name = node.name
        value = self.lookup(name, frame)
        if name not in frame:
            self.stops.named(name)
        if isinstance(value, FunctionDef):
            raise NameError(f"'{name}' is a function; call it as {name}(…)")
        if value is not None:
            return value
        if name in builtins.CORE:
            raise NameError(f"'{name}' is a builtin function; call it as {name}(…)")
        if name in builtins.CONSTANTS:
            return builtins.CONSTANTS[name]
        self._noted(spelling.new_symbol_note(name, [*self.env, *frame]), None)
        return symbol(name)

    def _functions(self, frame: dict) -> list[str]:
        """The names of the user functions a call can reach, for a suggestion."""
        return [name for name, value in {**self.env, **frame}.items() if isinstance(value, FunctionDef)]

    def lookup(self, name: str, frame: dict):
        """The binding of a name (parameter, then session), or None."""
        return frame[name] if name in frame else self.env.get(name)

    def _brackets(self, node, frame):
        check_count(len(node.items))
        return self.list_of(self._values(node.items, frame))

    def list_of(self, values: list):
        """The value of `[…]` with these entries: a vector, a matrix, or a list of tensors."""
        if tensors.listed(values):  # [W, b]: tensors of different shapes, or of a symbolic size
            return TensorList(*values)
        if tensors.stacks(values):  # [x, y] of vectors of one shape: stack([x, y], 0) at every size
            return engine.joins.Stack(sp.S.Zero, *values)
        items = [to_symbolic(engine.lowered(v)) for v in values]
        shapes = {shape_of(v) for v in items}
        if len(shapes) > 1:
            shown = " and ".join(sorted(describe_shape(s) for s in shapes))
            raise ShapeError(f"the entries of a list must have one shape, got {shown}")
        shape = shapes.pop()  # lists nest to any depth (section 3b): [[[1, 2], [3, 4]]] is 1×2×2
        return from_elements((len(items), *shape), [e for v in items for e in elements(v)])

    # --- operators ------------------------------------------------------

    def _neg(self, node, frame):
        return elementwise(lambda u: -u, self._numeric(node.operand, frame))

    def _pos(self, node, frame):
        return self._numeric(node.operand, frame)

    def _numeric(self, node, frame):
        value = self.evaluate(node, frame)
        if is_list(value):
            raise engine.listed.refused("an operand of arithmetic").located(node.span)
        if isinstance(value, sp.Tuple):
            raise ValueError("a tuple (0, 1) is an axis or a shape, an argument of a builtin only").located(node.span)
        if any(is_condition(e) for e in elements(to_symbolic(value))):
            raise ValueError("a condition can only be the first argument of where").located(node.span)
        return value

    def _power(self, node, frame):
        base, exponent = stretched(aligned([self._numeric(node.base, frame),
                                                          self._numeric(node.exponent, frame)]))
        return fit(elementwise(lambda b, e: kept(_power, [b, e]), base, exponent), [base, exponent])

    def _noted(self, note, value):
        self.services.warn(note)
        return value

    def _product(self, node, frame):
        operands = aligned([self._numeric(child, frame) for child in node.operands])
        if all(op == "*" for op in node.operators) and all(_is_scalar_expr(v) for v in operands):
            operands = stretched(operands)  # X * v: NumPy's broadcast, made explicit (core/tensor_broadcast.py)
            product = kept(lambda *factors: _product_of(list(factors)), operands)  # one canonicalisation, not one per factor
            return fit(product, operands)
        value = operands[0]
        for op, operand_node, operand in zip(node.operators, node.operands[1:], operands[1:]):
            try:
                if op != "@":
                    value, operand = stretched([value, operand])
                step = _PRODUCT_OPS[op](value, operand)
            except GradlangError as error:
                raise error.located(operand_node.span)
            value = step if op == "@" else fit(step, [value, operand])  # @ is not elementwise
        return value

    def _sum(self, node, frame):
        terms = [self._numeric(node.terms[0], frame)]
        for op, term_node in zip(node.signs, node.terms[1:]):
            term = self._numeric(term_node, frame)
            terms.append(term if op == "+" else elementwise(lambda u: -u, term))
        terms = stretched(aligned(terms))
        if all(is_scalar(t) and not isinstance(t, np.ndarray) for t in terms):
            return fit(kept(_add, without_zeros(terms)), terms)
        return elementwise(lambda *parts: kept(_add, parts), *terms)

    def _compare(self, node, frame):
        a, b = stretched(aligned([self._numeric(node.left, frame), self._numeric(node.right, frame)]))
        return elementwise(_COMPARISONS[node.operator], a, b)

    # --- postfix --------------------------------------------------------

    _index, _column, _row = tensors.index, tensors.column, tensors.row  # v[i], M[:, j], M[i, :]
    _last, _along = tensors.last, tensors.along  # X[..., k], X[:, :, k]
    _range = tensors.range_of  # v[a:b], M[:, a:b]

    def _call(self, node, frame):
        """A call; a stop the user wrote is recorded where it is written, and a derivative request is given
        the stops written in what it differentiates (core/written_stops.py)."""
        if node.name not in RECORDED or self.lookup(node.name, frame) is not None:
            return self._called(node, frame)
        if node.name in STOPS:
            value = self._called(node, frame)
            self.stops.met(node, self._text(node), value, self._stopped_name(node))
            return value
        if node.name in CHOICES:
            with self.stops.choosing() as choice:
                value = self._called(node, frame, choice.met)
                fixed = choice.met[0][1] if len(choice.met) == 3 else None  # where(c, a, b)'s condition
                choice.untaken = {sp.true: 2, sp.false: 1}.get(fixed) if isinstance(fixed, sp.Basic) else None
                choice.met = [found for found, _ in choice.met]
            return value
        derivations = self.services.derivations
        count = len(derivations) if derivations is not None else 0
        with self.stops.collecting() as found:
            value = self._called(node, frame)
        if derivations is not None:  # none met is known too: a builtin's own stop is then no stop written
            written = tuple(self.stops.with_same_stops(found).values())
            derivations[count:] = [dataclasses.replace(r, written=as_in_formula(written, r.expr))
                                   if r.span == node.span else r for r in derivations[count:]]
        return value

    def _stopped_name(self, node) -> str:
        """The user's name a stop is written on in the statement (sg(x_fgsm)), else "" (a parameter's name
        inside a function body means another value at each call)."""
        whole = len(node.args) == 1 and isinstance(node.args[0], lo.Name) and not self._defining
        return node.args[0].name if whole else ""

    def _text(self, node) -> str:
        """The call as the user wrote it: in the statement, or in the body of the function being called."""
        if self._defining:
            return text_in(self._defining[-1], node.span)
        return self.services.source_text(node) or ""

    def _called(self, node, frame, met=None):
        keep = builtins_axes.keepdims_keyword(node)  # keepdims= of a reduction (section 3b): its axes put back
        if keep is not None:
            node = lo.Call(node.name, tuple(a for a in node.args if a is not keep), node.name_span, place=node.place)
        name, mark = node.name, len(self.unfolded)
        bound = self.lookup(name, frame)
        args = self._call_values(node, frame, name in builtins.READS_TEXT and bound is None, met)
        value = self._applied(node, frame, bound, args, mark)
        return value if keep is None else builtins_axes.kept_dims(value, self.evaluate(keep.value, frame), args, keep)

    def _applied(self, node, frame, bound, args: list, mark: int):
        """A call's value from its argument values: a user function's, or a builtin's (the tensor engine's
        where it takes the arguments whole)."""
        name = node.name
        if bound is None:
            builtins_axes.check_keywords(name, node.args)
            tensors.check_arguments(name, args, node.args)
        elif any(isinstance(a, lo.Keyword) for a in node.args):
            raise SyntaxError(f"'{name}' takes no keyword arguments", node.name_span)
        if isinstance(bound, FunctionDef):
            return self._call_user(bound, args, node)
        if bound is not None:
            raise NameError(f"'{name}' is a value, not a function", node.name_span)
        by_list, whole = None, any(engine.involves(a) for a in args)
        if whole:
            by_list = explaining.by_scalars(name, args)
            value, args = tensors.tensor_values.call(name, args, node.args)
            if value is not None and explaining.recorded(name, args):
                call = self._builtin_call(builtins.lookup(name), node, args, mark)
                call.services.record(name, call, *builtins.recorded_variables(call), value)
                if by_list is not None and self.services.derivations:  # grad(e, [a, b]): the formula and its symbols
                    explaining.recorded_whole(value, self.services.derivations, by_list)
            if value is not None:
                return value
        entry = builtins.lookup(name)
        if not whole and (value := tensors.numbers_whole(name, args, node.args)) is not None:
            return value  # norm([[3, 4], [6, 8]], axis=1), onehot([1, 0], 3): as of a declared tensor
        if entry is None:
            hint = spelling.did_you_mean(name, [*builtins.TABLE, *self._functions(frame)])
            raise NameError(f"unknown function '{name}'{hint}", node.name_span)
        call = self._builtin_call(entry, node, args, mark)
        if entry.name in builtins.ARITHMETIC:  # SymPy may rewrite these into a wider domain (expr/domain.py)
            value = kept(lambda *values: entry.function(dataclasses.replace(call, args=list(values))), args)
        elif by_list is not None and self.call_depth == 0 and self.services.derivations is not None:  # explain
            return explaining.recorded_whole(entry.function(call), self.services.derivations, by_list)
        else:
            value = entry.function(call)
        # sign(exp(W)) is 1 to SymPy: an elementwise function of a tensor keeps the tensor's shape (sum of it is q p)
        return fit(value, args) if whole else value

    def _call_values(self, node, frame, text: bool, met=None) -> list:
        """The argument values; a quoted text is kept as text only for a builtin that reads files (load), and
        grad's variables written as a list are read as variables (grad(L, [W, b]), core/tensor_lists.py).
        met, for a choice: (the stops met, the value) of each argument, in order."""
        if met is None:
            return [self._argument(node, frame, text, k, n) for k, n in enumerate(node.args)]
        for k, n in enumerate(node.args):
            with self.stops.collecting() as found:
                met.append((found, self._argument(node, frame, text, k, n)))
        return [value for _, value in met]

    def _argument(self, node, frame, text: bool, k: int, n):
        return (n.value if text and isinstance(n, lo.Text) else tensors.tensor_lists.variables(self, n, frame)
                if tensors.takes_list(node.name, k, n) else tensors.tensor_lists.entries(self, n, frame)
                if tensors.takes_entries(node.name, k, n) else self.evaluate(n, frame))

    def _keyword(self, node, frame):
        return self.evaluate(node.value, frame)  # axis=1 stands where it is written (builtins_axes)

    def _tuple(self, node, frame):
        """(0, 1), (m, n): axes or a shape, integers or sizes; an argument of a builtin only (section 3b)."""
        items = self._values(node.items, frame)
        if not all(isinstance(v, sp.Expr) and v.is_integer for v in items):
            raise ValueError("a tuple holds axes or sizes (whole numbers or size names), as (0, 1) or (b, t)")
        return sp.Tuple(*items)

    def _string(self, node, frame):
        raise ValueError('a quoted text is a file name, only an argument of load("…")')

    def _builtin_call(self, entry, node, args: list, mark: int) -> builtins.Call:
        """The record a builtin receives: its arguments, where it stands, and narrow services."""
        builtins.check_arity(entry, len(args))
        definitions = tuple(dict.fromkeys(d.source for d in self.unfolded[mark:]))
        services = self.services if self.call_depth == 0 else Services(
            self.notes, self.attachments, differentiated=self.differentiated, loaded=self.services.loaded,
            files=self.services.files)
        return builtins.Call(entry.name, args, list(node.args), node.span, services, definitions)

    def _call_user(self, definition: FunctionDef, args: list, node):
        if len(args) != len(definition.params):
            plural = "s" if len(definition.params) != 1 else ""
            raise NameError(
                f"{definition.name} takes {len(definition.params)} argument{plural}, got {len(args)}"
            )
        if self.call_depth >= limits.MAX_CALL_DEPTH:
            raise LimitError(
                f"calls nest more than {limits.MAX_CALL_DEPTH} deep (is '{definition.name}' recursive?)"
            )
        self.calls[0] += 1
        if self.calls[0] > limits.MAX_USER_CALLS:
            raise LimitError(f"this statement calls user functions more than {limits.MAX_USER_CALLS} times "
                             "(definitions that call the one before twice, f2(y) = f1(f1(y)), double them at each level)")
        self.call_depth += 1
        self.unfolded.append(definition)
        self._defining.append(definition)
        try:
            return self.evaluate(definition.body, dict(zip(definition.params, args)))
        finally:
            self.call_depth -= 1
            self._defining.pop()

    # --- at -------------------------------------------------------------

    def _at(self, node, frame):
        inner, bindings = node.body, node.bindings
        planned = None if frame else at_plan.run(self.env, node, self.notes)  # run again: a call (core/at_plan.py)
        if planned is not None:
            return planned
        listed = tensors.list_at(self, node, frame)  # grad(L, [W, b]) at …: each gradient at the point
        if listed is not None:
            return listed
        entry = self._point_taker(inner, frame)
        if entry is not None:
            mark = len(self.unfolded)
            args = [engine.lowered(v) for v in self._values(inner.args, frame)]  # it binds components
            call = self._builtin_call(entry, inner, args, mark)
            return entry.at(call, *self._bindings(bindings, frame))
        value = self.evaluate(inner, frame)
        if engine.involves(value) or tensors.binds_tensor(self, bindings, frame):
            return tensors.at.at(self, value, bindings, frame, inner, None if frame else node)  # one at (core/at.py)
        pairs, batch = self._bindings(bindings, frame)
        self._check_names(value, inner, bindings, frame)
        return substitute(value, pairs, batch, self.notes)

    def _point_taker(self, node, frame):
        """The builtin a call node names when it consumes the at point itself (its record's `at`), else None."""
        if not isinstance(node, lo.Call):
            return None
        name = node.name
        entry = builtins.lookup(name)
        if entry is None or entry.at is None or self.lookup(name, frame) is not None:
            return None
        return entry

    def _check_names(self, value, inner, bindings, frame) -> None:
        """Warn about an `at` that binds a name twice or one the expression lacks."""
        names = [binding.target.name for binding in bindings]
        self._noted(spelling.repeated_binding_note(names), None)
        if not spelling.missing_names(value, names):
            return  # every name occurs: the context of why one might be missing is not built
        context = spelling.AtContext(known=frozenset([*self.env, *frame]) | self.seen, written=written_names(inner),
                                     differentiated=tuple(self.differentiated))
        for note in spelling.unused_binding_notes(value, list(dict.fromkeys(names)), context):
            self._noted(note, None)

    def _bindings(self, bindings, frame) -> tuple[list, list]:
        """(symbol, value) pairs and (symbol, array) batches of an at-clause."""
        pairs, batch = [], []
        for binding in bindings:
            given = self.evaluate(binding.value, frame)
            try:
                self._bind_target(binding.target, given, frame, pairs, batch)
            except GradlangError as error:
                raise error.located(binding.span)
        return pairs, batch

    def _bind_target(self, target, given, frame, pairs, batch):
        name = target.name
        bound = self.lookup(name, frame)
        if bound is None and name in builtins.CONSTANTS:
            raise ValueError(f"'{name}' is a constant, not a symbol, so there is nothing to substitute")
        if bound is None:
            bound = symbol(name)
        bound = engine.lowered(bound)  # x: R^3 is given numbers as x[0], x[1], x[2]
        if isinstance(bound, FunctionDef):
            raise ValueError(f"'{name}' is a function; give values to symbols")
        if target.indices:
            bound = _component(bound, name, [_target_index(t) for t in target.indices])
        if not all(isinstance(e, sp.Symbol) for e in elements(to_symbolic(bound))):
            raise ValueError(f"'{name}' is bound to a value, not a symbol, so there is nothing to substitute")
        _pair_up(bound, given, name, pairs, batch)

# --- helpers ------------------------------------------------------------------


_SHAPED = frozenset({"sum", "product", "power", "neg", "compare", "brackets"})  # checked when tensors take part
