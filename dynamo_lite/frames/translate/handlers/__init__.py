"""Opcode handlers: one function per CPython opcode name, collected in HANDLERS."""
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


def load_all() -> dict:
    from . import calls, containers, control_flow, exceptions, loads_stores, operators  # noqa: F401 (registration)

    return HANDLERS
