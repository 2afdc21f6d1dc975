"""ShapeEnv: the size symbols of one trace, their example values, and the facts tracing relied on.

NOTE: [shape guards] Each symbol has a *hint* (the size the example input had) and a
range (``>= 2``: sizes 0 and 1 are never symbolic, they are specialized as constants
because so much code treats them specially). When a meta rule or user code needs a
concrete answer about a symbolic size (``if x.shape[0] > 4``, a reshape that must divide),
``decide`` first tries the ranges (``s0 != 1`` holds for every s0 >= 2: nothing is
recorded); otherwise it answers with the hints and records the relation that held
(``s0 > 4``, or ``s0 <= 4``) as a guard, so the compiled code is only reused for sizes
that give the same answer. An equality between a symbol and an expression
(``s1 == s0``) also becomes a replacement, so later expressions simplify with it.
``specialize`` (what ``int(s0)`` does) records ``s0 == hint``.

Example:
    >>> env = ShapeEnv()
    >>> n = env.create_symbol(8, source="x.size(0)")
    >>> bool(n % 2 == 0), [str(g) for g in env.guards]
    (True, ['s0 >= 2', 's0 % 2 == 0'])
"""
from __future__ import annotations

from .relation import COMPARE, MIRROR, NEGATE, Relation
from .sym_expr import INF, Expr, Mod, Symbol, as_expr

def _decide_from_bounds(op: str, lo, hi):
    """True/False when every value in [lo, hi] of ``lhs - rhs`` gives the same answer."""
    if COMPARE[op](lo) and COMPARE[op](hi) and (op != "==" or lo == hi) and (op != "!=" or lo > 0 or hi < 0):
        return True
    negated = NEGATE[op]
    if COMPARE[negated](lo) and COMPARE[negated](hi) and (negated != "==" or lo == hi) and (
            negated != "!=" or lo > 0 or hi < 0):
        return False
    return None


