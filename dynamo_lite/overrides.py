"""dl.overrides: torch.overrides' queries for the ``__torch_function__`` protocol.

NOTE: [no __torch_function__ dispatch] dynamo_lite's own functions and Tensor methods do
not consult ``__torch_function__``: an object defining it is not routed through its
override by ``dl.add`` and friends, and ``dl.Tensor`` (and subclasses that do not define
one) never has it. So ``has_torch_function`` is False for every dl tensor and argument
list of dl tensors, ``get_overridable_functions()`` is empty and ``get_ignored_functions()``
holds every public function. The protocol itself is implemented for code that follows it
by hand (a library function that checks ``has_torch_function`` and then calls
``handle_torch_function``): such calls dispatch to the arguments' ``__torch_function__``
in torch's order (subclasses before their bases, then left to right).

Example:
    >>> dl.overrides.has_torch_function((dl.ones(2),)), dl.overrides.is_tensor_like(dl.ones(2))
    (False, True)
"""
from __future__ import annotations

import functools

from .tensor.tensor import Tensor

__all__ = [
    "get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
    "is_tensor_method_or_property",
]


def _overrides(value) -> bool:
    """Whether ``value``'s type brings its own ``__torch_function__``."""
    return getattr(type(value), "__torch_function__", None) is not None


def has_torch_function(relevant_args) -> bool:
    """True when an argument defines ``__torch_function__`` (never for dl tensors: see the NOTE)."""
    return any(_overrides(arg) for arg in relevant_args)


def has_torch_function_unary(arg) -> bool:
    """``has_torch_function((arg,))``."""
    return _overrides(arg)


def has_torch_function_variadic(*args) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def is_tensor_like(inp) -> bool:
    """True for a dl tensor, or an object whose type defines ``__torch_function__``."""
    return isinstance(inp, Tensor) or _overrides(inp)


def _overloaded_args(relevant_args) -> list:
    """The arguments that override, once per type, subclasses before their bases, else in order."""
    result, seen = [], set()
    for arg in relevant_args:
        kind = type(arg)
        if kind in seen or not _overrides(arg):
            continue
        seen.add(kind)
        index = next((i for i, other in enumerate(result) if issubclass(kind, type(other))), len(result))
        result.insert(index, arg)
    return result


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the arguments' ``__torch_function__(public_api, types, args, kwargs)`` until one handles it.

    Raises TypeError (torch's message) when every override returns NotImplemented.
    """
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(arg) for arg in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__module__", "") + "." + getattr(public_api, "__name__", repr(public_api))
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(arg) for arg in overloaded]}")


@functools.lru_cache(maxsize=None)
def _public_functions() -> frozenset:
    from . import fft, linalg, special
    from .nn import functional
    from .ops.core import api

    functions = set()
    for module in (api, functional, linalg, fft, special):
        for name in getattr(module, "__all__", dir(module)):
            value = getattr(module, name, None)
            if callable(value) and not isinstance(value, type):
                functions.add(value)
    return frozenset(functions)


def get_ignored_functions() -> set:
    """Every public dl function: none dispatches on ``__torch_function__`` (see the NOTE)."""
    return set(_public_functions())


def get_overridable_functions() -> dict:
    """Namespace -> functions that dispatch on ``__torch_function__``: empty in dynamo_lite."""
    return {}


def get_testing_overrides() -> dict:
    """Function -> a dummy with its signature, for each overridable function: empty in dynamo_lite."""
    return {}


def is_tensor_method_or_property(func) -> bool:
    """Whether ``func`` is a Tensor method or property (the first argument is then ``self``)."""
    from .ops.core.methods import TENSOR_METHODS

    return any(func is value or getattr(value, "fget", None) is func for value in TENSOR_METHODS.values()) \
        or func in vars(Tensor).values()
