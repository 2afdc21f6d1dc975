"""script, script_method, trace and ScriptModule: TorchScript's entry points, compiling with dl.compile.

NOTE: [TorchScript on dl.compile] ``@script_method`` and ``script(fn)`` return the
``dl.compile`` wrapper of the function (a plain function, so it binds as a method), with
``graph_for`` attached; ``script(module)`` returns a ``ScriptedModule`` (a CompiledModule
whose methods marked ``@export`` are compiled too). Called from other compiled code, the
wrapper is traced through (what it wraps is inlined), as TorchScript inlines one scripted
function into another. Annotations (``List[Tensor]``, ``Tuple[...]``, ``Final``) and
``__constants__`` are Python's and are left alone.
"""
from __future__ import annotations

import functools
import types

from ..frames import api
from ..frames.runtime.wrappers import CompiledModule
from ..nn.module import Module
from .graphs import ScriptGraph, graph_for


def _script_function(fn, **compile_kwargs):
    """The dl.compile wrapper of a function, with ``graph_for`` and ``code``."""
    compiled = api.compile(fn, **compile_kwargs)
    target = fn

    def graph_for_call(*args, **kwargs) -> ScriptGraph:
        compiled(*args, **kwargs)
        return graph_for(api.default_hook, compiled._dynamo_lite_config, target, args, kwargs)

    compiled.graph_for = graph_for_call
    compiled._dl_script_function = True
    return compiled


def script_method(fn):
    """Compile a method of a ``ScriptModule`` (``forward`` and its helpers) with dl.compile.

    Returns:
        The compiled function; bound to an instance it is a method. ``graph_for(*inputs)`` on
        the bound method returns the graphs that ran for those inputs.

    Example:
        >>> class Layer(dl.jit.ScriptModule):
        ...     @dl.jit.script_method
        ...     def forward(self, x: Tensor) -> Tensor:
        ...         return x.relu()
    """
    if getattr(fn, "_dl_script_function", False):
        return fn
    return _script_function(fn)


class ScriptModule(Module):
    """A module whose ``@script_method`` methods are compiled (TorchScript's ScriptModule).

    ``__constants__`` and attribute annotations are accepted and need nothing: dl.compile
    guards the Python values it reads.

    Example:
        >>> class Cell(dl.jit.ScriptModule):
        ...     __constants__ = ["hidden_size"]
        ...     @dl.jit.script_method
        ...     def forward(self, x, h): ...
    """

    def graph_for(self, *inputs, **kwargs) -> ScriptGraph:
        """Run ``forward`` on ``inputs`` and return the graphs the translation that ran holds."""
        forward = type(self).forward
        if getattr(forward, "_dl_script_function", False):
            return forward.graph_for(self, *inputs, **kwargs)
        compiled = api.compile(self)
        compiled(*inputs, **kwargs)
        return graph_for(api.default_hook, compiled._compiled_call._dynamo_lite_config, forward,
                         (self, *inputs), kwargs)

    @property
    def code(self) -> str:
        """The Python source of ``forward`` (TorchScript printed its own IR here)."""
        import inspect

        return inspect.getsource(getattr(type(self).forward, "__wrapped__", type(self).forward))

    def save(self, f, **kwargs):
        from .serialization import save

        return save(self, f, **kwargs)


class ScriptedModule(CompiledModule):
    """What ``script(module)`` returns: the module compiled (state shared with the original),
    its ``@export`` methods compiled too, and ``graph_for``."""

    def __init__(self, module: Module, **compile_kwargs):
        compiled = api.compile(module, **compile_kwargs)
        super().__init__(module, compiled._compiled_call._dynamo_lite_config, api.default_hook)
        object.__setattr__(self, "_exported", {})

    def __getattr__(self, name: str):
        module = self.__dict__.get("_orig_mod")
        method = getattr(type(module), name, None) if module is not None else None
        if getattr(method, "_dl_jit_export", False) and isinstance(method, types.FunctionType):
            exported = self.__dict__["_exported"]
            if name not in exported:
                exported[name] = _script_function(method)
            return types.MethodType(exported[name], module)
        return super().__getattr__(name)

    def graph_for(self, *inputs, **kwargs) -> ScriptGraph:
        """Run the module on ``inputs`` and return the graphs the translation that ran holds."""
        self(*inputs, **kwargs)
        module = self._orig_mod
        forward = getattr(type(module).forward, "__wrapped__", type(module).forward)
        config = self._compiled_call._dynamo_lite_config
        return graph_for(api.default_hook, config, forward, (module, *inputs), kwargs)


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Compile a function or module as ``torch.jit.script`` did, with dl.compile.

    Args:
        obj: a function (returns its compiled wrapper, with ``graph_for``), a ``dl.nn.Module``
            (a ``ScriptModule`` is returned as it is: its script methods are compiled; another
            module gets a ``ScriptedModule`` sharing its state), or a class (returned
            unchanged: its methods are inlined where compiled code calls them).

    Raises:
        RuntimeError: for an object TorchScript cannot compile either (an int, a string ...).

    Example:
        >>> scripted = dl.jit.script(model)
        >>> print(scripted.graph_for(x))
    """
    if isinstance(obj, ScriptModule) and getattr(type(obj).forward, "_dl_script_function", False):
        return obj
    if isinstance(obj, ScriptedModule):
        return obj
    if isinstance(obj, CompiledModule):
        obj = obj._orig_mod
    if isinstance(obj, Module):
        return ScriptedModule(obj)
    if isinstance(obj, type):
        return obj
    if getattr(obj, "_dl_script_function", False):
        return obj
    if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
        return _script_function(obj)
    raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled: dl.jit.script takes a function, "
                       f"a module or a class")


def trace(func, example_inputs=None, *args, **kwargs):
    """Compile ``func`` (a function or module) and run it once on ``example_inputs``.

    torch.jit.trace recorded the operations of one run; dl.compile captures the same
    graph from the bytecode and keeps Python control flow working for other inputs.
    """
    scripted = script(func)
    if example_inputs is not None:
        inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        scripted(*inputs)
    return scripted


def trace_module(mod, inputs: dict, *args, **kwargs):
    """Compile ``mod`` and run each named method once on its example inputs."""
    scripted = script(mod)
    for name, example in inputs.items():
        example = example if isinstance(example, tuple) else (example,)
        (scripted if name == "forward" else getattr(scripted, name))(*example)
    return scripted


# TorchScript's type of a scripted function: here the dl.compile wrapper, a plain function.
ScriptFunction = types.FunctionType
