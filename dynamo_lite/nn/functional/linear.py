"""nn.functional linear maps: linear and bilinear."""
from __future__ import annotations

from ...ops.core import api as ops


__all__ = ["linear", "bilinear"]


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    Example:
        >>> F.bilinear(dl.ones(1, 2), dl.ones(1, 3), dl.ones(4, 2, 3)).tolist()
        [[6.0, 6.0, 6.0, 6.0]]
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for dim in range(input1.dim() - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: got "
                               f"{input1.shape[dim]} and {input2.shape[dim]}")
    if weight.dim() != 3 or weight.shape[1] != input1.shape[-1] or weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): weight of shape {list(weight.shape)} does not match inputs of sizes "
                           f"{input1.shape[-1]} and {input2.shape[-1]}")
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: ``(out_features,)`` or None.

    Example:
        >>> F.linear(dl.ones(2, 3), dl.ones(4, 3)).shape
        dl.Size([2, 4])
    """
    return ops.linear(input, weight, bias)
