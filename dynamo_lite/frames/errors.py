"""Typed errors of the compiler: Unsupported (a construct it cannot capture) and CompileError."""
from __future__ import annotations


class Unsupported(Exception):
    """A construct the translator cannot capture.

    Raised to the user only with ``fullgraph=True``; otherwise it becomes a graph break
    or an eager fallback, and its reason is recorded in ``dl.stats()`` and ``dl.explain``.

    Attributes:
        reason: what could not be captured, in words.
        filename, lineno: the user's source location (None when unknown).
        hint: what the user can do about it, or "".
    """

    def __init__(self, reason: str, filename: str | None = None, lineno: int | None = None, hint: str = ""):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        self.hint = hint
        self.user_stack: list = []  # (filename, lineno, function) of the inlining callers
        super().__init__(reason)

    def located(self, filename: str | None, lineno: int | None) -> "Unsupported":
        """Fill in the source location if it is still unknown; returns self."""
        if self.filename is None:
            self.filename, self.lineno = filename, lineno
        return self

    def __str__(self) -> str:
        where = f" at {self.filename}:{self.lineno}" if self.filename else ""
        hint = f"\n  hint: {self.hint}" if self.hint else ""
        return f"{self.reason}{where}{hint}"


class CompileError(Exception):
    """The compiler itself failed (a bug or a backend error), not the user's program."""


class UserError(Unsupported):
    """The traced program raises ``exception`` at this point, as the eager run would.

    Inside a ``try`` block the translator hands it to the handler; elsewhere the
    transformed code runs the graph so far, replays the side effects, then raises it.
    """

    def __init__(self, exception: BaseException, reason: str | None = None):
        super().__init__(reason or f"raises {type(exception).__name__}: {exception}")
        self.exception = exception
        self.user_error = True
