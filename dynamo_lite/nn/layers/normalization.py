"""LayerNorm: normalisation over the trailing dimensions."""
from __future__ import annotations

import numbers

import dynamo_lite as dl

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dims, then scale and shift.

    Args:
        normalized_shape: an int or the trailing shape to normalise over.
        eps: added to the variance for numerical stability.
        elementwise_affine: learn a per-element ``weight`` (ones) and ``bias`` (zeros).
        bias: whether the affine part has a bias.
        device, dtype: where and how the parameters are allocated.

    Example:
        >>> ln = dl.nn.LayerNorm(10)
        >>> ln(dl.randn(20, 5, 10)).shape
        dl.Size([20, 5, 10])
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(dl.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(dl.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
