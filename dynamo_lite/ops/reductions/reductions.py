"""Reductions: sum, mean, prod, amax/amin, max/min (with indices), argmax/argmin, var/std, all/any.

Op-level arguments are normalized by the public functions: ``dim`` is None (all dims)
or a sorted tuple of non-negative dims (an int for ops that take one dim), so meta
rules, kernels and generated code never see negative or duplicate dims.
"""
from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from ...tensor.dtype import bool_, int64, uint8
from ...tensor.layout import normalize_dim
from ..core import meta_rules as mr
from ..pointwise.comparison import maximum, minimum
from ..core.kernel_utils import quiet
from ..core.registry import register_op

__all__ = [
    "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var", "std", "var_mean", "all",
    "any",
]

REDUCTION = ("reduction",)

# What max(dim=...)/min(dim=...) return, like torch.return_types.max: a named pair.
max_result = namedtuple("max", ("values", "indices"))
min_result = namedtuple("min", ("values", "indices"))


def _all_dims(input, dim):
    return tuple(range(input.ndim)) if dim is None else dim


# -- meta rules ---------------------------------------------------------------------------
def _integer_to_long(dtype):
    return dtype if dtype.is_floating_point or dtype.is_complex else int64


def sum_meta(input, *, dim=None, keepdim=False, dtype=None):
    return mr.reduction_meta(input, _all_dims(input, dim), keepdim, dtype or _integer_to_long(input._dtype))


def mean_meta(input, *, dim=None, keepdim=False, dtype=None):
    result = dtype or input._dtype
    if not (result.is_floating_point or result.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {mr.TYPE_NAMES[result]}"
        )
    return mr.reduction_meta(input, _all_dims(input, dim), keepdim, result)


def extremum_meta(name):
    def meta(input, *, dim=None, keepdim=False):
        if dim is None and mr.layout.prod(input._sizes) == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        dims = _all_dims(input, dim)
        mr.check_nonempty_reduction(input, dims, name)
        return mr.reduction_meta(input, dims, keepdim)

    return meta


def full_extremum_meta(name):
    def meta(input):
        if mr.layout.prod(input._sizes) == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return mr.reduction_meta(input, tuple(range(len(input._sizes))), False)

    return meta


def extremum_dim_meta(name):
    def meta(input, dim, keepdim=False):
        dims = () if not input._sizes else (dim,)
        mr.check_nonempty_reduction(input, dims, name)
        values = mr.reduction_meta(input, dims, keepdim)
        return (values, mr.reduction_meta(input, dims, keepdim, int64))

    return meta


def arg_meta(name):
    def meta(input, *, dim=None, keepdim=False):
        if input._dtype is bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if mr.layout.prod(input._sizes) == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return mr.reduction_meta(input, tuple(range(len(input._sizes))), keepdim, int64)
        dims = () if not input._sizes else (dim,)
        mr.check_nonempty_reduction(input, dims, name)
        return mr.reduction_meta(input, dims, keepdim, int64)

    return meta


def var_meta(input, *, dim=None, correction=1, keepdim=False):
    if not input._dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return mr.reduction_meta(input, _all_dims(input, dim), keepdim)


def var_mean_meta(input, *, dim=None, correction=1, keepdim=False):
    meta = var_meta(input, dim=dim, correction=correction, keepdim=keepdim)
    return (meta, mr.reduction_meta(input, _all_dims(input, dim), keepdim))


def logical_reduction_meta(input, *, dim=None, keepdim=False):
    out_dtype = uint8 if input._dtype is uint8 else bool_
    return mr.reduction_meta(input, _all_dims(input, dim), keepdim, out_dtype)


# -- kernels ------------------------------------------------------------------------------
def _accumulate(reduce):
    """A reduction kernel that accumulates float16 in float32 (as torch does) and writes ``out``."""

    def kernel(xp, x, out, dim=None, keepdim=False, **options):
        options.pop("dtype", None)
        if out.dtype == np.float16:
            out[...] = reduce(xp, x, axis=dim, keepdims=keepdim, dtype=np.float32, **options)
            return out
        return reduce(xp, x, axis=dim, keepdims=keepdim, dtype=out.dtype, out=out, **options)

    return kernel