class ShapeEnv:
    """Symbols, hints, ranges, replacements and recorded guards of one trace.

    Attributes:
        hints: Symbol -> the example value it had while tracing.
        sources: Symbol -> whatever the creator passed as ``source`` (a description).
        guards: the relations tracing relied on, in the order they were recorded.
    """

    MIN_SIZE = 2  # 0 and 1 are specialized (see NOTE: [shape guards])

    def __init__(self):
        self.hints: dict = {}
        self.sources: dict = {}
        self.ranges: dict = {}
        self.replacements: dict = {}
        self.guards: list = []
        self._guard_keys: set = set()
        self._by_source: dict = {}
        # ``observer(event, detail)`` hears of each symbol made ("create") and each size fixed to
        # a value ("specialize"): the frontend's ``dynamic`` log (None: nobody listens).
        self.observer = None

    # -- symbols ------------------------------------------------------------------------
    def create_symbol(self, hint: int, source=None, *, reuse: bool = True):
        """A SymInt for a size of example value ``hint`` (>= 2), read from ``source``.

        The same ``source`` asked twice gives the same symbol (``reuse``).
        """
        from .symint import SymInt

        if hint < self.MIN_SIZE:
            raise ValueError(f"sizes below {self.MIN_SIZE} are specialized, not symbolic (got {hint})")
        key = repr(source)
        if reuse and source is not None and key in self._by_source:
            return SymInt(Expr.symbol(self._by_source[key]), self)
        symbol = Symbol(f"s{len(self.hints)}")
        self.hints[symbol] = hint
        self.sources[symbol] = source
        self.ranges[symbol] = (self.MIN_SIZE, INF)
        if source is not None:
            self._by_source[key] = symbol
        self._record(Relation(">=", Expr.symbol(symbol), Expr.constant(self.MIN_SIZE)))
        if self.observer is not None:
            self.observer("create", f"{symbol.name} = {source} (example {hint})")
        return SymInt(Expr.symbol(symbol), self)

    @property
    def symbols(self) -> list:
        return list(self.hints)

    def simplify(self, expr: Expr) -> Expr:
        return expr.substitute(self.replacements)

    def hint(self, value) -> int:
        """The example value of an int, Expr or SymInt."""
        return as_expr(value).evaluate(self.hints)

    # -- questions ----------------------------------------------------------------------
    def decide(self, relation: Relation) -> bool:
        """The answer for the example sizes; a guard is recorded unless ranges decide it."""
        diff = self.simplify(relation.lhs - relation.rhs)
        if diff.is_constant:
            return COMPARE[relation.op](diff.constant_value)
        known = _decide_from_bounds(relation.op, *self._bounds(diff))
        if known is not None:
            return known
        value = COMPARE[relation.op](diff.evaluate(self.hints))
        self._record(relation if value else relation.negated())
        return value

    def _bounds(self, diff: Expr) -> tuple:
        """An interval holding ``diff``'s sign: ``diff`` with positive symbol factors common
        to every term divided out (``s1 - s0*s1`` has the sign of ``1 - s0``), which interval
        arithmetic alone cannot see."""
        common = None
        for monomial, _ in diff.terms:
            symbols = {a for a in monomial if isinstance(a, Symbol) and self.ranges[a][0] >= 1}
            common = symbols if common is None else common & symbols
        for symbol in common or ():
            reduced = diff.exact_quotient(Expr.symbol(symbol))
            if reduced is not None:
                return self._bounds(reduced)
        return diff.bounds(self.ranges)

    def specialize(self, value) -> int:
        """The example value of ``value``, guarded to stay that value (``int(s0)``)."""
        expr = as_expr(value)
        hint = expr.evaluate(self.hints)
        self.decide(Relation("==", expr, Expr.constant(hint)))
        return hint

    def is_known_divisible(self, value, divisor: int) -> bool:
        """True when ``value % divisor == 0`` holds for every size (no guard needed)."""
        rem = self.simplify(as_expr(value)) % divisor
        return rem.is_constant and rem.constant_value == 0

    # -- recording ----------------------------------------------------------------------
    def _record(self, relation: Relation) -> None:
        key = (relation.op, self.simplify(relation.lhs - relation.rhs))
        if key in self._guard_keys:
            return
        self._guard_keys.add(key)
        self.guards.append(relation)
        self._learn(relation.op, key[1])
        if self.observer is not None and relation.op == "==":
            fixed = [f"{s.name} == {r}" for s, r in self.replacements.items() if r.is_constant and s in key[1].symbols()]
            if fixed:
                self.observer("specialize", f"{', '.join(fixed)} (the code relied on {relation})")

    def _learn(self, op: str, diff: Expr) -> None:
        """Narrow a symbol's range or add a replacement from a relation that holds."""
        candidates = _linear_symbols(diff)
        if op == "==":
            for symbol, coeff, rest in candidates:  # newest symbol first
                value = -rest if coeff == 1 else rest
                if value.is_constant or _newer(symbol, value):
                    self.replacements[symbol] = value
                    for sym, repl in list(self.replacements.items()):
                        self.replacements[sym] = repl.substitute({symbol: value})
                    return
            return
        if len(candidates) != 1:
            return
        symbol, coeff, rest = candidates[0]  # diff == coeff*symbol + rest, coeff is +-1
        if not rest.is_constant or op == "!=":
            return
        # coeff*s + c OP 0: a bound on s
        c = rest.constant_value
        lo, hi = self.ranges[symbol]
        flipped = op if coeff == 1 else MIRROR[op]
        bound = -c if coeff == 1 else c
        if flipped == ">":
            lo = max(lo, bound + 1)
        elif flipped == ">=":
            lo = max(lo, bound)
        elif flipped == "<":
            hi = min(hi, bound - 1)
        elif flipped == "<=":
            hi = min(hi, bound)
        self.ranges[symbol] = (lo, hi)

    def describe(self) -> list:
        """``["s0 = x.size(1)", ...]``: each symbol with its source and example value."""
        return [f"{s.name} = {self.sources[s]} (example {self.hints[s]})" for s in self.hints]


def _linear_symbols(diff: Expr) -> list:
    """Every ``(symbol, +-1, rest)`` with ``diff == +-symbol + rest`` (symbol not in rest),
    newest symbol first."""
    found = []
    for monomial, coeff in diff.terms:
        if len(monomial) == 1 and isinstance(monomial[0], Symbol) and coeff in (1, -1):
            symbol = monomial[0]
            rest = diff - Expr.symbol(symbol) * coeff
            if symbol not in rest.symbols():
                found.append((symbol, coeff, rest))
    return sorted(found, key=lambda item: item[0].sort_key(), reverse=True)


def _newer(symbol: Symbol, value: Expr) -> bool:
    """Replace the newest symbol by older ones, so replacements never form a cycle."""
    return all(s.sort_key() < symbol.sort_key() for s in value.symbols()) and not any(
        isinstance(a, Mod) for m, _ in value.terms for a in m)
