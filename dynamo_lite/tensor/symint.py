"""SymInt and SymBool: Python ints and bools whose value is an expression over size symbols.

A SymInt stands where a size would be (``TensorMeta`` sizes and strides, ``x.shape[0]``
in traced user code). Arithmetic gives new SymInts (or a plain int when the symbols
cancel); comparisons give SymBools, and asking a SymBool for its truth (``if``, ``and``,
``max``) asks the ShapeEnv, which decides from ranges or records a guard (see NOTE:
[shape guards] in shape_env.py). ``int()``/``operator.index`` specialize the size.

Example:
    >>> env = ShapeEnv()
    >>> n = env.create_symbol(6, source="x.size(0)")
    >>> n * 2 - 1, (n * 2) // 2
    (2*s0 - 1, s0)
"""
from __future__ import annotations

import operator

from .relation import Relation
from .sym_expr import Expr, as_expr


class SymInt:
    """An integer-valued expression over size symbols, bound to the ShapeEnv that made them."""

    __slots__ = ("expr", "env")

    def __init__(self, expr: Expr, env):
        self.expr, self.env = expr, env

    @property
    def hint(self) -> int:
        """The value for the example inputs (no guard recorded)."""
        return self.env.hint(self.expr)

    def _wrap(self, expr: Expr):
        expr = self.env.simplify(expr)
        return expr.constant_value if expr.is_constant else SymInt(expr, self.env)

    def _other(self, other):
        if isinstance(other, bool) or not isinstance(other, (int, SymInt)):
            return None
        return as_expr(other)

    # -- arithmetic (NotImplemented for floats etc.: Python then tries the other side) ---
    def __add__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(self.expr + o)

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(self.expr - o)

    def __rsub__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(o - self.expr)

    def __mul__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(self.expr * o)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __floordiv__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(self.expr // self.env.simplify(o))

    def __rfloordiv__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(o // self.env.simplify(self.expr))

    def __mod__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(self.expr % self.env.simplify(o))

    def __rmod__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else self._wrap(o % self.env.simplify(self.expr))

    def __neg__(self):
        return self._wrap(-self.expr)

    def __pos__(self):
        return self

    def __abs__(self):
        return self if self >= 0 else -self

    def __pow__(self, exponent):
        if isinstance(exponent, int) and not isinstance(exponent, bool) and exponent >= 0:
            result = Expr.constant(1)
            for _ in range(exponent):
                result = result * self.expr
            return self._wrap(result)
        return int(self) ** exponent

    def __truediv__(self, other):
        return int(self) / other

    def __rtruediv__(self, other):
        return other / int(self)

    # -- comparisons ----------------------------------------------------------------------
    def _compare(self, op: str, other):
        o = self._other(other)
        if o is None:
            return NotImplemented
        return SymBool(Relation(op, self.expr, o), self.env)

    def __eq__(self, other):
        return self._compare("==", other)

    def __ne__(self, other):
        return self._compare("!=", other)

    def __lt__(self, other):
        return self._compare("<", other)

    def __le__(self, other):
        return self._compare("<=", other)

    def __gt__(self, other):
        return self._compare(">", other)

    def __ge__(self, other):
        return self._compare(">=", other)

    def __hash__(self) -> int:
        return hash(self.env.simplify(self.expr))

    # -- conversions: each one makes the size a constant -----------------------------------
    def __bool__(self) -> bool:
        return self.env.decide(Relation("!=", self.expr, Expr.constant(0)))

    def __index__(self) -> int:
        return self.env.specialize(self.expr)

    __int__ = __index__

    def __float__(self) -> float:
        return float(self.__index__())

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __round__ = __trunc__

    def __repr__(self) -> str:
        return str(self.env.simplify(self.expr))

    # Text made from a size is what the program sees: the concrete value (specialized).
    def __str__(self) -> str:
        return str(int(self))

    def __format__(self, spec: str) -> str:
        return format(int(self), spec)


class SymBool:
    """A comparison of symbolic sizes; its truth is decided (and guarded) by the ShapeEnv."""

    __slots__ = ("relation", "env")

    def __init__(self, relation: Relation, env):
        self.relation, self.env = relation, env

    def __bool__(self) -> bool:
        return self.env.decide(self.relation)

    def __invert__(self):
        return SymBool(self.relation.negated(), self.env)

    def __repr__(self) -> str:
        return str(self.relation)


def is_symbolic(value) -> bool:
    return isinstance(value, SymInt)


def has_symbols(values) -> bool:
    """True when any element of a size or stride tuple is symbolic."""
    for v in values:
        if type(v) is SymInt:
            return True
    return False


def same_values(a, b) -> bool:
    """Whether two size or stride sequences are equal for every value of their symbols.

    NOTE: [guard-free fast paths] Decided on the expressions alone, so it never records
    a guard: sizes that happen to be equal for the example inputs but are different
    expressions count as different. For the checks that only choose a fast path (the
    same shape everywhere? the same layout?) whose general path gives the same answer,
    and for optional rewrites: a guard there would only cause recompiles (``s1 != s0``
    when a batch size first equals a sequence length).
    """
    if a is b:
        return True
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is SymInt or type(y) is SymInt:
            if type(x) is not type(y) or not x.env.simplify(x.expr) == y.env.simplify(y.expr):
                return False
        elif x != y:
            return False
    return True


def hint_of(value) -> int:
    """The example value of an int or a SymInt (no guard recorded)."""
    return value.hint if type(value) is SymInt else value


def sym_size(tensor, dim: int) -> int:
    """``tensor.size(dim)``: how graphs read a symbolic size from an input at run time."""
    return tensor._sizes[dim]


#: The functions graphs compute sizes with (all on plain ints at run time); backends
#: evaluate nodes calling them as Python ints.
SIZE_FUNCTIONS = frozenset({sym_size, operator.add, operator.mul, operator.floordiv, operator.mod})
