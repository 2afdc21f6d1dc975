"""nn.utils.parameters_to_vector / vector_to_parameters: all parameters as one flat vector and back."""
from __future__ import annotations

from ...ops.core.api import cat
from ...tensor.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated, in order, into one 1-d tensor (differentiable).

    Example:
        >>> parameters_to_vector(dl.nn.Linear(3, 2).parameters()).shape
        dl.Size([8])
    """
    return cat([param.reshape(-1) for param in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into the parameters' data, in order.

    Example:
        >>> layer = dl.nn.Linear(3, 2)
        >>> vector_to_parameters(dl.zeros(8), layer.parameters())
        >>> layer.bias.tolist()
        [0.0, 0.0]
    """
    if not isinstance(vec, Tensor):
        kind = type(vec)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    offset = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[offset:offset + count].view_as(param).data
        offset += count
