"""What is active on this thread (FrameState) and what the hook hands the translator (CompileConfig, FrameRequest)."""
from __future__ import annotations

import threading
import types
from dataclasses import dataclass
from typing import Callable, Protocol

from ..bytecode.resume import ResumeFunctions


@dataclass(frozen=True)
class CompileConfig:
    """The options of one ``dl.compile`` call; cache entries are matched against it.

    Attributes:
        backend: the resolved backend, ``(graph_module, example_inputs) -> callable``
            (for ``"auto"``, the registry's resolver object, which picks by device).
        backend_name: its registry name (or the callable's name).
        fullgraph: raise ``dl.Unsupported`` instead of breaking the graph / falling back.
        dynamic: ``True``/``False`` to force/forbid dynamic shapes; ``None`` decides per input.
        debug: keep and print the bytecode diff, graphs and guards of each translation.
        notes: torch.compile arguments that had no effect here, in words (NOTE: [compile modes]).
    """

    backend: Callable
    backend_name: str
    fullgraph: bool = False
    dynamic: bool | None = None
    debug: bool = False
    notes: tuple = ()


class TranslatorHook(Protocol):
    """What the translator may ask of the hook that called it (``FrameHook`` is one).

    The hook sits above the translator and is handed to it in each ``FrameRequest``;
    this protocol names the part the translator uses, so neither imports the other.
    """

    resume_functions: ResumeFunctions  # graph breaks' continuations, shared by all frames

    def instrument(self, fn) -> bool:
        """Give ``fn`` the dispatch prologue (a callee run eagerly after a graph break)."""

    def instrument_code(self, code: types.CodeType) -> types.CodeType | None:
        """``code`` with the dispatch prologue (a resume function's, made at run time), or None."""

    def is_disabled(self, fn_or_code) -> bool:
        """True if ``dl.disable`` marked this function (it is called, never inlined)."""


class _Unbound:
    """Type of ``UNBOUND``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound cell>"


#: What a translation gets for a free variable whose cell is empty (a resume function's
#: closure over a variable the frame assigns after its break); guarded like a constant.
UNBOUND = _Unbound()


@dataclass
class FrameRequest:
    """What the dispatcher hands the translator on a cache miss.

    Attributes:
        code: the ORIGINAL code object (before instrumentation).
        f_globals: the globals of the frame being called.
        names: names of ``values``: the code's arguments
            (``co_varnames[:argcount + kwonly + varargs + varkw]``) then ``co_freevars``.
        values: their values for this call (free variables: the cells' contents, or
            ``UNBOUND``).
        config: the active compile configuration.
        hook: the frame hook, so the translator can instrument callees (graph breaks).
        cells: the free variables' cells themselves.

    The transformed code the translator returns takes ``values`` and then the free
    variables' cells (NOTE: [cells across graph breaks]).
    """

    code: types.CodeType
    f_globals: dict
    names: tuple[str, ...]
    values: tuple
    config: CompileConfig
    hook: TranslatorHook
    cells: tuple = ()


class FrameState(threading.local):
    """Per-thread switch of the frame hook.

    NOTE: [frame state] An instrumented function dispatches to the cache only while a
    compile configuration is active on the calling thread. ``dl.compile``'s wrapper sets
    ``config`` around the call of the function it wraps and restores the previous value
    afterwards, so instrumented callees (resume functions, functions instrumented after a
    graph break) run under the same configuration, and a direct call of the original
    function outside any wrapper runs eagerly. While the translator or a backend compiler
    runs, the hook sets ``config`` to None and raises ``suspended``: every call they make,
    including calls of ``dl.compile`` wrappers, goes straight to the original body. The
    state is thread-local so one thread translating never switches the hook off for
    another. The class attributes are the defaults each new thread starts with.
    """

    config: CompileConfig | None = None
    suspended: int = 0
    running: dict | None = None  # CodeCache -> how many of its compiled runs are on this thread's stack


class Activation:
    """``with hook.activate(config):`` (see NOTE: [frame state])."""

    __slots__ = ("state", "config", "saved")

    def __init__(self, state: FrameState, config: CompileConfig):
        self.state, self.config = state, config

    def __enter__(self):
        state = self.state
        self.saved = state.config
        if not state.suspended:
            state.config = self.config

    def __exit__(self, *exc):
        self.state.config = self.saved


class Suspension:
    """``with hook.suspended():`` the hook is off on this thread inside."""

    __slots__ = ("state", "saved")

    def __init__(self, state: FrameState):
        self.state = state

    def __enter__(self):
        state = self.state
        self.saved = state.config
        state.config = None
        state.suspended += 1

    def __exit__(self, *exc):
        self.state.suspended -= 1
        self.state.config = self.saved
