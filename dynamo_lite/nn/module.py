"""Module: the base class of models; registers parameters, buffers and submodules."""
from __future__ import annotations

from typing import Iterator

from ..tensor.tensor import Tensor
from .conversion import ConversionMixin
from .hooks import HooksMixin, empty_hook_tables
from .parameter import Buffer, Parameter
from .state_dict import StateDictMixin
from .versioning import changed, init_tags, link, restore_links, state_without_links

_MISSING = object()


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


def _check_member_name(kind: str, name, exists) -> None:
    """Validate a parameter/buffer/module name as torch does (TypeError/KeyError)."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\", got: {name}")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if exists:
        raise KeyError(f"attribute '{name}' already exists")


class Module(StateDictMixin, ConversionMixin, HooksMixin):
    """Base class for all neural-network modules.

    Assigning a ``Parameter``, a ``Module`` or (via ``register_buffer``) a Tensor to an
    attribute registers it; ``parameters()``, ``state_dict()``, ``to()`` ... then walk
    the tree. Subclasses implement ``forward``; calling the module calls ``forward``.

    Example:
        >>> class Affine(dl.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.scale = dl.nn.Parameter(dl.ones(3))
        ...     def forward(self, x):
        ...         return x * self.scale
        >>> [name for name, _ in Affine().named_parameters()]
        ['scale']
    """

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments: {args!r} {kwargs!r}"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        for name, table in empty_hook_tables().items():
            setattr_(self, name, table)
        init_tags(self)

    # -- calling ---------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # NOTE: [thin Module.__call__] Without hooks, calling a module is exactly calling its
    # forward, so the compiler inlines ``forward``; see NOTE: [module hooks and the compiler].
    def _call_impl(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    __call__ = _call_impl

    # -- registration ----------------------------------------------------------------
    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a Parameter or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        exists = hasattr(self, name) if isinstance(name, str) else False
        _check_member_name("parameter", name, exists and name not in self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(dl.nn.Parameter or None required)"
            )
        self._parameters[name] = param
        changed(self)

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register a non-parameter tensor (e.g. running statistics) under ``name``.

        Persistent buffers appear in ``state_dict()``; non-persistent ones do not.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        exists = hasattr(self, name) if isinstance(name, str) else False
        _check_member_name("buffer", name, exists and name not in self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(dl.Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
        changed(self)

    def add_module(self, name: str, module) -> None:
        """Register ``module`` (a Module or None) as a child under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        exists = hasattr(self, name) if isinstance(name, str) else False
        _check_member_name("module", name, exists and name not in self._modules)
        self._modules[name] = module
        link(self, module)
        changed(self)

    register_module = add_module

    # NOTE: [module version tags] (nn/versioning.py): every branch below that changes
    # what a compiled graph may have read ends by retagging the module.
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(dl.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            self._modules[name] = value
            link(self, value)
        elif name in d.get("_modules", ()):
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(dl.nn.Module or None expected)"
                )
            self._modules[name] = value
        elif isinstance(value, Buffer):
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value, value.persistent)
            return  # register_buffer counted the change
        elif name in d.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(dl.Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            unchanged = d.get(name, _MISSING) is value
            object.__setattr__(self, name, value)
            if unchanged:  # e.g. ``training = True`` again: nothing a graph read changed
                return
        changed(self)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from every other place an attribute may live."""
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            if table != keep:
                self.__dict__[table].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: look in the registration tables.
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            members = d.get(table)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)
        changed(self)

    def __getstate__(self):
        return state_without_links(self)

    def __setstate__(self, state) -> None:
        restore_links(self, state)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(k for k in keys if not k[:1].isdigit()))

    # -- traversal -------------------------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Yield ``(qualified_name, module)`` for this module and all below, pre-order."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """Yield ``(name, module)`` for each direct child (each module object once)."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        owners = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for owner_prefix, owner in owners:
            for name, value in getattr(owner, table).items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield owner_prefix + ("." if owner_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(qualified_name, Parameter)``; a parameter shared by two modules once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target: str) -> "Module":
        """The module at dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The Parameter at dotted path ``target`` (e.g. ``"layers.0.weight"``)."""
        module, name = self._owner_of(target)
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module, name = self._owner_of(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def _owner_of(self, target: str) -> tuple:
        """(module, attribute name) of the dotted path ``target``; AttributeError if absent."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

    # -- modes -----------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode on this module and all submodules (affects e.g. Dropout)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        """Switch to evaluation mode: ``train(False)``."""
        return self.train(False)

    def apply(self, fn) -> "Module":
        """Call ``fn(module)`` on every submodule (children first) and then on ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- printing --------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of ``repr`` (override in subclasses)."""
        return ""

    def _child_repr_lines(self) -> list:
        lines = []
        for name, module in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(module), 2))
        return lines

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = self._child_repr_lines()
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
