"""Public compiler API: ``dl.compile``, ``dl.reset``, ``dl.disable``, ``dl.stats``."""
from __future__ import annotations

import functools
import inspect
import types

from ..backends.registry import resolve_backend
from ..nn.module import Module
from .runtime.context import CompileConfig
from .runtime.hook import FrameHook
from .logs import log
from .runtime.stats import StatsSnapshot
from .translate.convert import convert_frame

# The process's frame hook: every dl.compile'd function shares its caches and counters.
default_hook = FrameHook(convert_frame)


def compile(fn=None, *, backend="auto", fullgraph: bool = False, dynamic: bool | None = None, debug: bool = False):
    """Compile a function or ``dl.nn.Module``: its calls run captured graphs through ``backend``.

    Nothing happens until the first call: each call checks the guarded cache of the
    function's code and translates the frame on a miss. What cannot be captured runs
    eagerly (unless ``fullgraph=True``), so the program's behaviour never changes.

    Args:
        fn: a function, bound method or module. Omit it to get a decorator.
        backend: a registered backend name (``dl.list_backends()``), ``"auto"`` (the best
            registered backend for the inputs' device), or a callable
            ``(graph_module, example_inputs) -> callable``.
        fullgraph: raise ``dl.Unsupported`` (with the file and line) instead of breaking
            the graph or falling back to eager.
        dynamic: True/False to force/forbid shape-generic graphs; None decides per input.
        debug: record the bytecode diff, graphs and guards of each translation.

    Returns:
        A function that runs ``fn`` compiled (``__wrapped__`` is ``fn``); for a module, a
        ``CompiledModule`` sharing its parameters (``._orig_mod`` is the module). A
        generator, coroutine or async generator function is returned unchanged: it always
        runs eagerly.

    Raises:
        InvalidBackend: ``backend`` is not a registered name.

    Example:
        >>> @dl.compile
        ... def f(x):
        ...     return (x * 2).relu()
        >>> model = dl.compile(MyModel(), backend="eager", fullgraph=True)
    """
    compiler, name = resolve_backend(backend)
    config = CompileConfig(compiler, name, fullgraph=fullgraph, dynamic=dynamic, debug=debug)
    if fn is None:
        return functools.partial(_compile, config=config, hook=default_hook)
    return _compile(fn, config, default_hook)


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
        if target.__code__.co_flags & _EAGER_ONLY_FLAGS:
            log.debug("dl.compile: %s is a generator/coroutine function; it runs eagerly", target.__qualname__)
            return fn
        return compiled_function(fn, target, config, hook)
    if isinstance(fn, functools.partial):
        return compiled_function(fn, fn.func, config, hook)
    if callable(fn):  # another callable object: compile its class's __call__
        return compiled_function(fn, getattr(type(fn), "__call__", None), config, hook)
    raise TypeError(f"dl.compile expects a function, a method or a dl.nn.Module, got {type(fn).__name__}")


_EAGER_ONLY_FLAGS = (
    inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
)


def compiled_function(fn, target, config: CompileConfig, hook: FrameHook):
    """A wrapper calling ``fn`` with ``config`` active on ``hook`` (``target`` gets the prologue).

    ``target`` is the Python function whose frames are compiled (``fn`` itself, the
    function behind a bound method, a module's ``forward``). After ``dl.reset()`` the
    wrapper instruments it again on its next call. The wrapper carries
    ``_dynamo_lite_config`` (the config) and ``__wrapped__`` (``fn``) for the translator.
    """
    state = hook.state
    hook.instrument(target)
    generation = hook.generation

    def compiled(*args, **kwargs):
        nonlocal generation
        if generation != hook.generation:  # dl.reset() restored the original code
            hook.instrument(target)
            generation = hook.generation
        # The per-thread dict of the FrameState: one thread-local lookup instead of three.
        local = state.__dict__
        if local.get("suspended"):  # called by the translator or a backend: plain eager call
            return fn(*args, **kwargs)
        saved = local.get("config")
        local["config"] = config
        try:
            return fn(*args, **kwargs)
        finally:
            local["config"] = saved

    if isinstance(fn, (types.FunctionType, types.MethodType)):
        functools.update_wrapper(compiled, fn)
    compiled.__wrapped__ = fn
    compiled._dynamo_lite_config = config
    return compiled


class CompiledModule(Module):
    """What ``dl.compile(module)`` returns: calls run compiled, everything else is the module's.

    Parameters, buffers, submodules, ``training`` and any other attribute are read from
    and written to the original module (``._orig_mod``), so both share their state and
    ``state_dict()`` keys are the original's. Methods of ``dl.nn.Module`` called on the
    wrapper (``to``, ``train``, ``parameters`` ...) act on the original's state (``to``
    and ``train`` return the wrapper); a subclass's own methods and attributes are
    reached through the original.

    Example:
        >>> cm = dl.compile(model)
        >>> cm._orig_mod is model, cm.weight is model.weight
        (True, True)
    """

    def __init__(self, module: Module, config: CompileConfig, hook: FrameHook):
        # Not Module.__init__: the wrapper has no tables of its own (see __getattr__).
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled_call", compiled_function(module, module.forward, config, hook))

    def __call__(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    _call_impl = __call__
    forward = __call__

    def __getattr__(self, name: str):
        try:
            module = self.__dict__["_orig_mod"]
        except KeyError:  # during copy/unpickling, before __init__ ran
            raise AttributeError(name) from None
        return getattr(module, name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._orig_mod, name)

    def __repr__(self) -> str:
        return f"CompiledModule({self._orig_mod!r})"


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
