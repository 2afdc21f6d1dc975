"""Public compiler API: ``dl.compile``, ``dl.reset``, ``dl.disable``, ``dl.stats``."""
from __future__ import annotations

import functools
import types

from ..backends.registry import AUTO, AutoBackend, resolve_backend
from ..nn.module import Module
from .bytecode.compat import GENERATOR_FLAGS
from .compile_options import resolve_compile_options
from .logs import log
from .runtime.context import CompileConfig
from .runtime.hook import FrameHook
from .runtime.stats import StatsSnapshot
from .runtime.wrappers import CompiledModule, compiled_function
from .translate.convert import convert_frame

# The process's frame hook: every dl.compile'd function shares its caches and counters.
default_hook = FrameHook(convert_frame)


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None, backend="auto", mode=None,
            options=None, disable: bool = False, debug: bool = False):
    """Compile a function or ``dl.nn.Module``: its calls run captured graphs through ``backend``.

    Nothing happens until the first call: each call checks the guarded cache of the
    function's code and translates the frame on a miss. What cannot be captured runs
    eagerly (unless ``fullgraph=True``), so the program's behaviour never changes.

    Args:
        model: a function, bound method or module (torch.compile's name). Omit it to get a decorator.
        fullgraph: raise ``dl.Unsupported`` (with the file and line) instead of breaking
            the graph or falling back to eager.
        dynamic: True/False to force/forbid shape-generic graphs; None decides per input.
        backend: a registered backend name (``dl.list_backends()``), ``"auto"`` (the best
            registered backend for the inputs' device), or a callable
            ``(graph_module, example_inputs) -> callable``.
        mode: torch.compile's mode (``"default"``, ``"reduce-overhead"``, ``"max-autotune"``,
            ``"max-autotune-no-cudagraphs"``); mapped where dynamo_lite has the knob, else
            noted in ``dl.explain`` (NOTE: [compile modes]).
        options: torch.compile's backend options dict, likewise (not together with ``mode``).
        disable: return ``model`` unchanged (a no-op, as torch.compile's).
        debug: record the bytecode diff, graphs and guards of each translation.

    Returns:
        A function that runs ``fn`` compiled (``__wrapped__`` is ``fn``); for a module, a
        ``CompiledModule`` sharing its parameters (``._orig_mod`` is the module). A
        generator, coroutine or async generator function is returned unchanged: it always
        runs eagerly.

    Raises:
        InvalidBackend: ``backend`` is not a registered name.
        RuntimeError: an unknown ``mode`` or option, or both given (torch's errors).

    Example:
        >>> @dl.compile
        ... def f(x):
        ...     return (x * 2).relu()
        >>> model = dl.compile(MyModel(), backend="eager", fullgraph=True)
    """
    chosen = resolve_compile_options(mode, options)
    if disable:
        return (lambda fn: fn) if model is None else model
    compiler, name = resolve_backend(backend)
    notes = chosen.notes
    if chosen.max_autotune:
        compiler, notes = tuned_backend(compiler, name, notes)
    for note in notes:
        log.info("dl.compile: %s", note)
    config = CompileConfig(compiler, name, fullgraph=fullgraph, dynamic=dynamic, debug=debug or chosen.debug,
                           notes=notes)
    if model is None:
        return functools.partial(_compile, config=config, hook=default_hook)
    return _compile(model, config, default_hook)


def tuned_backend(compiler, name: str, notes: tuple) -> tuple:
    """``(compiler, notes)`` for max-autotune: ``auto`` builds its C tier at the first call (NOTE: [compile modes])."""
    if compiler is not AUTO:
        return compiler, notes + (f"max-autotune has no effect with backend {name!r}: it starts the C tier of "
                                  "backend 'auto' at the first call",)
    eager_tier = AutoBackend()
    eager_tier.tier_up_seconds = 0.0
    return eager_tier, notes


def _compile(fn, config: CompileConfig, hook: FrameHook):
    """``dl.compile`` with a resolved config, on ``hook`` (tests pass their own)."""
    if isinstance(fn, CompiledModule):  # compiling again replaces the options
        fn = fn._orig_mod
    elif getattr(fn, "_dynamo_lite_config", None) is not None:
        fn = fn.__wrapped__
    if isinstance(fn, Module):
        return CompiledModule(fn, config, hook)
    if isinstance(fn, (types.FunctionType, types.MethodType)):
        target = fn.__func__ if isinstance(fn, types.MethodType) else fn
        if target.__code__.co_flags & GENERATOR_FLAGS:
            log.debug("dl.compile: %s is a generator/coroutine function; it runs eagerly", target.__qualname__)
            return fn
        return compiled_function(fn, target, config, hook)
    if isinstance(fn, functools.partial):
        return compiled_function(fn, fn.func, config, hook)
    if callable(fn):  # another callable object: compile its class's __call__
        return compiled_function(fn, getattr(type(fn), "__call__", None), config, hook)
    raise TypeError(f"dl.compile expects a function, a method or a dl.nn.Module, got {type(fn).__name__}")


def reset() -> None:
    """Drop every compiled entry, restore every instrumented function and zero ``dl.stats()``.

    Functions compiled before keep working: they are compiled again on their next call.

    Example:
        >>> dl.reset()
    """
    default_hook.reset()


def disable(fn=None, *, recursive: bool = True):
    """Never compile or inline ``fn``; usable as a decorator.

    Args:
        fn: a function, bound method or module (its ``forward``).
        recursive: also run everything ``fn`` calls eagerly (returns a wrapper that
            switches the hook off while ``fn`` runs); with False only ``fn``'s own frame
            is skipped and ``fn`` itself is returned.

    Example:
        >>> @dl.disable
        ... def log_stats(x):
        ...     print(x.mean())
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive)
    if isinstance(fn, Module):
        default_hook.disable(fn.forward)
        return fn
    default_hook.disable(fn)
    if not recursive:
        return fn
    state = default_hook.state

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        local = state.__dict__  # see compiled_function
        saved = local.get("config")
        if saved is None:
            return fn(*args, **kwargs)
        local["config"] = None
        try:
            return fn(*args, **kwargs)
        finally:
            local["config"] = saved

    default_hook.disable(disabled)
    return disabled


def is_disabled(fn_or_code) -> bool:
    """True if ``dl.disable`` marked this function, method or code object."""
    return default_hook.is_disabled(fn_or_code)


def stats() -> StatsSnapshot:
    """Compile counters since the last ``dl.reset()`` / ``dl.stats.reset()``.

    Example:
        >>> dl.stats().cache_hits, dl.stats().recompiles
        >>> print(dl.stats())
    """
    return default_hook.stats.snapshot()


def _reset_stats() -> None:
    """Zero the counters of ``dl.stats()`` (caches are kept)."""
    default_hook.stats.reset()


stats.reset = _reset_stats
