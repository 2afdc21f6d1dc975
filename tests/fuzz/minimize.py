"""Delta debugging over statements: the smallest program that still fails the same way."""
from __future__ import annotations

from typing import Callable

from .program import Program, Stmt


def _blocks(program: Program) -> list[list[Stmt]]:
    """Every statement list in the program, outer ones first (``f``'s body before the prelude)."""
    found, queue = [], list(program.top_blocks())
    while queue:
        block = queue.pop(0)
        found.append(block)
        for stmt in block:
            queue.extend(stmt.blocks())
    return found


class Minimizer:
    """Removes statements (chunks, then single ones) and unwraps compound statements while
    ``fails(source)`` stays true; at most ``budget`` candidate programs are tried."""

    def __init__(self, program: Program, fails: Callable[[str], bool], budget: int = 600):
        self.program = program.copy()
        self.fails = fails
        self.budget = budget
        self.tried = 0

    def attempt(self, block: list[Stmt], replacement: list[Stmt]) -> bool:
        """Put ``replacement`` in ``block``'s place; keep it if the program still fails."""
        if self.tried >= self.budget:
            return False
        self.tried += 1
        saved = block[:]
        block[:] = replacement
        if self.fails(self.program.source()):
            return True
        block[:] = saved
        return False

    def remove_chunks(self, block: list[Stmt]) -> bool:
        progress = False
        chunk = max(1, len(block) // 2)
        while chunk >= 1:
            i = 0
            while i < len(block):
                part = block[i:i + chunk]
                kept = [s for s in part if s.fixed]
                if len(kept) < len(part) and self.attempt(block, block[:i] + kept + block[i + chunk:]):
                    progress = True
                    i += len(kept)
                else:
                    i += chunk
            chunk //= 2
        return progress

    def unwrap(self, block: list[Stmt]) -> bool:
        """Replace a compound statement by one of its blocks (``if c: A else: B`` -> ``A``)."""
        progress = False
        i = 0
        while i < len(block):
            stmt = block[i]
            if not stmt.fixed:
                for inner in stmt.blocks():
                    if self.attempt(block, block[:i] + inner + block[i + 1:]):
                        progress = True
                        break
            i += 1
        return progress

    def run(self) -> Program:
        progress = True
        while progress and self.tried < self.budget:
            progress = False
            for block in _blocks(self.program):
                progress |= self.remove_chunks(block)
            for block in _blocks(self.program):
                progress |= self.unwrap(block)
        return self.program


def minimize(program: Program, fails: Callable[[str], bool], budget: int = 600) -> Program:
    """The smallest program found whose source still satisfies ``fails``."""
    return Minimizer(program, fails, budget).run()
