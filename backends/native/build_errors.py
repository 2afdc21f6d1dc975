"""The error every failed native build raises: no compiler, a compiler error, a timeout, an unusable cache."""
from __future__ import annotations


class BuildError(RuntimeError):
    """No C compiler, or the compiler rejected a kernel (the message says which)."""
