"""Neural-network ops: layer_norm, embedding and dropout (sliding-window ops live in conv.py)."""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import int32, int64
from ...tensor.generator import default_generator
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["layer_norm", "embedding", "dropout"]


# -- layer_norm ---------------------------------------------------------------------------
def layer_norm_meta(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape = tuple(normalized_shape)
    count = len(normalized_shape)
    if count == 0 or input._sizes[len(input._sizes) - count:] != normalized_shape or count > len(input._sizes):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input._sizes)}"
        )
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and param._sizes != normalized_shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(param._sizes)} and normalized_shape = {list(normalized_shape)}"
            )
    mr.check_floating(input, "LayerNormKernelImpl")
    mr.common_device([t for t in (input, weight, bias) if t is not None])
    return mr.same_meta(input)


def layer_norm_kernel(xp, x, normalized_shape, weight=None, bias=None, eps=1e-5, *, out):
    if out.size == 0:
        return out
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    work = out if out.dtype != np.float16 else xp.empty(out.shape, dtype=np.float32)
    # Two-pass statistics (mean first, then the mean of squared deviations): stable.
    xp.subtract(x, xp.mean(x, axis=axes, keepdims=True, dtype=work.dtype), out=work, dtype=work.dtype,
                casting="unsafe")
    variance = xp.mean(xp.square(work), axis=axes, keepdims=True)
    variance += eps
    work *= 1.0 / xp.sqrt(variance)
    if weight is not None:
        work *= weight
    if bias is not None:
        work += bias
    if work is not out:
        out[...] = work
    return out


# -- embedding ----------------------------------------------------------------------------
def embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices._dtype not in (int32, int64):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {mr.TYPE_NAMES[indices._dtype]} tensor instead (while checking "
            "arguments for embedding)"
        )
    if len(weight._sizes) != 2:
        raise RuntimeError("'weight' must be 2-D")
    mr.common_device((weight, indices))
    return mr.make_meta(indices._sizes + weight._sizes[1:], weight._dtype, None, weight._device)


def embedding_kernel(xp, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False, *, out):
    if indices.size:
        if int(indices.min()) < 0 or int(indices.max()) >= weight.shape[0]:
            raise IndexError("index out of range in self")
        if xp is np:  # indices are checked, so "clip" lets take write into out without buffering
            np.take(weight, indices, axis=0, out=out, mode="clip")
        else:
            xp.take(weight, indices, axis=0, out=out)
    return out


# -- dropout ------------------------------------------------------------------------------
def dropout_meta(input, p, training=True, *, generator=None):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not input._dtype.is_floating_point:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {mr.TYPE_NAMES[input._dtype]}"
        )
    return mr.make_meta(input._sizes, input._dtype, mr.pointwise_strides(input._sizes, [input]), input._device)


def dropout_kernel(xp, x, p, training=True, *, out, generator=None):
    if not training or p == 0:
        if x is not out:
            xp.copyto(out, x)
        return out
    generator = generator or default_generator
    if isinstance(x, np.ndarray):
        uniform = generator.numpy.random(x.shape, dtype=np.float32)
    else:
        import cupy

        uniform = generator.cupy_random_state(cupy).random_sample(x.shape, dtype=np.float32)
    keep = uniform >= p
    xp.multiply(x, keep, out=out, dtype=out.dtype, casting="unsafe")
    out *= 0.0 if p == 1 else 1.0 / (1.0 - p)
    return out


NN_OPS = {
    "layer_norm": (layer_norm_meta, layer_norm_kernel, ("normalization",)),
    "embedding": (embedding_meta, embedding_kernel, ()),
    "dropout": (dropout_meta, dropout_kernel, ("random",)),
    "dropout_": (mr.inplace_variant(dropout_meta), dropout_kernel, ("random", "inplace")),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=tags) for name, (meta, kernel, tags) in NN_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims, then scale by ``weight`` and shift by ``bias``.

    Example:
        >>> [round(v, 3) for v in dl.layer_norm(dl.tensor([[1.0, 3.0]]), (2,))[0].tolist()]
        [-1.0, 1.0]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    args = [input, shape]
    if weight is not None or bias is not None:
        args += [weight, bias]
    return OPS["layer_norm"](*args) if eps == 1e-5 else OPS["layer_norm"](input, shape, weight, bias, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer tensor ``indices`` (torch.embedding's argument order).

    Example:
        >>> dl.embedding(dl.eye(3), dl.tensor([2, 0])).tolist()
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    return OPS["embedding"](weight, indices) if padding_idx == -1 else OPS["embedding"](weight, indices, padding_idx)


def dropout(input, p=0.5, training=True, inplace=False, *, generator=None):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    When not training (or ``p == 0``) the input itself is returned, as torch does. The
    mask is drawn from ``generator`` (the default generator unless given), so
    ``dl.manual_seed`` reproduces it.

    Example:
        >>> x = dl.ones(4)
        >>> dl.dropout(x, 0.5, training=False) is x
        True
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    op = OPS["dropout_"] if inplace else OPS["dropout"]
    return op(input, p, training, generator=generator or default_generator)


METHODS: dict = {}
