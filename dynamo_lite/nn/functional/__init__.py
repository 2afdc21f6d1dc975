"""dl.nn.functional: the layers' computations as functions (thin wrappers over registry ops).

NOTE: [functional wrappers] Every function here only adapts torch.nn.functional's
signature (argument order, defaults such as ``padding_idx=None``, an implicit softmax
dim) and calls the public ``dl.*`` functions, which normalise geometry and call the
registry ops; none touches array data. The compiler therefore
traces straight through them (see NOTE: [tracing through library code]), and the
layers' ``forward`` methods, which call these, inline into one graph.
"""
from __future__ import annotations

import warnings

import dynamo_lite as dl

from . import functional_padding


__all__ = [
    "avg_pool2d", "conv2d", "dropout", "embedding", "gelu", "layer_norm", "linear", "log_softmax",
    "max_pool2d", "one_hot", "pad", "relu", "relu_", "sigmoid", "silu", "softmax", "tanh",
]


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
    return dl.linear(input, weight, bias)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-d cross-correlation of an ``(N, C, H, W)`` (or ``(C, H, W)``) input.

    channels_last inputs give channels_last outputs.

    Args:
        input, weight: ``(N, C_in, H, W)`` and ``(C_out, C_in / groups, kh, kw)``.
        bias: ``(C_out,)`` or None.
        stride, dilation: int or pair.
        padding: int, pair, ``"valid"`` or ``"same"`` (stride 1 only).
        groups: number of channel groups.

    Example:
        >>> F.conv2d(dl.randn(1, 3, 8, 8), dl.randn(4, 3, 3, 3), padding=1).shape
        dl.Size([1, 4, 8, 8])
    """
    return dl.conv2d(input, weight, bias, stride, padding, dilation, groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over sliding windows of each channel plane (``stride`` defaults to ``kernel_size``).

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``; channels_last inputs give channels_last outputs.
        kernel_size: int or pair.
        padding, dilation: int or pair (padding counts as -inf).
        ceil_mode: ceil instead of floor for the output size.
        return_indices: also return the flat argmax index within each plane.

    Example:
        >>> F.max_pool2d(dl.randn(1, 1, 4, 4), 2).shape
        dl.Size([1, 1, 2, 2])
    """
    return dl.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """Mean over sliding windows of each channel plane (``stride`` defaults to ``kernel_size``).

    Example:
        >>> F.avg_pool2d(dl.ones(1, 1, 4, 4), 2).shape
        dl.Size([1, 1, 2, 2])
    """
    return dl.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``.

    Example:
        >>> F.layer_norm(dl.randn(2, 5), (5,)).shape
        dl.Size([2, 5])
    """
    return dl.layer_norm(input, normalized_shape, weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of ``weight`` selected by the integer tensor ``input``: shape ``input.shape + (dim,)``.

    Example:
        >>> F.embedding(dl.tensor([0, 2]), dl.randn(3, 4)).shape
        dl.Size([2, 4])
    """
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) is not supported")
    if padding_idx is None:
        padding_idx = -1
    else:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % rows
    return dl.embedding(weight, input, padding_idx)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero elements with probability ``p`` (scaling the rest by ``1/(1-p)``) when training.

    Returns ``input`` itself when not training or ``p == 0``. The mask comes from the
    default generator, so ``dl.manual_seed`` reproduces it.

    Example:
        >>> x = dl.ones(4)
        >>> F.dropout(x, 0.5, training=False) is x
        True
    """
    return dl.dropout(input, p, training, inplace)


def relu(input, inplace: bool = False):
    """``max(input, 0)``; in place with ``inplace=True``.

    Example:
        >>> F.relu(dl.tensor([-1.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """In-place ``relu``."""
    return input.relu_()


def gelu(input, approximate: str = "none"):
    """GELU: ``x * Phi(x)`` exactly (``"none"``) or with the tanh approximation (``"tanh"``).

    Example:
        >>> F.gelu(dl.zeros(1), approximate="tanh").tolist()
        [0.0]
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return dl.gelu(input, approximate)


def silu(input, inplace: bool = False):
    """``x * sigmoid(x)``.

    Example:
        >>> F.silu(dl.zeros(1)).tolist()
        [0.0]
    """
    if inplace:
        return input.copy_(dl.silu(input))
    return dl.silu(input)


def sigmoid(input):
    """``1 / (1 + exp(-x))``."""
    return input.sigmoid()


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def _softmax_dim(ndim: int) -> int:
    warnings.warn(
        "Implicit dimension choice for softmax has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, computed stably; optionally in ``dtype``.

    Example:
        >>> F.softmax(dl.zeros(2, 2), dim=-1).tolist()
        [[0.5, 0.5], [0.5, 0.5]]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return dl.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``log(softmax(x))``, computed stably.

    Example:
        >>> F.log_softmax(dl.zeros(1, 2), dim=1).exp().tolist()
        [[0.5, 0.5]]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return dl.log_softmax(input, dim, dtype)


def one_hot(tensor, num_classes: int = -1):
    """``int64`` one-hot encoding along a new last dim of size ``num_classes``.

    ``num_classes=-1`` infers ``tensor.max() + 1``, which reads data (a graph break
    when compiled); pass it explicitly in hot code.

    Example:
        >>> F.one_hot(dl.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    if tensor.dtype != dl.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    classes = dl.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(dl.int64)


def pad(input, pad, mode: str = "constant", value=None):
    """Pad trailing dims: ``pad = (left_last, right_last, left_2nd_last, ...)``; ``mode`` is
    ``"constant"`` (with ``value``), ``"reflect"``, ``"replicate"`` or ``"circular"``.

    Example:
        >>> F.pad(dl.ones(1, 2), (1, 1)).tolist()
        [[0.0, 1.0, 1.0, 0.0]]
    """
    if mode != "constant":
        return functional_padding.pad_by_index(input, pad, mode)
    return dl.constant_pad_nd(input, pad, 0 if value is None else value)


# The rest of torch.nn.functional, one module per family.
from .functional_activation import *  # noqa: E402,F401,F403
from .functional_attention import *  # noqa: E402,F401,F403
from .functional_image import *  # noqa: E402,F401,F403
from .functional_loss import *  # noqa: E402,F401,F403
from .functional_norm import *  # noqa: E402,F401,F403
from . import functional_activation, functional_attention, functional_image, functional_norm  # noqa: E402
from . import functional_loss  # noqa: E402

__all__ += (functional_activation.__all__ + functional_attention.__all__ + functional_image.__all__
            + functional_norm.__all__ + functional_loss.__all__)
from . import functional_ctc  # noqa: E402
from .functional_ctc import ctc_loss  # noqa: E402,F401

__all__ += functional_ctc.__all__
from . import functional_grid  # noqa: E402
from .functional_grid import affine_grid, grid_sample  # noqa: E402,F401

__all__ += functional_grid.__all__

from .functional_activation_extra import *  # noqa: E402,F401,F403
from .functional_dropout import *  # noqa: E402,F401,F403
from .functional_likelihood_loss import *  # noqa: E402,F401,F403
from .functional_margin_loss import *  # noqa: E402,F401,F403
from . import functional_activation_extra, functional_dropout, functional_likelihood_loss  # noqa: E402
from . import functional_margin_loss  # noqa: E402

__all__ += (functional_activation_extra.__all__ + functional_dropout.__all__ + functional_likelihood_loss.__all__
            + functional_margin_loss.__all__)

from .functional_channel import *  # noqa: E402,F401,F403
from .functional_pooling_extra import *  # noqa: E402,F401,F403
from . import functional_channel, functional_pooling_extra  # noqa: E402

__all__ += functional_channel.__all__ + functional_pooling_extra.__all__
