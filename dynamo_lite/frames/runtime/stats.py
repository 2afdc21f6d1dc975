"""Compile counters kept by the frame hook and the snapshot ``dl.stats()`` returns."""
from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class FallbackRecord:
    """A frame that runs eagerly instead of compiled, and why."""

    function: str
    filename: str
    lineno: int
    reason: str

    def __str__(self) -> str:
        return f"{self.function} ({self.filename}:{self.lineno}): {self.reason}"


@dataclass(frozen=True)
class GuardFailureRecord:
    """A recompile: the first guard of the previous entry that rejected the call."""

    function: str
    reason: str

    def __str__(self) -> str:
        return f"{self.function}: {self.reason}"


@dataclass(frozen=True)
class StatsSnapshot:
    """Counters since the last reset (``dl.stats()``).

    Attributes:
        frames_compiled: translations that produced compiled code.
        cache_hits: calls served by a cached entry (compiled or eager fallback).
        cache_misses: calls no cached entry accepted.
        recompiles: misses of a frame that already had an entry for the same config.
        graph_count: graphs handed to a backend.
        graph_breaks: graph breaks in the frames compiled (each resumes eagerly).
        fallbacks: one record per frame that fell back to eager, with the reason.
        guard_failures: one record per recompile, with the worded guard failure.

    Example:
        >>> s = dl.stats()
        >>> s.cache_hits, len(s.fallbacks), s["recompiles"]
    """

    frames_compiled: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    recompiles: int = 0
    graph_count: int = 0
    graph_breaks: int = 0
    fallbacks: tuple[FallbackRecord, ...] = ()
    guard_failures: tuple[GuardFailureRecord, ...] = ()

    def __getitem__(self, name: str):
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        return getattr(self, name)

    def as_dict(self) -> dict:
        """Plain dict (records become dicts)."""
        return asdict(self)

    def __str__(self) -> str:
        lines = [f"{f.name}: {getattr(self, f.name)}" for f in fields(self) if isinstance(getattr(self, f.name), int)]
        lines += [f"fallbacks: {len(self.fallbacks)}"] + [f"  {r}" for r in self.fallbacks]
        lines += [f"guard_failures: {len(self.guard_failures)}"] + [f"  {r}" for r in self.guard_failures]
        return "\n".join(lines)


class CompileStats:
    """Mutable counters owned by one ``FrameHook``.

    Counters are bumped without a lock on the hit path (a bump may be lost if two threads
    hit at the same instant); everything counted on the miss path happens under the
    hook's lock and is exact.
    """

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        self.frames_compiled = 0
        self.cache_hits = 0
        self.cache_misses = 0
        self.recompiles = 0
        self.graph_count = 0
        self.graph_breaks = 0
        self.callee_breaks: set = set()  # keys of breaks a caller counted that the callee's frame reports again
        self.fallbacks: list[FallbackRecord] = []
        self.guard_failures: list[GuardFailureRecord] = []

    def count_breaks(self, reasons) -> None:
        """Add one translation's breaks, each break once (NOTE: [breaks counted once]): a caller's record
        of a break inside an inlined callee is counted, and the records of the same break made by the frames
        it calls on the way (each compiled when its call runs eagerly) are not counted again."""
        for reason in reasons:
            if reason.key in self.callee_breaks:  # already counted, from the outermost caller's record
                if reason.callee is None:  # the callee's own frame: the chain of reports of this break ends
                    self.callee_breaks.discard(reason.key)
                continue
            if reason.callee is not None:
                self.callee_breaks.add(reason.key)
            self.graph_breaks += 1

    @contextlib.contextmanager
    def saved(self):
        """``with stats.saved() as before:`` counters are put back as they were on exit.

        ``before`` is the snapshot taken on entry (to tell what the block added).

        Example:
            >>> with hook.stats.saved() as before:
            ...     run_something_compiled()
            ...     added = hook.stats.fallbacks[len(before.fallbacks):]
        """
        before = self.snapshot()
        try:
            yield before
        finally:
            self.restore(before)

    def restore(self, snapshot: StatsSnapshot) -> None:
        """Set every counter to its value in ``snapshot``."""
        for item in fields(snapshot):
            value = getattr(snapshot, item.name)
            setattr(self, item.name, list(value) if isinstance(value, tuple) else value)

    def snapshot(self) -> StatsSnapshot:
        """An immutable copy of the counters."""
        return StatsSnapshot(
            frames_compiled=self.frames_compiled,
            cache_hits=self.cache_hits,
            cache_misses=self.cache_misses,
            recompiles=self.recompiles,
            graph_count=self.graph_count,
            graph_breaks=self.graph_breaks,
            fallbacks=tuple(self.fallbacks),
            guard_failures=tuple(self.guard_failures),
        )
