"""dl.nn.functional: the layers' computations as functions (thin wrappers over registry ops).

NOTE: [functional wrappers] Every function here only normalises arguments (int-or-pair
geometry, defaults, ``training=False`` short-cuts) and calls registry ops or the public
``dl.*`` functions built on them; none touches array data. The compiler therefore
traces straight through them (see NOTE: [tracing through library code]), and the
layers' ``forward`` methods, which call these, inline into one graph.
"""
from __future__ import annotations

import warnings

import dynamo_lite as dl

from .utils import pair

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
    return dl.ops.linear(input, weight, bias)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-d cross-correlation of an ``(N, C, H, W)`` (or ``(C, H, W)``) input.

    Args:
        input, weight: ``(N, C_in, H, W)`` and ``(C_out, C_in / groups, kh, kw)``.
        bias: ``(C_out,)`` or None.
        stride, dilation: int or pair.
        padding: int, pair, ``"valid"`` or ``"same"``.
        groups: number of channel groups.

    Example:
        >>> F.conv2d(dl.randn(1, 3, 8, 8), dl.randn(4, 3, 3, 3), padding=1).shape
        dl.Size([1, 4, 8, 8])
    """
    stride, dilation = pair(stride), pair(dilation)
    padding = _conv_padding(padding, tuple(weight.shape[2:]), stride, dilation)
    return dl.ops.conv2d(input, weight, bias, stride, padding, dilation, groups)


def _conv_padding(padding, kernel, stride, dilation) -> tuple:
    """Resolve ``"valid"``/``"same"`` to explicit symmetric padding."""
    if not isinstance(padding, str):
        return pair(padding)
    if padding == "valid":
        return (0, 0)
    if padding != "same":
        raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
    if any(s != 1 for s in stride):
        raise ValueError("padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    if any(t % 2 for t in totals):
        raise NotImplementedError("padding='same' needs an even total padding (odd effective kernel size)")
    return tuple(t // 2 for t in totals)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over sliding windows of each channel plane.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``; channels_last inputs give channels_last outputs.
        kernel_size: int or pair; ``stride`` defaults to it.
        padding, dilation: int or pair.
        ceil_mode: ceil instead of floor for the output size.
        return_indices: also return flat argmax indices per plane.

    Example:
        >>> F.max_pool2d(dl.randn(1, 1, 4, 4), 2).shape
        dl.Size([1, 1, 2, 2])
    """
    kernel = pair(kernel_size)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else pair(stride)
    if return_indices:
        return dl.ops.max_pool2d_with_indices(input, kernel, stride, pair(padding), pair(dilation), ceil_mode)
    return dl.ops.max_pool2d(input, kernel, stride, pair(padding), pair(dilation), ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """Mean over sliding windows of each channel plane.

    Example:
        >>> F.avg_pool2d(dl.ones(1, 1, 4, 4), 2).shape
        dl.Size([1, 1, 2, 2])
    """
    kernel = pair(kernel_size)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else pair(stride)
    return dl.ops.avg_pool2d(input, kernel, stride, pair(padding), ceil_mode, count_include_pad, divisor_override)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``.

    Example:
        >>> F.layer_norm(dl.randn(2, 5), (5,)).shape
        dl.Size([2, 5])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return dl.ops.layer_norm(input, tuple(normalized_shape), weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of ``weight`` selected by the integer tensor ``input``: shape ``input.shape + (dim,)``.

    Example:
        >>> F.embedding(dl.tensor([0, 2]), dl.randn(3, 4)).shape
        dl.Size([2, 4])
    """
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) is not supported")
    if padding_idx is not None:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % rows
    return dl.ops.embedding(weight, input, -1 if padding_idx is None else padding_idx)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero elements with probability ``p`` (scaling the rest by ``1/(1-p)``) when training.

    Returns ``input`` itself when not training or ``p == 0``.

    Example:
        >>> x = dl.ones(4)
        >>> F.dropout(x, 0.5, training=False) is x
        True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if inplace:
        return dl.ops.dropout_(input, p, training)
    return dl.ops.dropout(input, p, training)


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
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``log(softmax(x))``, computed stably.

    Example:
        >>> F.log_softmax(dl.zeros(1, 2), dim=1).exp().tolist()
        [[0.5, 0.5]]
    """
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.log_softmax(dim, dtype=dtype)


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
    """Pad trailing dims: ``pad = (left_last, right_last, left_2nd_last, ...)``; constant mode only.

    Example:
        >>> F.pad(dl.ones(1, 2), (1, 1)).tolist()
        [[0.0, 1.0, 1.0, 0.0]]
    """
    if mode != "constant":
        raise NotImplementedError(f"pad(mode={mode!r}) is not supported; only 'constant'")
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length must be divisible by 2 and at most twice the number of dims")
    return dl.ops.constant_pad_nd(input, tuple(int(p) for p in pad), 0 if value is None else value)
