"""Module hooks: forward (pre-)hooks, full backward (pre-)hooks and their handles.

NOTE: [module hooks and the compiler] A module with no hooks is called straight through
to ``forward`` (eager and compiled alike). With hooks, ``Module._call_impl`` runs
``_call_with_hooks``, plain Python the translator inlines like any library code, so
hooks present at compile time are traced into the graph (or break it, if a hook does
something untraceable). The translator guards each called module's hook tables, so
registering or removing a hook after compiling is seen on the next call (a recompile).
Both also retag the module (see NOTE: [module version tags]).
"""
from __future__ import annotations

import itertools
import weakref

from ..tensor.autograd_fields import GRAD_MODE
from .backward_hooks import BackwardHookCall
from .versioning import changed

#: Hook ids, unique in the process (a handle removes exactly the hook it registered).
_NEXT_HOOK_ID = itertools.count()

#: The hook tables each module owns, created by ``Module.__init__``.
HOOK_TABLES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
               "_forward_hooks_with_kwargs", "_backward_hooks", "_backward_pre_hooks")


class RemovableHandle:
    """Returned by ``register_forward_*hook``: ``remove()`` (or leaving a ``with`` block) unregisters.

    Example:
        >>> handle = model.register_forward_hook(lambda module, args, output: None)
        >>> handle.remove()
    """

    def __init__(self, module, tables: tuple):
        self.id = next(_NEXT_HOOK_ID)
        self._module = weakref.ref(module)
        self._tables = tables

    def remove(self) -> None:
        for table in self._tables:
            table.pop(self.id, None)
        module = self._module()
        if module is not None:
            changed(module)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def empty_hook_tables() -> dict:
    """Fresh hook tables for a new module, keyed by attribute name."""
    return {name: {} for name in HOOK_TABLES}


class HooksMixin:
    """The forward-hook part of ``Module``."""

    def _register_hook(self, table: str, kwargs_table: str, hook, prepend: bool, with_kwargs: bool):
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        hooks, with_kwargs_ids = getattr(self, table), getattr(self, kwargs_table)
        handle = RemovableHandle(self, (hooks, with_kwargs_ids))
        if prepend:  # reordered in place: the handle holds this very dict
            earlier = list(hooks.items())
            hooks.clear()
            hooks[handle.id] = hook
            hooks.update(earlier)
        else:
            hooks[handle.id] = hook
        if with_kwargs:
            with_kwargs_ids[handle.id] = True
        changed(self)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """Call ``hook(module, args)`` before each ``forward``; a non-None result replaces ``args``.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and may return
        ``(args, kwargs)``. ``prepend`` runs it before the hooks already registered.

        Example:
            >>> handle = layer.register_forward_pre_hook(lambda module, args: (args[0] * 2,))
        """
        return self._register_hook("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", hook, prepend,
                                   with_kwargs)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """Call ``hook(module, args, output)`` after each ``forward``; a non-None result replaces the output.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs, output)``.

        Example:
            >>> seen = []
            >>> handle = layer.register_forward_hook(lambda module, args, output: seen.append(output.shape))
        """
        if always_call:
            raise NotImplementedError("register_forward_hook(always_call=True) is not supported")
        return self._register_hook("_forward_hooks", "_forward_hooks_with_kwargs", hook, prepend, with_kwargs)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_output)`` in backward, once the output gradients are known.

        A non-None result replaces ``grad_output`` (see nn/backward_hooks.py).
        """
        return self._register_hook("_backward_pre_hooks", "_backward_pre_hooks", hook, prepend, False)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_input, grad_output)`` in backward, once the input gradients are known.

        ``grad_input`` has one entry per positional input (None where it is not a tensor that
        requires grad); a non-None result replaces it (see nn/backward_hooks.py).

        Example:
            >>> handle = layer.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        """
        return self._register_hook("_backward_hooks", "_backward_hooks", hook, prepend, False)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        """``forward`` surrounded by the pre-hooks and hooks, in registration order."""
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward = None
        if (self._backward_hooks or self._backward_pre_hooks) and GRAD_MODE.enabled:
            backward = BackwardHookCall(self, list(self._backward_hooks.values()),
                                        list(self._backward_pre_hooks.values()))
            args = backward.wrap_inputs(args)
        output = self.forward(*args, **kwargs)
        with_kwargs = self._forward_hooks_with_kwargs
        for hook_id, hook in list(self._forward_hooks.items()):
            result = hook(self, args, kwargs, output) if hook_id in with_kwargs else hook(self, args, output)
            if result is not None:
                output = result
        return output if backward is None else backward.wrap_outputs(output)
