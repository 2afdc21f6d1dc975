"""What one translation produced and why parts were not captured (TranslationReport, BreakReason)."""
from __future__ import annotations

import linecache
import types
from dataclasses import dataclass, field


@dataclass
class BreakReason:
    """Why part of the program was not captured, where, and what to do about it."""

    reason: str
    filename: str | None
    lineno: int | None
    hint: str = ""
    #: For a break inside an inlined callee: the callee's name (its own frame, compiled when the call runs
    #: eagerly, reports the same break) and the line of this frame that calls it.
    callee: str | None = None
    call_lineno: int | None = None

    @property
    def key(self) -> tuple:
        """What two reports of one break share: the reason and where it happened."""
        return self.reason, self.filename, self.lineno

    @property
    def source_line(self) -> str:
        if not self.filename or not self.lineno:
            return ""
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self) -> str:
        where = f"{self.filename}:{self.lineno}" if self.filename else "<unknown>"
        text = f"{self.reason}\n    at {where}"
        if self.source_line:
            text += f"\n        {self.source_line}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


@dataclass
class TranslationReport:
    """What the hook, debug mode and ``dl.explain`` read about one translation of a frame.

    Attributes:
        graphs: the graph modules handed to the backend (counted in ``dl.stats().graph_count``);
            for a graph compiled for training, its forward graph.
        backward_graphs: the backward graph of each graph compiled for training (frames/aot).
        guards: the guards in words, one per line.
        guard_code: the source of the compiled guard function.
        original_code: the frame's code before translation.
        transformed_code: the code that replaces it (None for an eager entry).
        emitted: what the emitter emitted for it, as steps (a ``bytecode.steps.StepRecorder``).
        compile_time_s: how long the translation took.
        break_reasons: one ``BreakReason`` per graph break (or for the fallback).
        resume_codes: ``(code, origin)`` of each resume function the translation made.
        fallback_reason: why the frame runs eagerly; None for a compiled frame.
        bytecode_diff: original vs transformed bytecode, filled in when someone reads it
            (debug mode, the bytecode log, ``dl.explain``), not on every compile.
        resume_diffs: the same for each resume function (``name``, ``offset``, ``diff``).
        rewritten: the transformed code spelled as Python from ``emitted`` (a
            ``bytecode.decompiled.Rewritten``: ``source`` and ``bindings``), filled in with the diffs.

    Example:
        >>> entry = hook.cache_for(f).entries[0]
        >>> entry.report.graphs, entry.report.break_reasons
    """

    graphs: list = field(default_factory=list)
    guards: str = ""
    backward_graphs: list = field(default_factory=list)
    guard_code: str = ""
    original_code: types.CodeType | None = None
    transformed_code: types.CodeType | None = None
    emitted: object = None
    compile_time_s: float = 0.0
    break_reasons: list = field(default_factory=list)
    resume_codes: list = field(default_factory=list)
    fallback_reason: str | None = None
    bytecode_diff: str | None = None
    resume_diffs: list = field(default_factory=list)
    rewritten: object = None
    unrolled_loops: list = field(default_factory=list)  # (file, line, why) of loops not scanned

