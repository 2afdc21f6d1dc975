"""Per-code-object cache of translations: a most-recent-first list of guarded entries."""
from __future__ import annotations

import itertools
import os
import types
import weakref
from dataclasses import dataclass, field
from typing import Callable

from ..report import TranslationReport
from .context import CompileConfig


@dataclass
class CacheEntry:
    """One translation of a frame, valid for the calls its guard accepts.

    Attributes:
        guard: ``guard(values) -> bool``; True if this entry applies to a call
            (``values`` as in ``FrameRequest.values``).
        run: ``run(*values)`` -> the frame's return value; None means run the original
            body (an eager-fallback entry).
        describe_failure: ``describe_failure(values)`` -> the first failing guard in words
            (``"x.shape[0]: expected 64, got 32"``), or None if every guard passes.
        config: the compile configuration the entry was made under.
        report: what the translation produced (graphs, guards, break reasons, the
            fallback reason of an eager entry), read by the hook, debug mode and explain.
    """

    guard: Callable[[tuple], bool]
    run: Callable | None
    describe_failure: Callable[[tuple], str | None]
    config: CompileConfig
    report: TranslationReport = field(default_factory=TranslationReport)


def _always(values) -> bool:
    return True


def _never_fails(values) -> None:
    return None


def fallback_entry(config: CompileConfig, reason: str) -> CacheEntry:
    """An entry that accepts every call and runs the original body (cached eager fallback)."""
    return CacheEntry(_always, None, _never_fails, config, TranslationReport(fallback_reason=reason))


# NOTE: [code tokens] An instrumented code names its cache by a token string in co_consts
# (objects there would make the code impossible to marshal): "<dynamo_lite code cache
# P:N>", P random per process, N a counter. TOKENS maps it to the CodeCache while the
# instrumented code lives (a weakref finalizer drops it with the code, as the object in
# co_consts used to live exactly as long), so a token from another process, or of a code
# that is gone, finds nothing and its call runs the original body.
ANY_TOKEN_PREFIX = "<dynamo_lite code cache "
TOKEN_PREFIX = f"{ANY_TOKEN_PREFIX}{os.urandom(6).hex()}:"
TOKENS: dict = {}
_token_numbers = itertools.count()


def foreign_token(code: types.CodeType) -> bool:
    """True for a code instrumented in another process (marshalled or pickled here)."""
    return any(type(c) is str and c.startswith(ANY_TOKEN_PREFIX) and not c.startswith(TOKEN_PREFIX)
               for c in code.co_consts)


def cache_of(code: types.CodeType) -> CodeCache | None:
    """The ``CodeCache`` an instrumented code names by its token, or None for plain code."""
    for const in code.co_consts:
        if type(const) is str and const.startswith(TOKEN_PREFIX):
            return TOKENS.get(const)
    return None


def original_code(code: types.CodeType) -> types.CodeType:
    """The code before instrumentation (``code`` itself if it is not instrumented)."""
    cache = cache_of(code)
    return code if cache is None else cache.code


def _forget(cache: "CodeCache") -> None:
    if cache.instrumented is None:  # not re-attached to a newer instrumented code meanwhile
        TOKENS.pop(cache.token, None)


def _same_config(entry: CacheEntry, config: CompileConfig) -> bool:
    return entry.config is config or entry.config == config


class CodeCache:
    """The cache of one original code object, plus what its prologue passes.

    The instrumented code holds this object's ``token`` as a constant and passes it to the
    dispatcher, which finds the cache in ``TOKENS`` (NOTE: [code tokens]). ``entries`` is a tuple
    replaced as a whole under the hook's lock: readers on other threads iterate a
    snapshot without locking.

    Attributes:
        code: the original code object.
        instrumented: the code with the dispatch prologue while it lives (``attach``), else None.
        token: the string naming this cache in its instrumented code.
        names: argument names then free-variable names, in prologue order.
        n_free: how many trailing values arrive as cells (the free variables).
        entries: most-recent-first ``CacheEntry`` tuple.
        gave_up: True once the cache size limit was hit: misses run eagerly.
        last_failure: the worded guard failure of the last recompile, if any.
        shape_history: input sizes its compiles saw (NOTE: [automatic dynamic shapes]).
    """

    __slots__ = ("code", "_instrumented", "token", "names", "n_free", "entries", "gave_up", "last_failure",
                 "shape_history")

    def __init__(self, code: types.CodeType, names: tuple[str, ...], n_free: int):
        self.code = code
        self._instrumented = None
        self.token = f"{TOKEN_PREFIX}{next(_token_numbers)}>"
        self.names = names
        self.n_free = n_free
        self.entries: tuple[CacheEntry, ...] = ()
        self.gave_up = False
        self.last_failure: str | None = None
        self.shape_history: dict = {}

    @property
    def instrumented(self) -> types.CodeType | None:
        return None if self._instrumented is None else self._instrumented()

    def attach(self, instrumented: types.CodeType) -> None:
        """Register ``instrumented`` (which carries ``token``) as this cache's code (NOTE: [code tokens])."""
        self._instrumented = weakref.ref(instrumented)
        TOKENS[self.token] = self
        weakref.finalize(instrumented, _forget, self)

    @property
    def where(self) -> str:
        """``qualname (file:line)`` of the code, for messages."""
        code = self.code
        return f"{code.co_qualname} ({code.co_filename}:{code.co_firstlineno})"

    def lookup(self, config: CompileConfig, values: tuple) -> CacheEntry | None:
        """The most recent entry made under ``config`` whose guard accepts ``values``."""
        for entry in self.entries:
            if _same_config(entry, config) and entry.guard(values):
                return entry
        return None

    def add(self, entry: CacheEntry) -> None:
        """Put ``entry`` first (caller holds the hook's lock)."""
        self.entries = (entry,) + self.entries

    def entries_for(self, config: CompileConfig) -> list[CacheEntry]:
        """Entries made under ``config``, most recent first."""
        return [entry for entry in self.entries if _same_config(entry, config)]

    def first_failure(self, config: CompileConfig, values: tuple) -> str | None:
        """The worded guard failure of the most recent entry under ``config``, if any."""
        for entry in self.entries_for(config):
            try:
                reason = entry.describe_failure(values)
            except Exception as exc:  # a guard that raises is a failing guard, not a crash
                reason = f"guard check raised {type(exc).__name__}: {exc}"
            return reason or "guards passed, but the entry did not match"
        return None

    def clear(self) -> None:
        """Drop every entry and the give-up mark."""
        self.entries = ()
        self.gave_up = False
        self.last_failure = None
        self.shape_history = {}

    def __repr__(self) -> str:
        return f"<CodeCache {self.where}: {len(self.entries)} entries>"
