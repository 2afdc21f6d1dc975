"""The frame hook: a dispatch prologue in each instrumented function and the dispatcher behind it.

NOTE: [dispatch prologue] ``FrameHook.instrument(fn)`` swaps ``fn.__code__`` for a copy
whose first instructions (right after the frame setup: COPY_FREE_VARS, MAKE_CELL, RESUME)
are, in Python terms::

    config = STATE.config
    if config is not None:                            # a dl.compile wrapper is active here
        result = DISPATCH(config, KEY, (arg0, arg1, ..., cell0, ...))  # -> run(arg0, ..., c0, ..., cell0, ...)
        if result is not SENTINEL:
            return result
    <original body, untouched, in the same frame>

``STATE`` (this hook's thread-local ``FrameState``), ``DISPATCH`` (the bound method
``FrameHook.dispatch``) and ``SENTINEL`` are builtins the hook installs under names of
its own (``__dynamo_lite_state_0__`` ...), loaded with LOAD_GLOBAL; ``KEY`` is the token
string of the ``CodeCache`` of the original code (NOTE: [code tokens]). So ``co_consts``
holds only constants ``marshal`` can write: an instrumented code marshals (cloudpickle and
similar tools), and run where dynamo_lite is imported but this process's caches are not,
it runs its original body. Arguments are loaded with LOAD_FAST, or LOAD_DEREF
when a closure captures them (MAKE_CELL already boxed them); free variables are passed as
cells and opened by the dispatcher, so an unbound free variable cannot raise in the
prologue; a translation gets their contents (``c0``...) and then the cells themselves. The config rides on the stack into the call (``[DISPATCH, config, ...]`` is the
layout of a method call on every supported version), so the dispatcher does not read the
thread-local again. With no compile active the cost is a constant load, a thread-local
attribute load, a copy, a jump and a pop (~25-40 ns, see benchmarks/dispatch_overhead.py);
an eager fallback runs the original instructions in the original frame, so tracebacks
and line numbers are those of the plain function.
"""
from __future__ import annotations

import builtins
import itertools
import sys
import threading
import types
import weakref
from typing import Callable

from bytecode import Bytecode, CellVar, Instr, Label

from ... import config
from ...backends.registry import InvalidBackend
from ..bytecode import compat
from .cache import TOKENS, CacheEntry, CodeCache, cache_of, fallback_entry, foreign_token, original_code
from .context import UNBOUND, Activation, CompileConfig, FrameRequest, FrameState, Suspension
from ..errors import Unsupported
from ..logs import bytecode_log, graph_breaks_log, log, recompiles_log
from ..bytecode.resume import ResumeFunctions
from .stats import CompileStats, FallbackRecord, GuardFailureRecord


class _RunOriginal:
    """Type of ``SENTINEL``: the dispatcher's answer "run the original body"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dynamo_lite: run the original body>"


SENTINEL = _RunOriginal()

_VARARG_FLAGS = (0x04, 0x08)  # CO_VARARGS, CO_VARKEYWORDS: each adds one argument slot

# NOTE: [compiled recursion] A compiled call costs three frames where the plain call costs
# one (the instrumented frame, the dispatcher, the translation), so a recursion that fits
# the interpreter's limit eagerly would overflow compiled. A code with this many compiled
# runs already on the thread's stack runs its original body (one frame per level: a
# compiled recursion needs only 2 + 2 * RECURSIVE_COMPILED_LEVELS frames more than eager), and a
# cache miss with fewer than TRANSLATE_HEADROOM frames left runs eagerly instead of
# translating (the translator recurses too); a RecursionError or MemoryError raised inside
# the translator makes only that call eager, never a cached decision.
RECURSIVE_COMPILED_LEVELS = 4
TRANSLATE_HEADROOM = 250


def argument_names(code: types.CodeType) -> tuple[str, ...]:
    """Names of the code's arguments in frame order: positional, kw-only, *args, **kwargs."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += sum(1 for flag in _VARARG_FLAGS if code.co_flags & flag)
    return code.co_varnames[:count]


