"""Scatter ops: scatter (values or a tensor), scatter_add, scatter_reduce, index_fill, and their in-place forms."""
from __future__ import annotations

import numpy as np

from ...tensor import layout
from ...tensor.dtype import int32, int64
from ...tensor.meta import TensorMeta
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["scatter", "scatter_add", "scatter_reduce", "index_fill"]

INDEX_DTYPES = (int32, int64)
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
LEGACY_REDUCTIONS = {"add": "sum", "multiply": "prod"}  # scatter(..., reduce=) spellings


# -- meta rules ---------------------------------------------------------------------------
def _check_scatter(name: str, input, dim, index, src) -> None:
    rank = len(input._sizes)
    dim = layout.normalize_dim(dim, rank)
    if index._dtype not in INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if mr.is_tensor(src) and src._dtype is not input._dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if len(index._sizes) != rank and index._sizes:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    too_big = any(i != dim and size > input._sizes[i] for i, size in enumerate(index._sizes))
    if mr.is_tensor(src):
        too_big = too_big or any(size > src._sizes[i] for i, size in enumerate(index._sizes) if i < len(src._sizes))
        if too_big:
            raise RuntimeError(
                f"Expected index {list(index._sizes)} to be no larger than self {list(input._sizes)} apart from "
                f"dimension {dim} and to be no larger size than src {list(src._sizes)}"
            )
    elif too_big:
        raise RuntimeError(
            f"Expected index {list(index._sizes)} to be no larger than self {list(input._sizes)} apart from "
            f"dimension {dim}"
        )
    devices = [t for t in (input, index, src) if mr.is_tensor(t)]
    mr.common_device(devices)


def scatter_meta(input, dim, index, src, *, reduce=None):
    _check_scatter("scatter", input, dim, index, src)
    if reduce is not None and reduce not in LEGACY_REDUCTIONS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return mr.make_meta(input._sizes, input._dtype, None, input._device)


def scatter_add_meta(input, dim, index, src):
    _check_scatter("scatter", input, dim, index, src)
    return mr.make_meta(input._sizes, input._dtype, None, input._device)


def scatter_reduce_meta(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _check_scatter("scatter_reduce", input, dim, index, src)
    return mr.make_meta(input._sizes, input._dtype, None, input._device)


def index_fill_meta(input, dim, index, value):
    layout.normalize_dim(dim, len(input._sizes))
    if index._dtype is not int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if len(index._sizes) > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if mr.is_tensor(value) and value._sizes:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{len(value._sizes)} dimension(s)."
        )
    return mr.make_meta(input._sizes, input._dtype, None, input._device)


def _inplace(meta_rule):
    def meta(input, *args, **kwargs):
        meta_rule(input, *args, **kwargs)
        return TensorMeta.of(input)

    return meta


