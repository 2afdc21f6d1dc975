"""nn.utils.parametrize: a module's tensor recomputed from "original" tensors by parametrization modules.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (or ``original0``, ``original1`` ... when ``p``
has a ``right_inverse`` returning several tensors) and makes ``weight`` a property of a
per-instance subclass (``ParametrizedLinear``) that evaluates the chain of
parametrizations on every read. The compiler inlines the property like any Python, so
a parametrized module's forward recomputes the weight inside the graph and gradients
reach the originals.
"""
from __future__ import annotations

import collections.abc
import contextlib

from ...tensor.layout import Size
from ...tensor.tensor import Tensor
from ...autograd.grad_mode import no_grad

from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter


class _ParametrizationCache:
    """While ``cached()`` is active, each parametrized tensor is evaluated once (keyed by module id and name)."""

    def __init__(self):
        self.depth = 0
        self.values = {}


CACHE = _ParametrizationCache()


@contextlib.contextmanager
def cached():
    """Inside this context, a parametrized tensor is computed once and reused.

    Example:
        >>> with dl.nn.utils.parametrize.cached():
        ...     pass  # several reads of a parametrized weight cost one evaluation
    """
    CACHE.depth += 1
    try:
        yield
    finally:
        CACHE.depth -= 1
        if not CACHE.depth:
            CACHE.values = {}


def _register_tensor(module, name: str, tensor) -> None:
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_in_place(original, value) -> None:
    """Give ``original`` the data of ``value``, keeping its identity (optimizers hold it)."""
    with no_grad():
        original.data = value.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s) they read."""

    def __init__(self, modules, original, unsafe: bool = False):
        if not modules:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_dtype, original_shape = original.dtype, tuple(original.shape)
        new = original
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new is not original:
                _set_in_place(original, new)
            _register_tensor(self, "original", original)
        else:
            for i, tensor in enumerate(new):
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(tensor).__name__}.")
                if isinstance(original, Parameter):
                    tensor = Parameter(tensor.detach(), original.requires_grad)
                tensor.requires_grad_(original.requires_grad)
                _register_tensor(self, f"original{i}", tensor)
        if not self.unsafe:
            value = self()
            _check_unchanged(value, original_dtype, original_shape)

    def right_inverse(self, value) -> None:
        """Store ``value`` (given for the parametrized tensor) into the originals, through the right inverses."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                _set_in_place(getattr(self, f"original{i}"), tensor)

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            value = modules[0](self.original)
        else:
            value = modules[0](*[getattr(self, f"original{i}") for i in range(self.ntensors)])
        for module in modules[1:]:
            value = module(value)
        return value


def _check_unchanged(value, dtype, shape) -> None:
    if not isinstance(value, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    if value.dtype != dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized dtype: {dtype}\nparametrized dtype: {value.dtype}")
    if tuple(value.shape) != shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized shape: {Size(shape)}\n"
                         f"parametrized shape: {value.shape}")


def _parametrized_property(tensor_name: str) -> property:
    """The property standing for the parametrized tensor: evaluates the chain (once per ``cached()``)."""

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not CACHE.depth:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in CACHE.values:
            CACHE.values[key] = parametrization()
        return CACHE.values[key]

    def set_original(self, value) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    return property(get_parametrized, set_original)


def _inject_new_class(module) -> None:
    """Give ``module`` a class of its own (``Parametrized<Class>``), to hold the properties."""
    cls = module.__class__

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})


def is_parametrized(module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given).

    Example:
        >>> dl.nn.utils.parametrize.is_parametrized(dl.nn.Linear(2, 2))
        False
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module) -> type:
    """The class of ``module`` before its first parametrization."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name: str, parametrization, *, unsafe: bool = False):
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the stored original(s).

    Args:
        module: the module holding the parameter or buffer.
        tensor_name: its name; a second registration on the same name chains after the first.
        parametrization: a module mapping the original(s) to the tensor; with a ``right_inverse``
            method, the originals are ``right_inverse(tensor)`` (several when it returns a sequence).
        unsafe: skip the checks that the parametrization keeps the dtype and shape.

    Example:
        >>> class Symmetric(dl.nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).transpose(-1, -2)
        >>> layer = register_parametrization(dl.nn.Linear(3, 3), "weight", Symmetric())
        >>> bool((layer.weight == layer.weight.T).all())
        True
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            _check_chained(value, current, tensor_name, "forward")
            if hasattr(parametrization, "right_inverse"):
                try:
                    inverse = parametrization.right_inverse(value)
                except NotImplementedError:
                    pass
                else:
                    _check_chained(inverse, current, tensor_name, "right_inverse")
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        parametrizations.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        setattr(module.__class__, tensor_name, _parametrized_property(tensor_name))
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


#: The checks on a parametrization chained after others, per what is checked: torch's wording.
_CHAINED_MESSAGES = {
    "forward": ("A parametrization must return a tensor. Got {type}.",
                "Registering a parametrization may not change the {what} of the tensor, unless the `unsafe` flag "
                "is enabled.\nmodule.{name}.{what}: {want}\nparametrization(module.{name}).{what}: {got}"),
    "right_inverse": ("parametrization.right_inverse must return a tensor. Got: {type}",
                      "The tensor returned by parametrization.right_inverse must have the same {what} as "
                      "module.{name}, unless the `unsafe` flag is enabled.\nmodule.{name}.{what}: {want}\n"
                      "returned {what}: {got}"),
}


def _check_chained(value, current, name: str, kind: str) -> None:
    not_a_tensor, changed = _CHAINED_MESSAGES[kind]
    if not isinstance(value, Tensor):
        raise ValueError(not_a_tensor.format(type=type(value).__name__))
    for what in ("dtype", "shape"):
        want, got = getattr(current, what), getattr(value, what)
        if want != got:
            raise ValueError(changed.format(what=what, name=name, want=want, got=got))


def remove_parametrizations(module, tensor_name: str, leave_parametrized: bool = True):
    """Undo ``register_parametrization`` on ``tensor_name``: the tensor becomes a plain parameter/buffer
    again, holding its current parametrized value (or the original with ``leave_parametrized=False``).

    Example:
        >>> layer = dl.nn.utils.parametrizations.weight_norm(dl.nn.Linear(2, 2))
        >>> type(remove_parametrizations(layer, "weight")).__name__
        'Linear'
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_in_place(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach(), True) if value.requires_grad else value.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                         "in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
