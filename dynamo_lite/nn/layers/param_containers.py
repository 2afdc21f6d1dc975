"""ParameterList and ParameterDict: modules that hold parameters by position or by name."""
from __future__ import annotations

import operator

from ...tensor.tensor import Tensor
from ..module import Module
from ..parameter import Parameter


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
