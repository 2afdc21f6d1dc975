"""The opcode table: ``@handles("LOAD_FAST")`` registers a handler in HANDLERS."""
from __future__ import annotations

HANDLERS: dict = {}


def handles(*opnames):
    """Register the decorated function as the handler of the named opcodes."""

    def register(fn):
        for name in opnames:
            if name in HANDLERS:
                raise ValueError(f"two handlers for {name}")
            HANDLERS[name] = fn
        return fn

    return register
