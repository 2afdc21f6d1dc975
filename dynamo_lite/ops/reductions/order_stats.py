"""Order statistics: kthvalue, median (the lower median), quantile and nanquantile.

``kthvalue`` is one registry op (values and indices); ``median`` is its ``k = (n + 1) // 2``
with NaN propagating; ``quantile`` is written with registered ops (sort, gather, lerp), so
graphs capture it and autograd differentiates it through them.
"""
from __future__ import annotations

from collections import namedtuple

from ...tensor import layout
from ...tensor.dtype import int64
from ..core import meta_rules as mr
from ..pointwise.comparison import where
from ..creation.factories import full, full_like
from ..pointwise.math_ops import lerp
from ..core.registry import register_op
from ..pointwise.unary import isnan

__all__ = ["kthvalue", "median", "nanmedian", "quantile", "nanquantile"]

KthvalueResult = namedtuple("kthvalue", ["values", "indices"])
MedianResult = namedtuple("median", ["values", "indices"])
NanmedianResult = namedtuple("nanmedian", ["values", "indices"])
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def kthvalue_meta(input, k, dim=-1, keepdim=False, nan_rule=None):
    rank = len(input._sizes)
    dim = layout.normalize_dim(dim, rank)
    size = input._sizes[dim] if rank else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    shape = mr.reduced_shape(input._sizes, (dim,), keepdim) if rank else ()
    return mr.make_meta(shape, input._dtype, None, input._device), mr.make_meta(shape, int64, None, input._device)


def kthvalue_kernel(xp, x, k, dim=-1, keepdim=False, nan_rule=None, *, out):
    """The k-th smallest along ``dim`` (NaN largest). ``nan_rule`` "propagate": a row holding
    NaN gives its first NaN (median); "ignore": ``k`` is the lower middle of the row's
    values other than NaN (nanmedian)."""
    values, indices = out
    if x.ndim == 0:
        values[...], indices[...] = x, 0
        return out
    order = xp.argsort(x, axis=dim, kind="stable")  # NaN sorts last
    picked = xp.take(order, xp.asarray([k - 1]), axis=dim)
    nan = xp.isnan(x) if x.dtype.kind in "fc" else xp.zeros(x.shape, bool)
    if nan_rule == "propagate":
        picked = xp.where(nan.any(axis=dim, keepdims=True), xp.argmax(nan, axis=dim, keepdims=True), picked)
    elif nan_rule == "ignore":
        middle = xp.maximum((x.shape[dim] - nan.sum(axis=dim, keepdims=True) + 1) // 2 - 1, 0)
        picked = xp.take_along_axis(order, middle, axis=dim)
    chosen = xp.take_along_axis(x, picked, axis=dim)
    values[...] = chosen if keepdim else xp.squeeze(chosen, dim)
    indices[...] = picked if keepdim else xp.squeeze(picked, dim)
    return out


OPS = {"kthvalue": register_op("kthvalue", meta=kthvalue_meta, kernel=kthvalue_kernel)}


def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element along ``dim`` (NaN counts as the largest).

    Example:
        >>> dl.kthvalue(dl.tensor([3.0, 1.0, 2.0]), 2).values.item()
        2.0
    """
    return KthvalueResult(*OPS["kthvalue"](input, int(k), dim, bool(keepdim)))


def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (a 0-d tensor), or ``(values, indices)`` along ``dim``.

    With an even count it is the smaller of the two middle values, as torch returns; a row
    holding NaN has median NaN.

    Example:
        >>> dl.median(dl.tensor([4.0, 1.0, 3.0, 2.0])).item()
        2.0
    """
    return _median(input, dim, keepdim, "propagate", MedianResult)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median ignoring NaN (NaN only where a row holds nothing else).

    Example:
        >>> dl.nanmedian(dl.tensor([float("nan"), 1.0, 3.0])).item()
        1.0
    """
    return _median(input, dim, keepdim, "ignore", NanmedianResult)


def _median(input, dim, keepdim, nan_rule, result_type):
    if dim is None:
        flat = input.reshape(-1)
        if flat.shape[0] == 0:  # torch's answer for no elements
            return flat.sum() * float("nan")
        return OPS["kthvalue"](flat, (flat.shape[0] + 1) // 2, 0, False, nan_rule)[0]
    size = input.shape[layout.normalize_dim(dim, input.dim())] if input.dim() else 1
    return result_type(*OPS["kthvalue"](input, (size + 1) // 2, dim, bool(keepdim), nan_rule))


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles (``q`` a float or a 1-D tensor in [0, 1]) along ``dim`` (all elements by default).

    ``interpolation`` picks between the two nearest sorted values: "linear", "lower",
    "higher", "midpoint" or "nearest" (half to even). A row holding NaN gives NaN. A
    tensor ``q`` adds a leading dimension of its length.

    Example:
        >>> dl.quantile(dl.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).item()
        2.5
    """
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaN (NaN only where a row holds nothing else).

    Example:
        >>> dl.nanquantile(dl.tensor([1.0, float("nan"), 3.0]), 0.5).item()
        2.0
    """
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", ignore_nan=True)


def _quantile(input, q, dim, keepdim, interpolation, name, ignore_nan):
    _check_quantile_args(input, q, interpolation, name)
    scalar_q = not mr.is_tensor(q)
    q = full((1,), float(q), dtype=input.dtype, device=input.device) if scalar_q else q.reshape(-1)
    rows = input.reshape(-1) if dim is None else input.movedim(layout.normalize_dim(dim, max(input.dim(), 1)), -1)
    if rows.dim() == 0:
        rows = rows.reshape(1)
    ordered = rows.sort(-1).values  # NaN last
    nan = isnan(ordered)
    count = (~nan).sum(-1, keepdim=True) if ignore_nan else full_like(ordered[..., :1], ordered.shape[-1],
                                                                            dtype=int64)
    last = (count - 1).clamp_min(0).to(input.dtype)
    ranks = q * last  # (..., len(q))
    if not ignore_nan:  # a row holding NaN reads its last value: NaN
        ranks = where(nan[..., -1:], last, ranks)
    if interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.floor().long()
    above = ranks.ceil().long()
    low = ordered.gather(-1, below)
    high = ordered.gather(-1, above)
    result = {"lower": lambda: low, "higher": lambda: high, "nearest": lambda: low,
              "midpoint": lambda: lerp(low, high, 0.5),
              "linear": lambda: lerp(low, high, ranks - below.to(input.dtype))}[interpolation]()
    result = result.movedim(-1, 0)  # (len(q), ...)
    if keepdim:
        kept = [1] * input.dim() if dim is None else list(input.shape)
        if dim is not None and input.dim():
            kept[layout.normalize_dim(dim, input.dim())] = 1
        result = result.reshape([result.shape[0]] + kept)
    return result[0] if scalar_q else result


def _check_quantile_args(input, q, interpolation, name):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if mr.is_tensor(q):
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if bool(((q < 0) | (q > 1)).any()):  # reads q's values: a graph break in compiled code, as in torch
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")


METHODS = {"kthvalue": kthvalue, "median": median, "nanmedian": nanmedian, "quantile": quantile,
           "nanquantile": nanquantile}