def _sum(xp, x, **kw):
    return xp.sum(x, **kw)


def _reduced_count(x, axis) -> int:
    if axis is None:
        return x.size
    return mr.layout.prod(x.shape[d] for d in axis)


def _statistic(xp, reduce, x, axis, correction=0, **kw):
    """Run a mean/var-like NumPy reduction without its warnings for empty or too-small slices
    (torch silently returns NaN there, and so does NumPy once the warning is silenced)."""
    with quiet(xp):
        if _reduced_count(x, axis) > correction:
            return reduce(x, axis=axis, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return reduce(x, axis=axis, **kw)


def _mean(xp, x, axis=None, **kw):
    return _statistic(xp, xp.mean, x, axis, **kw)


def _prod(xp, x, **kw):
    with quiet(xp):  # overflow gives inf silently, as in torch
        return xp.prod(x, **kw)


def _var(xp, x, axis=None, correction=1, **kw):
    return _statistic(xp, xp.var, x, axis, correction, ddof=correction, **kw)


def _std(xp, x, axis=None, correction=1, **kw):
    return _statistic(xp, xp.std, x, axis, correction, ddof=correction, **kw)


def _extremum_kernel(reduce):
    def kernel(xp, x, out, dim=None, keepdim=False):
        return reduce(x, axis=dim, keepdims=keepdim, out=out)

    return kernel


def _extremum_dim_kernel(reduce, arg):
    def kernel(xp, x, dim, keepdim=False, *, out):
        values, indices = out
        if x.ndim == 0:
            values[...] = x
            indices[...] = 0
            return out
        reduce(x, axis=dim, keepdims=keepdim, out=values)
        arg(x, axis=dim, keepdims=keepdim, out=indices)
        return out

    return kernel


def _arg_kernel(arg):
    def kernel(xp, x, out, dim=None, keepdim=False):
        if dim is None or x.ndim == 0:
            out[...] = arg(x)
            return out
        return arg(x, axis=dim, keepdims=keepdim, out=out)

    return kernel


def var_mean_kernel(xp, x, out, dim=None, correction=1, keepdim=False):
    var_out, mean_out = out
    _accumulate(_var)(xp, x, var_out, dim=dim, keepdim=keepdim, correction=correction)
    _accumulate(_mean)(xp, x, mean_out, dim=dim, keepdim=keepdim)
    return out


def _logical_kernel(reduce):
    def kernel(xp, x, out, dim=None, keepdim=False):
        return reduce(x, axis=dim, keepdims=keepdim, out=out)

    return kernel


# -- registration -------------------------------------------------------------------------
REDUCTION_OPS = {
    "sum": (sum_meta, _accumulate(_sum)),
    "mean": (mean_meta, _accumulate(_mean)),
    "prod": (sum_meta, _accumulate(_prod)),
    "amax": (extremum_meta("amax"), _extremum_kernel(np.amax)),
    "amin": (extremum_meta("amin"), _extremum_kernel(np.amin)),
    "max": (full_extremum_meta("max"), _extremum_kernel(np.amax)),
    "min": (full_extremum_meta("min"), _extremum_kernel(np.amin)),
    "max_dim": (extremum_dim_meta("max"), _extremum_dim_kernel(np.amax, np.argmax)),
    "min_dim": (extremum_dim_meta("min"), _extremum_dim_kernel(np.amin, np.argmin)),
    "argmax": (arg_meta("argmax"), _arg_kernel(np.argmax)),
    "argmin": (arg_meta("argmin"), _arg_kernel(np.argmin)),
    "var": (var_meta, _accumulate(_var)),
    "std": (var_meta, _accumulate(_std)),
    "var_mean": (var_mean_meta, var_mean_kernel),
    "all": (logical_reduction_meta, _logical_kernel(np.all)),
    "any": (logical_reduction_meta, _logical_kernel(np.any)),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=REDUCTION) for name, (meta, kernel) in REDUCTION_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def _reduce(name, input, dim, keepdim, explicit=False, **extra):
    """Call a dim-list reduction op, omitting arguments that have their default value
    (an all-dims ``dim`` too, unless ``explicit``: amax/amin check the dims they were given)."""
    kwargs = {k: v for k, v in extra.items() if v is not None}
    if dim is not None:
        dims = mr.reduction_dims(dim, input.ndim)
        if explicit or len(dims) != input.ndim or input.ndim == 0:
            kwargs["dim"] = dims
    if keepdim:
        kwargs["keepdim"] = True
    return OPS[name](input, **kwargs)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (None or ``()`` for all dims); ints and bools accumulate in int64.

    Example:
        >>> dl.sum(dl.tensor([[1, 2], [3, 4]]), dim=0).tolist()
        [4, 6]
    """
    return _reduce("sum", input, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (floating dtypes, or pass ``dtype``).

    Example:
        >>> dl.mean(dl.tensor([1.0, 2.0])).item()
        1.5
    """
    return _reduce("mean", input, dim, keepdim, dtype=dtype)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one dim (or all); ints and bools accumulate in int64."""
    if dim is not None:
        normalize_dim(dim, input.ndim)
    return _reduce("prod", input, dim, keepdim, dtype=dtype)


def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (``()`` for all dims); NaN propagates."""
    return _reduce("amax", input, dim if dim != () else None, keepdim, explicit=True)


def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (``()`` for all dims); NaN propagates."""
    return _reduce("amin", input, dim if dim != () else None, keepdim, explicit=True)


def _extremum(name, binary, result_type, input, dim, keepdim):
    if dim is None:
        return OPS[name](input)
    if mr.is_tensor(dim):
        return binary(input, dim)
    dim = normalize_dim(dim, input.ndim)
    values, indices = OPS[name + "_dim"](input, dim, keepdim) if keepdim else OPS[name + "_dim"](input, dim)
    return result_type(values, indices)


def max(input, dim=None, keepdim=False):
    """The maximum: of all elements, or ``(values, indices)`` along ``dim``, or elementwise
    with another tensor (``max(a, b)`` is ``maximum(a, b)``).

    Example:
        >>> dl.max(dl.tensor([[1, 5], [7, 2]]), dim=1).indices.tolist()
        [1, 0]
    """
    return _extremum("max", maximum, max_result, input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    """The minimum: of all elements, ``(values, indices)`` along ``dim``, or ``minimum(a, b)``."""
    return _extremum("min", minimum, min_result, input, dim, keepdim)


def _arg(name, input, dim, keepdim):
    kwargs = {}
    if dim is not None:
        kwargs["dim"] = normalize_dim(dim, input.ndim)
    if keepdim:
        kwargs["keepdim"] = True
    return OPS[name](input, **kwargs)


def argmax(input, dim=None, keepdim=False):
    """Index of the maximum (in the flattened tensor when ``dim`` is None).

    Example:
        >>> dl.argmax(dl.tensor([1, 5, 2])).item()
        1
    """
    return _arg("argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the minimum (in the flattened tensor when ``dim`` is None)."""
    return _arg("argmin", input, dim, keepdim)


def _correction(dim, unbiased, correction):
    """Resolve torch's two spellings: ``var(x, unbiased)`` (legacy) and ``correction=``."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise RuntimeError("Cannot specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased=False`` is 0).

    Example:
        >>> dl.var(dl.tensor([1.0, 2.0, 3.0])).item()
        1.0
    """
    dim, correction = _correction(dim, unbiased, correction)
    return _reduce("var", input, dim, keepdim, correction=None if correction == 1 else correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))`` with the same arguments."""
    dim, correction = _correction(dim, unbiased, correction)
    return _reduce("std", input, dim, keepdim, correction=None if correction == 1 else correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` in one call."""
    dim, correction = _correction(dim, unbiased, correction)
    return _reduce("var_mean", input, dim, keepdim, correction=None if correction == 1 else correction)


def all(input, dim=None, keepdim=False):
    """True if every element is nonzero (over ``dim`` if given); uint8 inputs give uint8.

    Example:
        >>> dl.all(dl.tensor([True, False])).item()
        False
    """
    return _reduce("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    """True if some element is nonzero (over ``dim`` if given)."""
    return _reduce("any", input, dim, keepdim)


METHODS = {name: globals()[name] for name in __all__}
