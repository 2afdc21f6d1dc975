"""nn.functional normalizations: layer, batch, group, instance, rms, local response and normalize.

All are compositions of reductions and pointwise ops (see NOTE: [activations as
pointwise compositions]); statistics are biased (``correction=0``) for normalizing and
unbiased for the running variance, as torch keeps them. Running statistics are updated
in place, so a compiled graph carries the update as a mutation of the buffer.
"""
from __future__ import annotations

from ...ops.core import api as ops


__all__ = [
    "layer_norm", "local_response_norm", "batch_norm", "group_norm", "instance_norm", "normalize",
    "rms_norm",
]

#: Machine epsilon per floating dtype name: rms_norm's default ``eps``.
EPSILON = {"float16": 0.0009765625, "bfloat16": 0.0078125, "float32": 1.1920928955078125e-07,
           "float64": 2.220446049250313e-16}


def _channel_shape(input) -> tuple:
    """(1, C, 1, ...): how per-channel vectors broadcast against ``input``."""
    return (1, input.shape[1]) + (1,) * (input.dim() - 2)


def _affine(output, weight, bias, shape):
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    return output


def _update_running(running, batch_value, momentum) -> None:
    """``running = (1 - momentum) * running + momentum * batch_value``, in place."""
    running.mul_(1 - momentum).add_(batch_value.detach() * momentum)


def _check_stat(name, tensor, channels) -> None:
    if tensor is not None and tuple(tensor.shape) != (channels,):
        raise RuntimeError(f"{name} should contain {channels} elements not {tensor.numel()}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalize each channel (dim 1) by batch statistics (training) or running ones (eval).

    When training with running buffers given, they are updated in place with
    ``momentum`` (the running variance with the unbiased batch variance).

    Example:
        >>> x = dl.tensor([[1.0], [3.0]])
        >>> F.batch_norm(x, None, None, training=True).flatten().tolist()
        [-0.9999950..., 0.9999950...]
    """
    if input.dim() < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")
    channels = input.shape[1]
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var),
                         ("weight", weight), ("bias", bias)):
        _check_stat(name, tensor, channels)
    shape = _channel_shape(input)
    dims = (0,) + tuple(range(2, input.dim()))
    if training:
        count = input.numel() // channels
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        var, mean = ops.var_mean(input, dims, correction=0)
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * (count / (count - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, var = running_mean, running_var
    output = (input - mean.reshape(shape)) * ops.rsqrt(var.reshape(shape) + eps)
    return _affine(output, weight, bias, shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalize each (sample, channel) plane by its own mean and variance.

    Example:
        >>> F.instance_norm(dl.tensor([[[1.0, 3.0]]])).tolist()
        [[[-0.9999950..., 0.9999950...]]]
    """
    if input.dim() < 3:
        raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")
    shape = _channel_shape(input)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.dim()))
    count = 1
    for d in dims:
        count *= input.shape[d]
    if count <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    var, mean = ops.var_mean(input, dims, correction=0, keepdim=True)
    if running_mean is not None:
        _update_running(running_mean, mean.mean(0).flatten(), momentum)
    if running_var is not None:
        _update_running(running_var, (var * (count / (count - 1))).mean(0).flatten(), momentum)
    output = (input - mean) * ops.rsqrt(var + eps)
    return _affine(output, weight, bias, shape)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalize over groups of ``C / num_groups`` channels (and all spatial positions).

    Example:
        >>> F.group_norm(dl.tensor([[1.0, 3.0]]), 1).tolist()
        [[-0.9999950..., 0.9999950...]]
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    batch, channels = input.shape[0], input.shape[1]
    if channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and (tensor.dim() != 1 or tensor.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(tensor.shape)} and input of shape {list(input.shape)}")
    grouped = input.reshape(batch, num_groups, -1)
    var, mean = ops.var_mean(grouped, -1, correction=0, keepdim=True)
    output = ((grouped - mean) * ops.rsqrt(var + eps)).reshape(input.shape)
    return _affine(output, weight, bias, _channel_shape(input))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims.

    ``eps`` defaults to the machine epsilon of the input's dtype, as torch does.

    Example:
        >>> F.rms_norm(dl.tensor([[3.0, 4.0]]), (2,)).tolist()
        [[0.8485281..., 1.1313708...]]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    count = len(shape)
    if count == 0 or count > input.dim() or tuple(input.shape[input.dim() - count:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    if eps is None:
        eps = EPSILON[input.dtype.name] if input.is_floating_point() else EPSILON["float32"]
    dims = tuple(range(-count, 0))
    output = input * ops.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return output if weight is None else output * weight


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Example:
        >>> F.normalize(dl.tensor([[3.0, 4.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported")
    return input / ops.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``.

    Example:
        >>> F.layer_norm(dl.randn(2, 5), (5,)).shape
        dl.Size([2, 5])
    """
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """Divide each element by ``(k + alpha * mean of squares over ``size`` neighbouring channels) ** beta``.

    Example:
        >>> F.local_response_norm(dl.ones(1, 3, 1), 3, alpha=3.0, beta=1.0, k=0.0).flatten().tolist()
        [0.5, 0.3333333432674408, 0.5]
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = (input * input).transpose(0, 1)  # channels first: the window slides along dim 0
    padded = ops.constant_pad_nd(squares.unsqueeze(0), (0, 0) * (input.dim() - 1) + (size // 2, (size - 1) // 2),
                                 0)[0]
    total = padded.narrow(0, 0, channels)
    for offset in range(1, size):
        total = total + padded.narrow(0, offset, channels)
    div = (total / size).transpose(0, 1).mul(alpha).add(k).pow(beta)
    return input / div
