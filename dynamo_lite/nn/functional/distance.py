"""nn.functional normalizations (batch, group, instance, rms, normalize) and cosine / pairwise distances.

All are compositions of reductions and pointwise ops (see NOTE: [activations as
pointwise compositions]); statistics are biased (``correction=0``) for normalizing and
unbiased for the running variance, as torch keeps them. Running statistics are updated
in place, so a compiled graph carries the update as a mutation of the buffer.
"""
from __future__ import annotations

from ..ops import api as ops
from ..tensor.layout import broadcast_shapes

__all__ = ["batch_norm", "cosine_similarity", "group_norm", "instance_norm", "normalize", "pairwise_distance",
           "rms_norm"]

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


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast together).

    Each side is divided by its norm (at least ``eps``) before the dot product, as torch does.

    Example:
        >>> F.cosine_similarity(dl.tensor([[1.0, 0.0]]), dl.tensor([[1.0, 1.0]])).tolist()
        [0.7071067...]
    """
    x1, x2 = _broadcast(x1, x2)
    x1_norm = ops.norm(x1, 2, dim, keepdim=True).clamp_min(eps)
    x2_norm = ops.norm(x2, 2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


def _broadcast(x1, x2):
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    return x1.expand(shape), x2.expand(shape)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (inputs broadcast together).

    Example:
        >>> F.pairwise_distance(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]])).tolist()
        [4.99998...]
    """
    difference = x1 - x2 + eps
    return ops.norm(difference, p, max(difference.dim() - 1, 0) if difference.dim() else None, keepdim)
