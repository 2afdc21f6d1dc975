"""nn.functional pooling: max/avg over 1-d and 2-d windows, adaptive pooling, power-average (lp)
pooling and max-unpooling.

NOTE: [1-d pooling over a unit dim] A 1-d pool of ``(N, C, L)`` is the 2-d pool of
``(N, C, 1, L)`` with a ``(1, k)`` window: the same windows, the same arithmetic and, for
max pooling, the same flat indices (a plane of height 1 is indexed by its column), so
the results are exact, and the compiler and backends need nothing new.
"""
from __future__ import annotations

from ...ops.core import api as ops


__all__ = [
    "avg_pool2d", "max_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "avg_pool1d", "lp_pool1d", "lp_pool2d", "max_pool1d", "max_unpool1d",
    "max_unpool2d",
]


def _single(value, name: str) -> int:
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"{name} must be a single int, or a tuple of one int")
        return value[0]
    return value


def _pair(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


#: name -> the message of a 1-d pool given an input that is not ``(C, L)`` or ``(N, C, L)`` (rank, shape).
_RANK_MESSAGES = {
    "max_pool1d": "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                  "got:{shape}",
    "avg_pool1d": "Expected 2 to 3 dimensions, but got {rank}-dimensional tensor for argument #1 'self' (while "
                  "checking arguments for avg_pool1d)",
    "adaptive_avg_pool1d": "adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {shape}",
    "adaptive_max_pool1d": "adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {shape}",
}


def _check_sequence_rank(input, name: str) -> None:
    if input.dim() not in (2, 3):
        shape = "[" + ", ".join(str(size) for size in input.shape) + "]"
        raise RuntimeError(_RANK_MESSAGES[name].format(shape=shape, rank=input.dim()))


def _as_plane(window, name: str) -> tuple:
    """A 1-d ``window`` argument as the 2-d one over a unit height."""
    return (1, _single(window, name))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over sliding windows of ``(N, C, L)`` or ``(C, L)`` (``stride`` defaults to ``kernel_size``).

    Example:
        >>> F.max_pool1d(dl.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[3.0, 2.0]]
    """
    _check_sequence_rank(input, "max_pool1d")
    stride = kernel_size if stride is None or stride == [] else stride
    result = ops.max_pool2d(input.unsqueeze(-2), _as_plane(kernel_size, "kernel_size"), _as_plane(stride, "stride"),
                            (0, _single(padding, "padding")), _as_plane(dilation, "dilation"), ceil_mode,
                            return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    """Mean over sliding windows of ``(N, C, L)`` or ``(C, L)`` (``stride`` defaults to ``kernel_size``).

    Example:
        >>> F.avg_pool1d(dl.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[2.0, 1.0]]
    """
    _check_sequence_rank(input, "avg_pool1d")
    stride = kernel_size if stride is None or stride == [] else stride
    return ops.avg_pool2d(input.unsqueeze(-2), _as_plane(kernel_size, "kernel_size"), _as_plane(stride, "stride"),
                          (0, _single(padding, "padding")), ceil_mode, count_include_pad, None).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Average-pool ``(N, C, L)`` or ``(C, L)`` to length ``output_size`` with adaptive windows.

    Example:
        >>> F.adaptive_avg_pool1d(dl.tensor([[1.0, 3.0, 2.0, 0.0]]), 1).tolist()
        [[1.5]]
    """
    _check_sequence_rank(input, "adaptive_avg_pool1d")
    return ops.adaptive_avg_pool2d(input.unsqueeze(-2), (1, _single(output_size, "output_size"))).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max-pool ``(N, C, L)`` or ``(C, L)`` to length ``output_size`` (and the argmax positions).

    Example:
        >>> F.adaptive_max_pool1d(dl.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[3.0, 2.0]]
    """
    _check_sequence_rank(input, "adaptive_max_pool1d")
    result = ops.adaptive_max_pool2d(input.unsqueeze(-2), (1, _single(output_size, "output_size")), return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def _power_average(pooled, window: int, norm_type: float):
    """``(window * mean of x**p) ** (1/p)``, negative means clamped to 0 as torch does."""
    return (ops.sign(pooled) * ops.relu(ops.abs(pooled))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False):
    """Power-average pooling ``(sum of x**p over a window) ** (1/p)`` of ``(N, C, L)``; ``p = inf`` is max pooling.

    Example:
        >>> F.lp_pool1d(dl.tensor([[3.0, 4.0]]), 2, 2).tolist()
        [[5.0]]
    """
    if norm_type == float("inf"):
        return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == float("-inf"):
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    pooled = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _power_average(pooled, _single(kernel_size, "kernel_size"), norm_type)


def lp_pool2d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """Power-average pooling over 2-d windows of ``(N, C, H, W)``; ``p = inf`` is max pooling.

    Example:
        >>> F.lp_pool2d(dl.full((1, 1, 2, 2), 2.0), 1, 2).tolist()
        [[[[8.0]]]]
    """
    if norm_type == float("inf"):
        return ops.max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == float("-inf"):
        return -ops.max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    height, width = _pair(kernel_size)
    pooled = ops.avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode, True, None)
    return _power_average(pooled, height * width, norm_type)


def _unpool_size(input, kernel_size: tuple, stride: tuple, padding: tuple, output_size) -> tuple:
    """The spatial output size of max-unpooling: the pooled input's size, or ``output_size`` when it fits."""
    spatial = len(kernel_size)
    default = [(input.shape[input.dim() - spatial + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(spatial)]
    if output_size is None:
        return tuple(default)
    if len(output_size) == spatial + 2:
        output_size = output_size[2:]
    if len(output_size) != spatial:
        raise ValueError(f"output_size should be a sequence containing {spatial} or {spatial + 2} elements, but it "
                         f"has a length of '{len(output_size)}'")
    for d in range(spatial):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return tuple(output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place each value of a max-pooled ``(N, C, H, W)`` at its ``indices`` (flat, per plane) in a zero plane.

    Example:
        >>> pooled, where = F.max_pool2d(dl.tensor([[[[1.0, 2.0], [4.0, 3.0]]]]), 2, return_indices=True)
        >>> F.max_unpool2d(pooled, where, 2).tolist()
        [[[[0.0, 0.0], [4.0, 0.0]]]]
    """
    kernel_size = _pair(kernel_size)
    stride = kernel_size if stride is None else _pair(stride)
    height, width = _unpool_size(input, kernel_size, stride, _pair(padding), output_size)
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    lead = tuple(input.shape[:-2])
    planes = ops.zeros(lead + (height * width,), dtype=input.dtype, device=input.device)
    flat = lead + (-1,)
    return planes.scatter(-1, indices.reshape(flat), input.reshape(flat)).reshape(lead + (height, width))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place each value of a max-pooled ``(N, C, L)`` at its ``indices`` in a zero sequence.

    Example:
        >>> pooled, where = F.max_pool1d(dl.tensor([[1.0, 2.0, 4.0, 3.0]]), 2, return_indices=True)
        >>> F.max_unpool1d(pooled, where, 2).tolist()
        [[0.0, 2.0, 4.0, 0.0]]
    """
    kernel = (_single(kernel_size, "kernel_size"),)
    step = kernel if stride is None else (_single(stride, "stride"),)
    (length,) = _unpool_size(input, kernel, step, (_single(padding, "padding"),), output_size)
    return max_unpool2d(input.unsqueeze(-2), indices.unsqueeze(-2), (1, kernel[0]), (1, step[0]), 0,
                        (1, length)).squeeze(-2)


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
    return ops.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """Mean over sliding windows of each channel plane (``stride`` defaults to ``kernel_size``).

    Example:
        >>> F.avg_pool2d(dl.ones(1, 1, 4, 4), 2).shape
        dl.Size([1, 1, 2, 2])
    """
    return ops.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool2d(input, output_size):
    """Average-pool to ``output_size`` (int or pair; None keeps that dim) with adaptive windows.

    Example:
        >>> F.adaptive_avg_pool2d(dl.randn(2, 3, 7, 5), (1, 1)).shape
        dl.Size([2, 3, 1, 1])
    """
    return ops.adaptive_avg_pool2d(input, output_size)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max-pool to ``output_size`` with adaptive windows (and the flat argmax per plane).

    Example:
        >>> F.adaptive_max_pool2d(dl.randn(1, 3, 8, 8), 2).shape
        dl.Size([1, 3, 2, 2])
    """
    return ops.adaptive_max_pool2d(input, output_size, return_indices)
