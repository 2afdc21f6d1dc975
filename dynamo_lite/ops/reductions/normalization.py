"""Ops that normalize or accumulate along a dim: softmax, log_softmax, logsumexp, cumsum, cumprod.

Tags: softmax and log_softmax are ``normalization`` (output shaped like the input,
computed with reductions along ``dim``; never fused as pointwise), logsumexp is a
``reduction`` and cumsum/cumprod are ``scan``. All outputs are contiguous, as torch
allocates them.
"""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import int64
from ...tensor.layout import normalize_dim
from ..core import meta_rules as mr
from ..core.kernel_utils import quiet
from ..core.registry import register_op

__all__ = ["softmax", "log_softmax", "logsumexp", "cumsum", "cumprod"]


# -- meta rules ---------------------------------------------------------------------------
def softmax_meta(name):
    def meta(input, dim, dtype=None):
        result = dtype or input._dtype
        if not result.is_floating_point and mr.layout.prod(input._sizes):
            kind = "lastdim_kernel_impl" if dim == len(input._sizes) - 1 else "kernel_impl"
            raise NotImplementedError(f"\"{name}_{kind}\" not implemented for '{mr.TYPE_NAMES[result]}'")
        return mr.same_meta(input, result)

    return meta


def logsumexp_meta(input, dim, keepdim=False):
    return mr.reduction_meta(input, dim, keepdim, mr.float_dtype(input._dtype))


def scan_meta(input, dim, dtype=None):
    return mr.same_meta(input, dtype or (input._dtype if input._dtype.is_floating_point else int64))


# -- kernels ------------------------------------------------------------------------------
def _work_buffer(xp, out):
    """Where to compute: ``out`` itself, or a float32 scratch array for float16 outputs."""
    return out if out.dtype != np.float16 else xp.empty(out.shape, dtype=np.float32)


def _shifted(xp, x, dim, work):
    """``x - max(x, dim)`` into ``work`` (in ``work``'s dtype): the stable softmax input."""
    if x.ndim == 0:
        dim = None
    xp.subtract(x, xp.amax(x, axis=dim, keepdims=True), out=work, dtype=work.dtype, casting="unsafe")
    return dim


def softmax_kernel(xp, x, dim, dtype=None, *, out):
    if x.size == 0:
        return out
    work = _work_buffer(xp, out)
    with quiet(xp):
        dim = _shifted(xp, x, dim, work)
        xp.exp(work, out=work)
        work /= xp.sum(work, axis=dim, keepdims=True)
    if work is not out:
        out[...] = work
    return out


def log_softmax_kernel(xp, x, dim, dtype=None, *, out):
    if x.size == 0:
        return out
    work = _work_buffer(xp, out)
    with quiet(xp):
        dim = _shifted(xp, x, dim, work)
        work -= xp.log(xp.sum(xp.exp(work), axis=dim, keepdims=True))
    if work is not out:
        out[...] = work
    return out


def logsumexp_kernel(xp, x, dim, keepdim=False, *, out):
    compute = np.float32 if out.dtype == np.float16 else out.dtype
    x = x.astype(compute, copy=False)
    if x.size == 0:
        out[...] = -np.inf
        return out
    with quiet(xp):
        peak = xp.amax(x, axis=dim, keepdims=True)
        # An all -inf (or +inf) slice must not produce inf - inf = nan: shift by 0 there.
        peak = xp.where(xp.isinf(peak), 0, peak)
        total = xp.sum(xp.exp(x - peak), axis=dim, keepdims=True)
        result = xp.log(total) + peak
    out[...] = result if keepdim else result.reshape(out.shape)
    return out


def _scan_kernel(scan):
    def kernel(xp, x, dim, dtype=None, *, out):
        if x.ndim == 0:
            out[...] = x
            return out
        if out.dtype == np.float16:  # accumulate half in float32, as torch does
            out[...] = scan(x, axis=dim, dtype=np.float32)
            return out
        return scan(x, axis=dim, dtype=out.dtype, out=out)

    return kernel


# -- registration -------------------------------------------------------------------------
NORMALIZATION_OPS = {
    "softmax": (softmax_meta("softmax"), softmax_kernel, ("normalization",)),
    "log_softmax": (softmax_meta("log_softmax"), log_softmax_kernel, ("normalization",)),
    "logsumexp": (logsumexp_meta, logsumexp_kernel, ("reduction",)),
    "cumsum": (scan_meta, _scan_kernel(np.cumsum), ("scan",)),
    "cumprod": (scan_meta, _scan_kernel(np.cumprod), ("scan",)),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=tags) for name, (meta, kernel, tags) in NORMALIZATION_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def _with_dtype(name, input, dim, dtype):
    dim = normalize_dim(dim, input.ndim)
    return OPS[name](input, dim) if dtype is None else OPS[name](input, dim, dtype)


def softmax(input, dim, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, computed stably (the max along ``dim`` is subtracted).

    Args:
        input: a floating tensor (or any tensor with ``dtype`` given).
        dim: the dim that sums to 1.
        dtype: compute and return in this dtype.

    Example:
        >>> dl.softmax(dl.tensor([0.0, 0.0]), dim=0).tolist()
        [0.5, 0.5]
    """
    return _with_dtype("softmax", input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """``log(softmax(x, dim))``, computed stably as ``x - max - log(sum(exp(x - max)))``."""
    return _with_dtype("log_softmax", input, dim, dtype)


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x), dim))`` without overflow.

    Example:
        >>> round(dl.logsumexp(dl.tensor([0.0, 0.0]), 0).item(), 4)
        0.6931
    """
    dims = mr.reduction_dims(dim, input.ndim)
    return OPS["logsumexp"](input, dims, True) if keepdim else OPS["logsumexp"](input, dims)


def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``; ints and bools accumulate in int64.

    Example:
        >>> dl.cumsum(dl.tensor([1, 2, 3]), 0).tolist()
        [1, 3, 6]
    """
    return _with_dtype("cumsum", input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``; ints and bools accumulate in int64."""
    return _with_dtype("cumprod", input, dim, dtype)


METHODS = {name: globals()[name] for name in __all__}
