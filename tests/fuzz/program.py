"""A generated program as a tree of statements, so the minimizer can remove them one by one."""
from __future__ import annotations

from dataclasses import dataclass, field

INDENT = "    "


@dataclass
class Stmt:
    """One statement: a line (``text``) or a compound statement (``text`` is its header).

    A compound statement has a ``body`` and optional further ``clauses`` (``else:``,
    ``except ...:``, ``finally:``), each a (header, body) pair. ``fixed`` statements are
    never removed by the minimizer (their bodies still are).
    """

    text: str
    body: list[Stmt] | None = None
    clauses: list[tuple[str, list[Stmt]]] = field(default_factory=list)
    fixed: bool = False

    def render(self, depth: int) -> list[str]:
        pad = INDENT * depth
        lines = [pad + line for line in self.text.split("\n")]
        if self.body is None:
            return lines
        lines += render_block(self.body, depth + 1)
        for header, block in self.clauses:
            lines.append(pad + header)
            lines += render_block(block, depth + 1)
        return lines

    def blocks(self) -> list[list[Stmt]]:
        """The statement lists nested directly in this one."""
        if self.body is None:
            return []
        return [self.body] + [block for _, block in self.clauses]

    def copy(self) -> Stmt:
        return Stmt(
            self.text,
            None if self.body is None else [s.copy() for s in self.body],
            [(h, [s.copy() for s in b]) for h, b in self.clauses],
            self.fixed,
        )


def render_block(block: list[Stmt], depth: int) -> list[str]:
    """A block's lines; an empty block renders as ``pass``."""
    lines = [line for stmt in block for line in stmt.render(depth)]
    return lines or [INDENT * depth + "pass"]


@dataclass
class Program:
    """A module: ``prelude`` statements, then ``def f(<params>): <body>``, then the inputs.

    ``f`` is the compiled function. ``inputs`` is the source of ``make_inputs(k)``, which
    returns fresh arguments for call ``k`` (fixed: never minimized).
    """

    seed: int
    prelude: list[Stmt]
    params: list[str]
    body: list[Stmt]
    inputs: str

    def source(self) -> str:
        lines = ["import numpy as np", "import dynamo_lite as dl", ""]
        lines += render_block(self.prelude, 0) if self.prelude else []
        lines += ["", f"def f({', '.join(self.params)}):"] + render_block(self.body, 1)
        lines += ["", self.inputs.rstrip(), ""]
        return "\n".join(lines)

    def copy(self) -> Program:
        return Program(self.seed, [s.copy() for s in self.prelude], list(self.params),
                       [s.copy() for s in self.body], self.inputs)

    def top_blocks(self) -> list[list[Stmt]]:
        return [self.body, self.prelude]

    def size(self) -> int:
        """Number of statements (the minimizer's measure)."""
        count, stack = 0, [*self.prelude, *self.body]
        while stack:
            stmt = stack.pop()
            count += 1
            for block in stmt.blocks():
                stack.extend(block)
        return count