def not_instrumentable(code: types.CodeType) -> str | None:
    """Why ``code`` cannot get a prologue, or None if it can."""
    if code.co_flags & compat.GENERATOR_FLAGS:
        return "generators, coroutines and async generators run eagerly"
    if cache_of(code) is not None:
        return "already instrumented"
    if foreign_token(code):
        return "instrumented in another process (its prologue runs the original body here)"
    return None


def _open_cells(values: tuple, n_free: int) -> tuple:
    """Replace the trailing ``n_free`` cells by their contents (``UNBOUND`` if empty)."""
    split = len(values) - n_free
    try:
        return values[:split] + tuple([cell.cell_contents for cell in values[split:]])
    except ValueError:  # an unbound free variable (reading it raises, in the translation too)
        return values[:split] + tuple([_contents(cell) for cell in values[split:]])


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return UNBOUND


class PrologueNames:
    """The builtin names one hook's prologues load its state, dispatcher and sentinel by."""

    _numbers = itertools.count()

    def __init__(self, state: FrameState, dispatch: Callable):
        number = next(self._numbers)
        self.state, self.dispatch = f"__dynamo_lite_state_{number}__", f"__dynamo_lite_dispatch_{number}__"
        self.sentinel = "__dynamo_lite_run_original__"
        builtins.__dict__.update({self.state: state, self.dispatch: dispatch, self.sentinel: SENTINEL})


def build_instrumented(cache: CodeCache, names: PrologueNames) -> types.CodeType:
    """The original code of ``cache`` with the dispatch prologue (see NOTE: [dispatch prologue])."""
    code = cache.code
    # The prologue leaves the stack empty, so every handler keeps its depth. Recomputing
    # the depths would go wrong for resume functions, whose own prologue jumps into a try
    # block with a stack the bytecode library cannot see (see ResumeFunctions._build).
    bc = Bytecode.from_code(code, conserve_exception_block_stackdepth=True)
    at = 0
    while at < len(bc) and isinstance(bc[at], Instr) and bc[at].name in compat.SETUP_OPCODES:
        at += 1
    loc = bc[at - 1].location if at else None  # the RESUME's location: the def line
    cellvars = set(bc.cellvars)
    n_args = len(cache.names) - cache.n_free
    loads = [
        Instr("LOAD_DEREF", CellVar(name), location=loc) if name in cellvars else Instr("LOAD_FAST", name, location=loc)
        for name in cache.names[:n_args]
    ]
    loads += [compat.load_cell(name, location=loc) for name in cache.names[n_args:]]
    discard_then_body = Label()
    prologue = [
        Instr("LOAD_GLOBAL", (False, names.state), location=loc),
        compat.load_attr("config", location=loc),
        Instr("COPY", 1, location=loc),
        Instr(compat.POP_JUMP_IF_NONE, discard_then_body, location=loc),
        # stack: config -> dispatch, config: the layout of a method call, dispatch(config, ...)
        *compat.call_with_receiver(
            Instr("LOAD_GLOBAL", (False, names.dispatch), location=loc),
            [Instr("LOAD_CONST", cache.token, location=loc), *loads, Instr("BUILD_TUPLE", len(loads), location=loc)],
            2,
            location=loc,
        ),
        Instr("COPY", 1, location=loc),
        Instr("LOAD_GLOBAL", (False, names.sentinel), location=loc),
        Instr("IS_OP", 0, location=loc),
        Instr(compat.POP_JUMP_IF_TRUE, discard_then_body, location=loc),
        Instr("RETURN_VALUE", location=loc),
        discard_then_body,  # the None config, or the SENTINEL result
        Instr("POP_TOP", location=loc),
    ]
    bc[at:at] = prologue
    instrumented = bc.to_code(compute_exception_stack_depths=False)
    # The library then sizes the stack from the normal flow only: handlers need the original's.
    return instrumented.replace(co_stacksize=max(instrumented.co_stacksize, code.co_stacksize))


