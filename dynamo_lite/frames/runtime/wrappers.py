"""What ``dl.compile`` returns: a wrapper that activates its config on the hook, and CompiledModule."""
from __future__ import annotations

import functools
import types

from ...nn.module import Module
from .context import CompileConfig
from .hook import FrameHook


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
