"""Derivatives of layer_norm, embedding, embedding_bag and dropout."""
from __future__ import annotations

import numpy as np

from ...ops.nn.embedding_bags import MODES
from ...tensor.interop import from_numpy
from .helpers import OPS, zeros_of
from .table import decomposition, derivative


@derivative("layer_norm", saves=("input", "weight"))
def layer_norm_backward(grad, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    centered = OPS["sub"](input, OPS["mean"](input, dim=dims, keepdim=True))
    variance = OPS["mean"](OPS["mul"](centered, centered), dim=dims, keepdim=True)
    rstd = OPS["rsqrt"](OPS["add"](variance, eps))
    normalized = OPS["mul"](centered, rstd)
    scaled = grad if weight is None else OPS["mul"](grad, weight)
    grad_input = OPS["mul"](rstd, OPS["sub"](
        OPS["sub"](scaled, OPS["mean"](scaled, dim=dims, keepdim=True)),
        OPS["mul"](normalized, OPS["mean"](OPS["mul"](scaled, normalized), dim=dims, keepdim=True)),
    ))
    grad_weight = None if weight is None else OPS["mul"](grad, normalized)
    return grad_input, None, grad_weight, grad


def _dropout_mask(input, p, training, generator):
    ones = OPS["ones_like"](input, dtype=input._dtype, device=input._device)
    return OPS["dropout"](ones, p, training, generator=generator)  # the same draw, scaled by 1/(1-p)


@decomposition("dropout")
def dropout(input, p, training=True, *, generator=None):
    # input * (the op applied to ones): the same values as the op (x * keep * scale rounds
    # once either way), and a mask that mul's formula differentiates exactly
    return OPS["mul"](input, _dropout_mask(input, p, training, generator))


@decomposition("dropout_")
def dropout_(input, p, training=True, *, generator=None):
    return OPS["mul_"](input, _dropout_mask(input, p, training, generator))


@derivative("embedding_bag", saves=("indices", "offsets", "per_sample_weights", "weight"))
def embedding_bag_backward(grad, weight, indices, offsets, mode, per_sample_weights=None, include_last_offset=False,
                           padding_idx=-1):
    # every index's row receives its bag's gradient, scaled by its per-sample weight (sum)
    # or 1/bag size (mean); indices equal to padding_idx take no part
    if mode == MODES["max"]:
        raise NotImplementedError("the gradient of embedding_bag(mode='max') is not supported")
    bounds = [int(v) for v in offsets.tolist()]
    if not include_last_offset:
        bounds.append(indices._sizes[0])
    keep = [int(i) != padding_idx for i in indices.tolist()]
    bag_of, scale = [], []
    for bag, (start, end) in enumerate(zip(bounds, bounds[1:])):
        count = sum(keep[start:end])
        for position in range(start, end):
            bag_of.append(bag)
            scale.append((1.0 / count if mode == MODES["mean"] else 1.0) if keep[position] else 0.0)
    rows = OPS["index_select"](grad, 0, from_numpy(np.array(bag_of, dtype=np.int64)))
    factors = from_numpy(np.array(scale, dtype=grad._dtype.numpy))
    grad_weights = None
    if per_sample_weights is not None:
        grad_weights = OPS["mul"](OPS["sum"](OPS["mul"](rows, OPS["index_select"](weight, 0, indices)), dim=(1,)),
                                  factors)
        factors = OPS["mul"](factors, per_sample_weights)
    contributions = OPS["mul"](rows, OPS["unsqueeze"](factors, 1))
    grad_weight = OPS["index_put_"](zeros_of(weight, grad._dtype), (indices,), contributions, accumulate=True)
    return grad_weight, None, None, None, grad_weights