# -- kernels ------------------------------------------------------------------------------
def _check_bounds(xp, index, dim: int, size: int, error=RuntimeError) -> None:
    if index.size and (int(index.min()) < -size or int(index.max()) >= size):
        flat = index.reshape(-1)
        bad = int(flat[int(xp.argmax((flat < -size) | (flat >= size)))])  # the first one, as torch reports
        raise error(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _coordinates(xp, index, dim: int, size: int):
    """The target coordinates of every index element: its own position, ``index`` along ``dim``."""
    _check_bounds(xp, index, dim, size)
    grid = list(xp.indices(index.shape, sparse=True))
    grid[dim] = xp.where(index < 0, index + size, index)
    return tuple(grid)


def _source_values(xp, src, index, dtype):
    """The ``src`` element paired with each index element (a scalar fills them all)."""
    if hasattr(src, "shape"):
        return src[tuple(slice(0, n) for n in index.shape)]
    return xp.full(index.shape, src, dtype=dtype)


def _start(xp, x, out):
    if x is not out:
        out[...] = x
    return out


def scatter_kernel(xp, x, dim, index, src, *, out, reduce=None):
    if reduce is not None:
        return scatter_reduce_kernel(xp, x, dim, index, src, LEGACY_REDUCTIONS[reduce], out=out)
    dim = layout.normalize_dim(dim, x.ndim)
    _start(xp, x, out)
    if out.ndim == 0:
        if index.size:
            out[...] = _source_values(xp, src, index, out.dtype).reshape(-1)[-1]
        return out
    coords = _coordinates(xp, index, dim, out.shape[dim])
    out[coords] = _source_values(xp, src, index, out.dtype)
    return out


def scatter_add_kernel(xp, x, dim, index, src, *, out):
    return scatter_reduce_kernel(xp, x, dim, index, src, "sum", out=out)


_UFUNCS = {"sum": "add", "prod": "multiply", "mean": "add", "amax": "maximum", "amin": "minimum"}


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def scatter_reduce_kernel(xp, x, dim, index, src, reduce, *, out, include_self=True):
    dim = layout.normalize_dim(dim, max(x.ndim, 1))
    _start(xp, x, out)
    view = out.reshape(1) if out.ndim == 0 else out
    index = index.reshape(1) if index.ndim == 0 else index
    coords = _coordinates(xp, index, dim, view.shape[dim])
    values = _source_values(xp, src, index, out.dtype)
    values = values.reshape(index.shape) if hasattr(values, "reshape") else values
    if not include_self:
        touched = xp.zeros(view.shape, dtype=bool)
        touched[coords] = True
        view[touched] = _identity(reduce, out.dtype)
    getattr(xp, _UFUNCS[reduce]).at(view, coords, values)
    if reduce == "mean":
        counts = xp.ones(view.shape, dtype=np.int64) if include_self else xp.zeros(view.shape, dtype=np.int64)
        xp.add.at(counts, coords, 1)
        counts = xp.maximum(counts, 1)
        if out.dtype.kind == "f":
            xp.divide(view, counts, out=view, casting="unsafe")
        else:
            xp.floor_divide(view, counts, out=view, casting="unsafe")
    return out


def index_fill_kernel(xp, x, dim, index, value, *, out):
    _start(xp, x, out)
    if out.ndim == 0:
        if index.size:
            _check_bounds(xp, index, 0, 1, IndexError)
            out[...] = value
        return out
    dim = layout.normalize_dim(dim, out.ndim)
    flat = index.reshape(-1)
    _check_bounds(xp, flat, dim, out.shape[dim], IndexError)
    region = [slice(None)] * out.ndim
    region[dim] = flat
    out[tuple(region)] = value
    return out


SCATTER_OPS = {
    "scatter": (scatter_meta, scatter_kernel),
    "scatter_add": (scatter_add_meta, scatter_add_kernel),
    "scatter_reduce": (scatter_reduce_meta, scatter_reduce_kernel),
    "index_fill": (index_fill_meta, index_fill_kernel),
}
OPS = {}
for _name, (_meta, _kernel) in SCATTER_OPS.items():
    OPS[_name] = register_op(_name, meta=_meta, kernel=_kernel)
    OPS[_name + "_"] = register_op(_name + "_", meta=_inplace(_meta), kernel=_kernel, tags=("inplace",))


# -- public functions ---------------------------------------------------------------------
def _scatter(name: str, input, dim, index, src=None, value=None, reduce=None):
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{name}() missing 1 required argument: 'src' (or 'value')")
    kwargs = {} if reduce is None else {"reduce": reduce}
    return OPS[name](input, dim, index, src, **kwargs)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along ``dim``.

    ``out[i][index[i][j]] = src[i][j]`` for ``dim=1``; with ``reduce="add"``/``"multiply"``
    values combine with what is there.

    Example:
        >>> dl.scatter(dl.zeros(3), 0, dl.tensor([2, 0]), dl.tensor([5.0, 6.0])).tolist()
        [6.0, 0.0, 5.0]
    """
    return _scatter("scatter", input, dim, index, src, value, reduce)


def _scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    return _scatter("scatter_", self, dim, index, src, value, reduce)


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate).

    Example:
        >>> dl.scatter_add(dl.zeros(2), 0, dl.tensor([1, 1, 0]), dl.tensor([1.0, 2.0, 3.0])).tolist()
        [3.0, 3.0]
    """
    return OPS["scatter_add"](input, dim, index, src)


def _scatter_add_(self, dim, index, src):
    return OPS["scatter_add_"](self, dim, index, src)


def _reduce_kwargs(include_self) -> dict:
    return {} if include_self else {"include_self": False}


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Combine ``src`` into a copy of ``input`` at ``index`` with ``reduce``: sum, prod, mean, amax or amin.

    With ``include_self=False`` the values already at a scattered-to position are left out.

    Example:
        >>> dl.scatter_reduce(dl.zeros(2), 0, dl.tensor([0, 0]), dl.tensor([1.0, 3.0]), "amax").tolist()
        [3.0, 0.0]
    """
    return OPS["scatter_reduce"](input, dim, index, src, reduce, **_reduce_kwargs(include_self))


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return OPS["scatter_reduce_"](self, dim, index, src, reduce, **_reduce_kwargs(include_self))


def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value``.

    Example:
        >>> dl.index_fill(dl.zeros(2, 2), 1, dl.tensor([0]), 1.0).tolist()
        [[1.0, 0.0], [1.0, 0.0]]
    """
    return OPS["index_fill"](input, dim, index, value)


def _index_fill_(self, dim, index, value):
    return OPS["index_fill_"](self, dim, index, value)


METHODS = {
    "scatter": scatter, "scatter_": _scatter_, "scatter_add": scatter_add, "scatter_add_": _scatter_add_,
    "scatter_reduce": scatter_reduce, "scatter_reduce_": _scatter_reduce_, "index_fill": index_fill,
    "index_fill_": _index_fill_,
}
