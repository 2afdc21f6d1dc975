"""Shrink a failing program to the fewest statements and inputs that still fail the same way."""
from __future__ import annotations

import copy

from .program import Program
from .runner import check, run


def _still_fails(program: Program, compilers: dict, signature: tuple) -> bool:
    try:
        expected = run(program)
    except Exception:  # an invalid program (a removed statement's value is still used)
        return False
    if any(call.error is not None and call.error[0] in ("NameError", "UnboundLocalError") for call in expected.calls):
        return False
    return any((f.backend, f.kind) == signature for f in check(program, compilers))


def _without(program: Program, index: int) -> Program:
    smaller = copy.copy(program)
    removed = program.lines[index].name
    smaller.lines = program.lines[:index] + program.lines[index + 1:]
    smaller.outputs = [o for o in program.outputs if o != removed] or (
        [smaller.lines[-1].name] if smaller.lines else [])
    return smaller


def _only_output(program: Program, output: str) -> Program:
    smaller = copy.copy(program)
    smaller.outputs = [output]
    return smaller


def minimize(program: Program, compilers: dict, signature: tuple) -> Program:
    """The smallest program found (statements removed one at a time, then outputs) on which
    ``compilers`` still give a finding with ``signature`` = (backend, kind)."""
    changed = True
    while changed:
        changed = False
        for output in program.outputs if len(program.outputs) > 1 else []:
            candidate = _only_output(program, output)
            if _still_fails(candidate, compilers, signature):
                program, changed = candidate, True
                break
        for index in reversed(range(len(program.lines))):
            candidate = _without(program, index)
            if candidate.lines and _still_fails(candidate, compilers, signature):
                program, changed = candidate, True
    return program
