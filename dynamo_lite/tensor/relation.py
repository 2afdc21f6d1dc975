"""Relation: ``lhs OP rhs`` over integer expressions (a shape guard, or a question about sizes)."""
from __future__ import annotations

from dataclasses import dataclass

from .sym_expr import Expr

# Relations are kept as ``lhs OP rhs``; decided on ``lhs - rhs``.
COMPARE = {
    "==": lambda d: d == 0, "!=": lambda d: d != 0, "<": lambda d: d < 0,
    "<=": lambda d: d <= 0, ">": lambda d: d > 0, ">=": lambda d: d >= 0,
}
NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
MIRROR = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True)
class Relation:
    """``lhs OP rhs`` over integer expressions, as a guard or a question."""

    op: str
    lhs: Expr
    rhs: Expr

    def negated(self) -> "Relation":
        return Relation(NEGATE[self.op], self.lhs, self.rhs)

    def holds(self, values) -> bool:
        return COMPARE[self.op](self.lhs.evaluate(values) - self.rhs.evaluate(values))

    def code(self, name_of=lambda s: s.name) -> str:
        return f"{self.lhs.code(name_of)} {self.op} {self.rhs.code(name_of)}"

    def symbols(self) -> set:
        return self.lhs.symbols() | self.rhs.symbols()

    def __str__(self) -> str:
        return self.code()