def _stack_headroom() -> int:
    """Frames left before the interpreter's recursion limit on this thread."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return sys.getrecursionlimit() - depth


class FrameHook:
    """Instruments functions, keeps their caches and dispatches their calls.

    One hook owns: the thread-local ``state`` its prologues read, the per-code caches,
    the compile counters (``stats``) and the lock held while translating. ``dl.compile``
    uses the process's default hook (``dynamo_lite.frames.api.default_hook``); tests make
    their own with a fake translator.

    Args:
        translate: ``translate(FrameRequest) -> CacheEntry``, called on a cache miss
            (``dl.compile``'s hook gets ``frames.translate.convert.convert_frame``; the
            hook sits above the translator and never imports it).
        settings: where ``cache_size_limit`` is read (default ``dynamo_lite.config``).

    Example:
        >>> hook = FrameHook(translate=my_translator)
        >>> hook.instrument(f)                  # f now dispatches while a config is active
        >>> with hook.activate(config): f(x)    # what dl.compile's wrapper does
        >>> hook.reset()                        # f.__code__ is the original again
    """

    def __init__(self, translate: Callable[[FrameRequest], CacheEntry], settings=None):
        self.state = FrameState()
        self.prologue_names = PrologueNames(self.state, self.dispatch)
        self.stats = CompileStats()
        self.settings = config if settings is None else settings
        self.generation = 0  # bumped by reset(); wrappers re-instrument when it changes
        self._translate = translate
        self._lock = threading.RLock()
        self._caches: dict[int, CodeCache] = {}  # id(original code) -> cache (which keeps the code alive)
        self._failed: dict[int, types.CodeType] = {}  # codes the bytecode rewrite failed on
        self._installed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> CodeCache
        self._disabled: dict[int, types.CodeType] = {}
        self._reset_callbacks: list[Callable[[], None]] = []
        self.resume_functions = ResumeFunctions()  # graph breaks' continuations (frames/bytecode/resume.py)

    # ----------------------------------------------------------------- instrumentation
    def instrument(self, fn) -> bool:
        """Give ``fn`` (a function or the function behind a bound method) the dispatch prologue.

        Returns:
            True if ``fn`` now dispatches (or already did); False if it runs eagerly only
            (not a Python function, a generator/coroutine, disabled, or not rewritable).
        """
        fn = getattr(fn, "__func__", fn)
        if not isinstance(fn, types.FunctionType) or self.is_disabled(fn):
            return False
        if getattr(fn, "_dynamo_lite_config", None) is not None:  # a dl.compile wrapper, not user code
            return False
        code = fn.__code__
        if cache_of(code) is not None:
            return True
        instrumented = self.instrument_code(code)
        if instrumented is None:
            return False
        with self._lock:
            if fn.__code__ is code:
                fn.__code__ = instrumented
                self._installed[fn] = cache_of(instrumented)
        return True

    def instrument_code(self, code: types.CodeType) -> types.CodeType | None:
        """The instrumented version of ``code`` (made once per code object), or None."""
        if cache_of(code) is not None:
            return code
        reason = not_instrumentable(code)
        if reason is not None:
            bytecode_log.debug("not instrumenting %s: %s", code.co_qualname, reason)
            return None
        with self._lock:
            cache = self._caches.get(id(code))
            if cache is not None:
                instrumented = cache.instrumented
                if instrumented is None:  # every function holding it is gone: build it again
                    instrumented = build_instrumented(cache, self.prologue_names)
                    cache.attach(instrumented)
                return instrumented
            if id(code) in self._failed:
                return None
            cache = CodeCache(code, argument_names(code) + code.co_freevars, len(code.co_freevars))
            try:
                instrumented = build_instrumented(cache, self.prologue_names)
            except Exception:  # a rewrite we cannot do must never break the user's program
                log.warning("could not instrument %s; it runs eagerly", cache.where, exc_info=True)
                self._failed[id(code)] = code
                return None
            cache.attach(instrumented)
            self._caches[id(code)] = cache
            bytecode_log.debug("instrumented %s", cache.where)
            return instrumented

    def drop_entries(self, config: CompileConfig) -> None:
        """Remove every cache entry made under ``config`` (this very object) from every cache."""
        with self._lock:
            for cache in self._caches.values():
                cache.entries = tuple(entry for entry in cache.entries if entry.config is not config)

    def original_code(self, code: types.CodeType) -> types.CodeType:
        """The code before instrumentation."""
        return original_code(code)

    def cache_for(self, fn_or_code) -> CodeCache | None:
        """The cache of a function or code object, if it was instrumented by this hook."""
        code = getattr(getattr(fn_or_code, "__func__", fn_or_code), "__code__", fn_or_code)
        return self._caches.get(id(original_code(code)))

    # ----------------------------------------------------------------- disable marks
    def disable(self, fn) -> None:
        """Mark ``fn`` (function, method or code) never to be compiled or inlined."""
        target = getattr(fn, "__func__", fn)
        code = getattr(target, "__code__", target)
        if isinstance(code, types.CodeType):
            code = original_code(code)
            self._disabled[id(code)] = code
        if isinstance(target, types.FunctionType):
            target._dynamo_lite_disabled = True
            with self._lock:
                cache = self._installed.pop(target, None)
                if cache is not None and target.__code__ is cache.instrumented:
                    target.__code__ = cache.code

    def is_disabled(self, fn_or_code) -> bool:
        """True if ``dl.disable`` marked this function / method / code object."""
        target = getattr(fn_or_code, "__func__", fn_or_code)
        if getattr(target, "_dynamo_lite_disabled", False):
            return True
        code = getattr(target, "__code__", target)
        return isinstance(code, types.CodeType) and id(original_code(code)) in self._disabled

    # ----------------------------------------------------------------- activation
    def activate(self, config: CompileConfig) -> Activation:
        """Context manager making ``config`` active on this thread (no-op while suspended)."""
        return Activation(self.state, config)

    def suspended(self) -> Suspension:
        """Context manager switching the hook off on this thread (translator, backends)."""
        return Suspension(self.state)

    # ----------------------------------------------------------------- dispatch
    def dispatch(self, config: CompileConfig, token: str, values: tuple):
        """Called by the prologue when ``config`` is active: the frame's return value, or ``SENTINEL``."""
        key = TOKENS.get(token)
        if key is None:  # a code of another process, or of a cache that is gone (NOTE: [code tokens])
            return SENTINEL
        running = self.state.running
        if running is None:
            running = self.state.running = {}
        level = running.get(key, 0)
        if level >= RECURSIVE_COMPILED_LEVELS:  # NOTE: [compiled recursion]
            return SENTINEL
        cells = ()
        if key.n_free:
            cells = values[len(values) - key.n_free:]
            values = _open_cells(values, key.n_free)
        # The loop of CodeCache.lookup, inlined: this is the hot path of every compiled call.
        try:
            for entry in key.entries:
                if (entry.config is config or entry.config == config) and entry.guard(values):
                    break
            else:
                entry = None
        except Exception:  # a guard that raises rejects the call; the miss path reports it
            entry = None
        if entry is None:
            entry = self._on_miss(key, values, config, sys._getframe(1).f_globals, cells)
            if entry is None:
                return SENTINEL
        else:
            self.stats.cache_hits += 1
        run = entry.run
        if run is None:
            return SENTINEL
        running[key] = level + 1
        try:
            return run(*values, *cells) if cells else run(*values)
        finally:
            running[key] = level

    def _on_miss(self, key: CodeCache, values: tuple, config: CompileConfig, f_globals: dict,
                 cells: tuple = ()) -> CacheEntry | None:
        if key.gave_up:  # past the size limit: eager, without taking the lock
            self.stats.cache_misses += 1
            return None
        if _stack_headroom() < TRANSLATE_HEADROOM:  # NOTE: [compiled recursion]
            graph_breaks_log.info("%s runs eagerly this call: the stack is near the recursion limit", key.where)
            return None
        with self._lock:
            try:
                entry = key.lookup(config, values)  # another thread may have compiled it meanwhile
            except Exception:
                entry = None
            if entry is not None:
                self.stats.cache_hits += 1
                return entry
            self.stats.cache_misses += 1
            if key.gave_up:
                return None
            failure = key.first_failure(config, values)
            limit = self.settings.cache_size_limit
            if len(key.entries) >= limit:
                key.gave_up = True
                log_failure = failure or key.last_failure or "none recorded"
                recompiles_log.warning(
                    "%s hit the cache size limit (dl.config.cache_size_limit = %d); last guard failure: %s. "
                    "It runs eagerly from now on. Raise the limit, or mark the changing input dynamic.",
                    key.where, limit, log_failure,
                )
                return None
            if failure is not None:
                key.last_failure = failure
                self.stats.recompiles += 1
                self.stats.guard_failures.append(GuardFailureRecord(key.code.co_qualname, failure))
                recompiles_log.info("recompiling %s: guard failed: %s", key.where, failure)
            entry = self._translate_frame(key, values, config, f_globals, cells)
            if entry is None:
                return None
            key.add(entry)
            if entry.run is None:
                self._record_fallback(key, entry.report.fallback_reason or "translator chose eager")
            else:
                self.stats.frames_compiled += 1
                self.stats.graph_count += len(entry.report.graphs)
                self.stats.count_breaks(entry.report.break_reasons)
            return entry

    def _translate_frame(self, key, values, config, f_globals, cells=()) -> CacheEntry | None:
        """The entry translated for this call; None when resources ran out (this call runs eagerly)."""
        code = key.code
        request = FrameRequest(code, f_globals, key.names, values, config, self, cells)
        try:
            with self.suspended():
                return self._translate(request)
        except (RecursionError, MemoryError) as exc:  # NOTE: [compiled recursion]
            if config.fullgraph:
                raise
            log.warning("%s runs eagerly this call: the translator ran out of %s (%s)", key.where,
                        "stack" if isinstance(exc, RecursionError) else "memory", type(exc).__name__)
            self._record_fallback(key, f"translation raised {type(exc).__name__}")
            return None
        except Unsupported as exc:
            exc.located(code.co_filename, code.co_firstlineno)
            if config.fullgraph:
                raise
            graph_breaks_log.info("%s runs eagerly: %s", key.where, exc)
            return fallback_entry(config, str(exc))
        except InvalidBackend:  # the backend asked for does not serve these inputs: the caller's error
            raise
        except Exception as exc:  # a compiler bug: the user's program must still run
            reason = f"internal compiler error: {type(exc).__name__}: {exc}"
            if config.fullgraph:
                raise Unsupported(
                    reason, code.co_filename, code.co_firstlineno,
                    hint="this is a dynamo_lite bug; without fullgraph=True the function runs eagerly",
                ) from exc
            log.warning("%s runs eagerly after an %s", key.where, reason, exc_info=True)
            return fallback_entry(config, reason)

    def _record_fallback(self, key: CodeCache, reason: str) -> None:
        code = key.code
        self.stats.fallbacks.append(FallbackRecord(code.co_qualname, code.co_filename, code.co_firstlineno, reason))

    # ----------------------------------------------------------------- reset
    def add_reset_callback(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` on every ``reset()`` (caches kept elsewhere, e.g. resume functions)."""
        if callback not in self._reset_callbacks:
            self._reset_callbacks.append(callback)

    def reset(self) -> None:
        """Drop every cache entry, restore every instrumented function, zero the counters."""
        with self._lock:
            for callback in self._reset_callbacks:
                callback()
            for fn, cache in list(self._installed.items()):
                if fn.__code__ is cache.instrumented:
                    fn.__code__ = cache.code
            self._installed = weakref.WeakKeyDictionary()
            for cache in self._caches.values():
                cache.clear()  # codes still instrumented elsewhere start from an empty cache
            self._caches.clear()
            self._failed.clear()
            self.resume_functions.clear()
            self.stats.reset()
            self.generation += 1

