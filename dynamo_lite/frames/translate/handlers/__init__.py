"""Opcode handlers: one function per CPython opcode name, collected in HANDLERS."""
from __future__ import annotations

from . import calls, containers, control_flow, exceptions, loads_stores, operators, yield_from  # noqa: F401 (each registers its handlers)
from .registry import HANDLERS

__all__ = ["HANDLERS"]
