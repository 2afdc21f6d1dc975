"""NaN-aware reductions, scans and statistics: nansum, nanmean, std_mean, aminmax, cummax/cummin,
logcumsumexp, histc, isin, trapezoid."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tensor import layout
from ...tensor.dtype import bool_, int64
from ..pointwise import comparison
from ..core import meta_rules as mr
from . import reductions
from ..pointwise import unary
from ..core.kernel_utils import quiet
from ..core.registry import register_op
from ..pointwise import pointwise

__all__ = [
    "nansum", "nanmean", "std_mean", "aminmax", "cummax", "cummin", "logcumsumexp", "histc", "isin",
    "trapezoid", "trapz",
]

AminmaxResult = namedtuple("aminmax", ["min", "max"])
CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])


# -- registry ops ---------------------------------------------------------------------------
def cumulative_extremum_meta(input, dim):
    layout.normalize_dim(dim, max(len(input._sizes), 1))
    return mr.same_meta(input), mr.same_meta(input, int64)


def _cumulative_extremum_kernel(better):
    """cummax/cummin: a later element equal to the running one, or NaN, takes over (torch's ties)."""
    def kernel(xp, x, dim, out):
        values, indices = out
        if x.ndim == 0:
            values[...], indices[...] = x, 0
            return out
        x = xp.moveaxis(x, dim, -1)
        value_view, index_view = xp.moveaxis(values, dim, -1), xp.moveaxis(indices, dim, -1)
        if x.shape[-1] == 0:
            return out
        best, where = x[..., 0].copy(), xp.zeros(x.shape[:-1], dtype=np.int64)
        value_view[..., 0], index_view[..., 0] = best, where
        nan_aware = x.dtype.kind in "fc"
        with quiet(xp):
            for j in range(1, x.shape[-1]):
                current = x[..., j]
                take = better(current, best) | (current == best)
                if nan_aware:
                    take = take | xp.isnan(current)
                    take = take & ~(xp.isnan(best) & ~xp.isnan(current))
                best = xp.where(take, current, best)
                where = xp.where(take, j, where)
                value_view[..., j], index_view[..., j] = best, where
        return out

    return kernel


def logcumsumexp_meta(input, dim):
    layout.normalize_dim(dim, max(len(input._sizes), 1))
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{mr.TYPE_NAMES[input._dtype]}\'')
    return mr.same_meta(input)


def logcumsumexp_kernel(xp, x, dim, out):
    if x.ndim == 0:
        out[...] = x
        return out
    with quiet(xp):
        out[...] = xp.logaddexp.accumulate(x.astype(np.float64), axis=dim)
    return out


def histc_meta(input, bins=100, min=0, max=0):
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f'"histogram_cpu" not implemented for \'{mr.TYPE_NAMES[input._dtype]}\'')
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if max < min:
        raise RuntimeError("torch.histc: max must be larger than min")
    return mr.make_meta((bins,), input._dtype, None, input._device)


def histc_kernel(xp, x, bins=100, min=0, max=0, *, out):
    x = x.reshape(-1).astype(np.float64)
    low, high = float(min), float(max)
    if low == high and x.size:  # the data's own range (so the kernel, not the meta rule, reads it)
        low, high = float(xp.min(x)), float(xp.max(x))
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    inside = x[(x >= low) & (x <= high)]
    position = ((inside - low) * bins / (high - low)).astype(np.int64)
    out[...] = xp.bincount(xp.minimum(position, bins - 1), minlength=bins)
    return out


def isin_meta(elements, test_elements, *, assume_unique=False, invert=False):
    shape = tuple(elements._sizes) if mr.is_tensor(elements) else ()
    device = (elements if mr.is_tensor(elements) else test_elements)._device
    return mr.make_meta(shape, bool_, None, device)


def isin_kernel(xp, elements, test_elements, *, assume_unique=False, invert=False, out):
    out[...] = xp.isin(xp.asarray(elements), xp.asarray(test_elements), invert=invert)
    return out


OPS = {
    "cummax": register_op("cummax", meta=cumulative_extremum_meta, kernel=_cumulative_extremum_kernel(np.greater),
                          tags=("scan",)),
    "cummin": register_op("cummin", meta=cumulative_extremum_meta, kernel=_cumulative_extremum_kernel(np.less),
                          tags=("scan",)),
    "logcumsumexp": register_op("logcumsumexp", meta=logcumsumexp_meta, kernel=logcumsumexp_kernel, tags=("scan",)),
    "histc": register_op("histc", meta=histc_meta, kernel=histc_kernel),
    "isin": register_op("isin", meta=isin_meta, kernel=isin_kernel),
}


