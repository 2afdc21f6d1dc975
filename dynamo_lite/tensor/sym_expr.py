"""Integer expressions over size symbols, kept in one normal form: a polynomial of atoms.

NOTE: [symbolic expression normal form] An ``Expr`` is a sum of monomials with integer
coefficients; a monomial is a sorted tuple of *atoms*: a ``Symbol`` (``s0``) or an opaque
``FloorDiv`` / ``Mod`` of two expressions that could not be simplified away. Two
expressions that are equal as polynomials have the same terms, so ``s0*64 == 64*s0`` and
``(s0 + 1) - 1 == s0`` are decided by comparing terms, without a solver. Floor division
by a constant ``c`` splits every coefficient as ``c*q + r`` and keeps only the remainder
part opaque (``(2*s0 + 3)//2`` is ``s0 + 1``). Symbols stand for integers, which is what
makes these rewrites exact. ``bounds`` gives an interval for an expression from the
symbols' ranges, which decides most comparisons meta rules ask (``s0 != 1`` when s0 >= 2)
without recording a guard.

Example:
    >>> s0 = Expr.symbol(Symbol("s0"))
    >>> str((s0 * 64 + 64) // 64 - 1)
    's0'
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Mapping

INF = math.inf


class Atom:
    """A factor of a monomial; subclasses are Symbol, FloorDiv and Mod."""

    __slots__ = ("_key",)

    def sort_key(self) -> str:
        return self._key

    def __lt__(self, other) -> bool:
        return self._key < other._key


class Symbol(Atom):
    """A size that is only known at run time (``s0``)."""

    __slots__ = ("name", "_hash")

    def __init__(self, name: str):
        self.name = name
        self._hash = hash(name)
        self._key = f"0{int(name[1:]):08d}" if name[1:].isdigit() else f"0{name}"

    def __eq__(self, other) -> bool:
        return self is other or (isinstance(other, Symbol) and other.name == self.name)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return self.name

    def code(self, name_of) -> str:
        return name_of(self)

    def evaluate(self, values: Mapping) -> int:
        return values[self]

    def substitute(self, mapping: Mapping) -> "Expr":
        replacement = mapping.get(self)
        return replacement if replacement is not None else Expr.symbol(self)

    def symbols(self) -> set:
        return {self}

    def bounds(self, ranges: Mapping) -> tuple:
        return ranges.get(self, (-INF, INF))


class _Division(Atom):
    """An opaque ``num OP den`` (floor division or modulo) that did not simplify."""

    __slots__ = ("num", "den")
    SYMBOL = ""

    def __init__(self, num: "Expr", den: "Expr"):
        self.num, self.den = num, den
        self._key = f"1{self.code(lambda s: s.name)}"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.num == self.num and other.den == self.den

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.num, self.den))

    def code(self, name_of) -> str:
        num, den = self.num.code(name_of), self.den.code(name_of)
        num = num if self.num.as_symbol() or self.num.is_constant else f"({num})"
        den = den if self.den.as_symbol() or self.den.is_constant else f"({den})"
        return f"{num}{self.SYMBOL}{den}"

    def symbols(self) -> set:
        return self.num.symbols() | self.den.symbols()


class FloorDiv(_Division):
    SYMBOL = "//"

    def evaluate(self, values: Mapping) -> int:
        return self.num.evaluate(values) // self.den.evaluate(values)

    def substitute(self, mapping: Mapping) -> "Expr":
        return self.num.substitute(mapping) // self.den.substitute(mapping)

    def bounds(self, ranges: Mapping) -> tuple:
        lo, hi = self.num.bounds(ranges)
        dlo, dhi = self.den.bounds(ranges)
        if dlo >= 1 and lo >= 0:  # a non-negative numerator over a positive divisor
            return (lo // dhi if dhi != INF else 0, hi // dlo if hi != INF else INF)
        return (-INF, INF)


class Mod(_Division):
    SYMBOL = " % "

    def evaluate(self, values: Mapping) -> int:
        return self.num.evaluate(values) % self.den.evaluate(values)

    def substitute(self, mapping: Mapping) -> "Expr":
        return self.num.substitute(mapping) % self.den.substitute(mapping)

    def bounds(self, ranges: Mapping) -> tuple:
        dlo, dhi = self.den.bounds(ranges)
        lo, hi = self.num.bounds(ranges)
        if dlo >= 1:
            return (0, min(dhi - 1, hi) if lo >= 0 else dhi - 1)
        return (-INF, INF)


class Expr:
    """An integer polynomial over atoms (see NOTE: [symbolic expression normal form]).

    Attributes:
        terms: ``((monomial, coefficient), ...)`` sorted by monomial, no zero coefficient;
            the constant term has the empty monomial ``()``.
    """

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: dict):
        items = [(m, c) for m, c in terms.items() if c]
        if len(items) > 1:
            items.sort(key=_monomial_key)
        self.terms = tuple(items)
        self._hash = hash(self.terms)

    @staticmethod
    def constant(value: int) -> "Expr":
        return Expr({(): value})

    @staticmethod
    def symbol(symbol: Atom) -> "Expr":
        return Expr({(symbol,): 1})

    # -- inspection ---------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        return not self.terms or (len(self.terms) == 1 and self.terms[0][0] == ())

    @property
    def constant_value(self) -> int:
        """The constant term (the whole value when ``is_constant``)."""
        for monomial, coeff in self.terms:
            if monomial == ():
                return coeff
        return 0

    def symbols(self) -> set:
        found: set = set()
        for monomial, _ in self.terms:
            for atom in monomial:
                found |= atom.symbols()
        return found

    def as_symbol(self):
        """The Symbol when this expression is exactly one symbol, else None."""
        if len(self.terms) == 1:
            monomial, coeff = self.terms[0]
            if coeff == 1 and len(monomial) == 1 and isinstance(monomial[0], Symbol):
                return monomial[0]
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, Expr) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, other) -> "Expr":
        other = as_expr(other)
        terms = dict(self.terms)
        for m, c in other.terms:
            terms[m] = terms.get(m, 0) + c
        return Expr(terms)

    __radd__ = __add__

    def __neg__(self) -> "Expr":
        return Expr({m: -c for m, c in self.terms})

    def __sub__(self, other) -> "Expr":
        return self + (-as_expr(other))

    def __rsub__(self, other) -> "Expr":
        return as_expr(other) - self

    def __mul__(self, other) -> "Expr":
        other = as_expr(other)
        terms: dict = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2, key=_ATOM_KEY)) if m1 and m2 else m1 or m2
                terms[m] = terms.get(m, 0) + c1 * c2
        return Expr(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other) -> "Expr":
        den = as_expr(other)
        if den.is_constant:
            c = den.constant_value
            quotient, remainder = self._split(c)
            if not remainder.terms:
                return quotient
            if remainder.is_constant:
                return quotient + remainder.constant_value // c
            return quotient + Expr.symbol(FloorDiv(remainder, den))
        exact = self.exact_quotient(den)
        return exact if exact is not None else Expr.symbol(FloorDiv(self, den))

    def __rfloordiv__(self, other) -> "Expr":
        return as_expr(other) // self

    def __mod__(self, other) -> "Expr":
        den = as_expr(other)
        if den.is_constant:
            c = den.constant_value
            _, remainder = self._split(c)
            if remainder.is_constant:
                return Expr.constant(remainder.constant_value % c)
            return Expr.symbol(Mod(remainder, den))
        if self.exact_quotient(den) is not None:
            return Expr.constant(0)
        return Expr.symbol(Mod(self, den))

    def __rmod__(self, other) -> "Expr":
        return as_expr(other) % self

    def _split(self, c: int) -> tuple:
        """``self == c*quotient + remainder`` with every remainder coefficient in [0, c)."""
        if c == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        quotient, remainder = {}, {}
        for m, coeff in self.terms:
            q, r = divmod(coeff, c)
            quotient[m], remainder[m] = q, r
        return Expr(quotient), Expr(remainder)

    def exact_quotient(self, den: "Expr"):
        """``self / den`` when den is one monomial dividing every term exactly, else None."""
        if len(den.terms) != 1:
            return None
        (dm, dc), = den.terms
        terms = {}
        for m, c in self.terms:
            rest = list(m)
            for atom in dm:
                if atom not in rest:
                    return None
                rest.remove(atom)
            if dc == 0 or c % dc:
                return None
            terms[tuple(rest)] = c // dc
        return Expr(terms)

    # -- evaluation ---------------------------------------------------------------------
    def evaluate(self, values: Mapping) -> int:
        """The value with every symbol given in ``values`` (Symbol -> int)."""
        total = 0
        for monomial, coeff in self.terms:
            product = coeff
            for atom in monomial:
                product *= atom.evaluate(values)
            total += product
        return total

    def substitute(self, mapping: Mapping) -> "Expr":
        """Replace symbols by expressions (Symbol -> Expr) and renormalize."""
        if not mapping or not (self.symbols() & mapping.keys()):
            return self
        total = Expr({})
        for monomial, coeff in self.terms:
            product = Expr.constant(coeff)
            for atom in monomial:
                product = product * atom.substitute(mapping)
            total = total + product
        return total

    def bounds(self, ranges: Mapping) -> tuple:
        """An interval ``(lo, hi)`` holding every value, from the symbols' ranges."""
        lo = hi = 0
        for monomial, coeff in self.terms:
            mlo = mhi = coeff
            for atom in monomial:
                mlo, mhi = _interval_product((mlo, mhi), atom.bounds(ranges))
            lo, hi = lo + mlo, hi + mhi
        return lo, hi

    # -- text ---------------------------------------------------------------------------
    def code(self, name_of=lambda s: s.name) -> str:
        """Python source of the expression, each symbol written as ``name_of(symbol)``."""
        if not self.terms:
            return "0"
        parts = []
        for monomial, coeff in sorted(self.terms, key=lambda t: t[0] == ()):  # constant last
            alone = len(monomial) == 1 and (coeff == 1 or (coeff == -1 and bool(parts)))  # "-s0//3" is (-s0)//3
            # A division inside a product needs parentheses: 2*(s0//2) is not 2*s0//2.
            factors = [atom.code(name_of) if alone or isinstance(atom, Symbol) else f"({atom.code(name_of)})"
                       for atom in monomial]
            if not factors:
                text = str(abs(coeff))
            elif abs(coeff) != 1:
                text = "*".join([str(abs(coeff))] + factors)
            else:
                text = "*".join(factors)
            sign = "-" if coeff < 0 else "+"
            parts.append(f"-{text}" if not parts and sign == "-" else text if not parts else f" {sign} {text}")
        return "".join(parts)

    def __str__(self) -> str:
        return self.code()

    def __repr__(self) -> str:
        return f"Expr({self.code()})"


def as_expr(value) -> Expr:
    """An Expr for an int, an Expr, or anything with an ``expr`` attribute (a SymInt)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, int):
        return _constant(int(value))
    expr = getattr(value, "expr", None)
    if isinstance(expr, Expr):
        return expr
    raise TypeError(f"expected an integer or a symbolic size, got {type(value).__name__}")


_ATOM_KEY = operator.attrgetter("_key")


def _monomial_key(term) -> tuple:
    return _monomial_order(term[0])


@functools.lru_cache(maxsize=4096)
def _monomial_order(monomial: tuple) -> tuple:
    return (len(monomial) == 0, tuple(a._key for a in monomial))


def _interval_product(a: tuple, b: tuple) -> tuple:
    products = [_mul(x, y) for x in a for y in b]
    return min(products), max(products)


def _mul(x, y):
    if x == 0 or y == 0:  # 0 * inf is 0 here: a zero coefficient or size contributes nothing
        return 0
    return x * y


@functools.lru_cache(maxsize=1024)
def _constant(value: int) -> Expr:
    return Expr.constant(value)
