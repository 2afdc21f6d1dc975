"""Container modules: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict."""
from __future__ import annotations

import operator
from collections import OrderedDict

from ..module import Module, _addindent
from ..versioning import changed, link
from ...tensor.tensor import Tensor
from ..parameter import Parameter


def _index_key(index, length: int) -> str:
    """The string key of integer position ``index`` (negative allowed); IndexError if out of range."""
    index = operator.index(index)
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range")
    return str(index % length)


class _ListLike(Module):
    """Shared positional behaviour: children are keyed "0", "1", ... in order."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)._from_modules(list(self._modules.values())[index])
        return self._modules[_index_key(index, len(self))]

    def __setitem__(self, index, module) -> None:
        setattr(self, _index_key(index, len(self)), module)

    def __delitem__(self, index) -> None:
        if isinstance(index, slice):
            for key in list(self._modules)[index]:
                del self._modules[key]
        else:
            del self._modules[_index_key(index, len(self))]
        self._renumber()

    def _renumber(self) -> None:
        # Keep keys "0".."n-1" after a deletion/insertion, so indexing stays positional.
        modules = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(modules):
            self._modules[str(i)] = module
        changed(self)

    def append(self, module):
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Append every module of an iterable; returns ``self``."""
        if not hasattr(modules, "__iter__"):
            raise TypeError(f"{type(self).__name__}.extend should be called with an iterable, "
                            f"but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module) -> None:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        n = len(self)
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m
        link(self, module)
        changed(self)

    def pop(self, index: int = -1):
        """Remove and return the module at ``index``."""
        module = self[index]
        del self[index]
        return module

    def __add__(self, other):
        if not isinstance(other, type(self)):
            raise ValueError(f"add operator supports only objects of {type(self).__name__} class, "
                             f"but {type(other).__name__} is given.")
        return type(self)._from_modules(list(self) + list(other))

    def __iadd__(self, other):
        return self.extend(other)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]


class Sequential(_ListLike):
    """A chain of modules: ``forward`` feeds each one's output to the next.

    Built from modules in order, or from an ``OrderedDict`` of named modules. Supports
    ``len``, iteration, indexing (a slice gives a new Sequential), ``append``.

    Example:
        >>> net = dl.nn.Sequential(dl.nn.Linear(4, 8), dl.nn.ReLU(), dl.nn.Linear(8, 2))
        >>> net(dl.randn(3, 4)).shape
        dl.Size([3, 2])
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    @classmethod
    def _from_modules(cls, modules):
        return cls(*modules)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        keys = list(self._modules)
        return self._modules[keys[int(_index_key(index, len(keys)))]]

    def __setitem__(self, index, module) -> None:
        keys = list(self._modules)
        setattr(self, keys[int(_index_key(index, len(keys)))], module)

    def __delitem__(self, index) -> None:
        keys = list(self._modules)
        targets = keys[index] if isinstance(index, slice) else [keys[int(_index_key(index, len(keys)))]]
        for key in targets:
            del self._modules[key]
        self._renumber()

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_ListLike):
    """A list of submodules, registered so that ``parameters()`` etc. see them.

    Example:
        >>> layers = dl.nn.ModuleList([dl.nn.Linear(4, 4) for _ in range(3)])
        >>> len(layers), len(list(layers.parameters()))
        (3, 6)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @classmethod
    def _from_modules(cls, modules):
        return cls(modules)

    def _child_repr_lines(self) -> list:
        # Runs of identical-looking children print once: "(0-2): 3 x Linear(...)".
        lines = []
        items = [(name, repr(module)) for name, module in self._modules.items()]
        start = 0
        while start < len(items):
            end = start
            while end + 1 < len(items) and items[end + 1][1] == items[start][1]:
                end += 1
            text = _addindent(items[start][1], 2)
            if end == start:
                lines.append(f"({items[start][0]}): {text}")
            else:
                lines.append(f"({items[start][0]}-{items[end][0]}): {end - start + 1} x {text}")
            start = end + 1
        return lines


class ModuleDict(Module):
    """An ordered dict of submodules, registered so that ``parameters()`` etc. see them.

    Example:
        >>> heads = dl.nn.ModuleDict({"cls": dl.nn.Linear(8, 2), "reg": dl.nn.Linear(8, 1)})
        >>> list(heads.keys())
        ['cls', 'reg']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]
        changed(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()
        changed(self)

    def pop(self, key: str) -> Module:
        value = self[key]
        del self[key]
        return value

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add modules from a mapping or an iterable of ``(name, module)`` pairs."""
        if hasattr(modules, "keys"):
            for key in modules.keys():
                self[key] = modules[key]
            return
        for j, pair in enumerate(modules):
            if not hasattr(pair, "__len__") or len(pair) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} should be an iterable of length 2"
                )
            self[pair[0]] = pair[1]


def _as_parameter(value):
    """Tensors become Parameters (sharing storage), as torch's containers convert them."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of Parameters, registered under the names "0", "1", ...

    Example:
        >>> params = dl.nn.ParameterList([dl.nn.Parameter(dl.ones(2)) for _ in range(3)])
        >>> len(params), [name for name, _ in params.named_parameters()]
        (3, ['0', '1', '2'])
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def _key(self, index) -> str:
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range")
        return str(index % len(self))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList(list(self._parameters.values())[index])
        return self._parameters[self._key(index)]

    def __setitem__(self, index, value) -> None:
        self.register_parameter(self._key(index), _as_parameter(value))

    def append(self, value) -> "ParameterList":
        """Add ``value`` (a Parameter, or a Tensor made one) at the end; returns ``self``."""
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values) -> "ParameterList":
        """Append every value of an iterable; returns ``self``."""
        if not hasattr(values, "__iter__") or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]"
                         for i, p in enumerate(self))


class ParameterDict(Module):
    """An ordered dict of Parameters, registered under their keys.

    Example:
        >>> params = dl.nn.ParameterDict({"scale": dl.nn.Parameter(dl.ones(2))})
        >>> list(params.keys()), "scale" in params
        (['scale'], True)
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def __getitem__(self, key: str):
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key: str, default=None):
        return self._parameters.get(key, default)

    def pop(self, key: str):
        """Remove ``key`` and return its parameter."""
        return self._parameters.pop(key)

    def update(self, parameters) -> None:
        """Add the pairs of a mapping or an iterable of ``(key, value)``."""
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in items:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]"
                         for k, p in self.items())