# -- public functions -----------------------------------------------------------------------
def _without_nan(input):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        return input
    return comparison.where(unary.isnan(input), 0, input)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` treating NaN as zero.

    Example:
        >>> dl.nansum(dl.tensor([1.0, float("nan"), 2.0])).item()
        3.0
    """
    return reductions.sum(_without_nan(input), dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``mean`` over the elements that are not NaN (NaN where all are).

    Example:
        >>> dl.nanmean(dl.tensor([1.0, float("nan"), 2.0])).item()
        1.5
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{mr.TYPE_NAMES[input.dtype]}")
    count = reductions.sum(comparison.logical_not(unary.isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` in one call (the arguments of ``std``).

    Example:
        >>> [t.item() for t in dl.std_mean(dl.tensor([1.0, 3.0]))]
        [1.4142135381698608, 2.0]
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("std_mean only support floating point and complex dtypes")
    variance, mean = reductions.var_mean(input, dim, unbiased, keepdim, correction=correction)
    return unary.sqrt(variance), mean


def aminmax(input, *, dim=None, keepdim=False):
    """``(amin, amax)`` over ``dim`` (all elements if None); NaN propagates.

    Example:
        >>> [t.item() for t in dl.aminmax(dl.tensor([3, 1, 2]))]
        [1, 3]
    """
    if input.numel() == 0 and (dim is None or input.shape[layout.normalize_dim(dim, input.ndim)] == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is None:
        low, high = reductions.amin(input), reductions.amax(input)
        if keepdim:
            shape = (1,) * input.ndim
            low, high = low.reshape(shape), high.reshape(shape)
        return AminmaxResult(low, high)
    return AminmaxResult(reductions.amin(input, dim, keepdim), reductions.amax(input, dim, keepdim))


def _cumulative_extremum(name: str, result_type, doc: str):
    def fn(input, dim):
        return result_type(*OPS[name](input, layout.normalize_dim(dim, max(input.ndim, 1))))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


cummax = _cumulative_extremum("cummax", CummaxResult, """``(values, indices)``: the running maximum along ``dim``.

    Example:
        >>> dl.cummax(dl.tensor([1, 3, 2]), 0).values.tolist()
        [1, 3, 3]
    """)
cummin = _cumulative_extremum("cummin", CumminResult, """``(values, indices)``: the running minimum along ``dim``.

    Example:
        >>> dl.cummin(dl.tensor([3, 1, 2]), 0).values.tolist()
        [3, 1, 1]
    """)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` without overflow.

    Example:
        >>> round(dl.logcumsumexp(dl.tensor([0.0, 0.0]), 0)[1].item(), 4)
        0.6931
    """
    return OPS["logcumsumexp"](input, layout.normalize_dim(dim, max(input.ndim, 1)))


def histc(input, bins=100, min=0, max=0):
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are 0).

    Elements outside the range (and NaN) are not counted; the last bin includes ``max``.

    Example:
        >>> dl.histc(dl.tensor([1.0, 2.0, 1.0]), bins=2, min=0, max=2).tolist()
        [0.0, 3.0]
    """
    return OPS["histc"](input, bins, min, max)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a number).

    Example:
        >>> dl.isin(dl.tensor([1, 2, 3]), dl.tensor([2, 5])).tolist()
        [False, True, False]
    """
    return OPS["isin"](elements, test_elements, invert=invert) if invert else OPS["isin"](elements, test_elements)




def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at spacing ``dx`` (default 1) or points ``x``.

    Example:
        >>> dl.trapezoid(dl.tensor([1.0, 2.0, 3.0])).item()
        4.0
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx both given")
    dim = layout.normalize_dim(dim, max(y.ndim, 1))
    length = y.shape[dim] if y.ndim else 0
    if length == 0:
        return reductions.sum(y * 0, dim)
    pair_sums = pointwise.add(y.narrow(dim, 1, length - 1), y.narrow(dim, 0, length - 1))
    if x is None:
        return pointwise.mul(reductions.sum(pair_sums, dim), (1.0 if dx is None else dx) / 2)
    if isinstance(x, (int, float)):
        return pointwise.mul(reductions.sum(pair_sums, dim), x / 2)
    if x.ndim == 1:
        steps = pointwise.sub(x[1:], x[:-1])
        view = [1] * y.ndim
        view[dim] = length - 1
        steps = steps.reshape(view)
    else:
        xd = layout.normalize_dim(dim - y.ndim, x.ndim) if x.ndim != y.ndim else dim
        steps = pointwise.sub(x.narrow(xd, 1, length - 1), x.narrow(xd, 0, length - 1))
    return pointwise.div(reductions.sum(pointwise.mul(pair_sums, steps), dim), 2)


trapz = trapezoid


METHODS = {name: globals()[name] for name in __all__ if name not in ("std_mean", "isin", "trapezoid", "trapz")}
