"""Building blocks of the derivative formulas, written with registry ops only."""
from __future__ import annotations

from ...ops.core.registry import REGISTRY
from ...tensor.dtype import int64
from ...tensor.meta import TensorMeta

OPS = REGISTRY


def is_tensor(value) -> bool:
    """A real tensor, a saved one, a proxy or a TensorMeta standing for an unsaved input."""
    return hasattr(value, "_sizes")


def is_value(value) -> bool:
    """Not a TensorMeta standing for an input that was not saved (a tensor, proxy or number)."""
    return not isinstance(value, TensorMeta)


def zeros_of(meta, dtype=None):
    """A zero tensor with the shape, dtype and device of ``meta`` (a tensor or TensorMeta)."""
    return OPS["zeros"](size=tuple(meta._sizes), dtype=dtype or meta._dtype, device=meta._device)


def zeros_grad(grad, input, *rest, **kwargs):
    """The formula of a piecewise-constant op: the gradient is zero everywhere."""
    return zeros_of(input if is_tensor(input) else grad)


def arange(n: int, like, dtype=None):
    """``0, 1, ..., n - 1`` on ``like``'s device (int64 unless ``dtype`` says otherwise)."""
    return OPS["arange"](start=0, end=n, step=1, dtype=dtype or int64, device=like._device)


def normalize_dims(dim, ndim: int) -> tuple:
    """The reduced dims of a reduction as a sorted tuple of non-negative ints."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    return tuple(sorted(d % ndim if ndim else 0 for d in dims))


def expand_reduced(grad, input_meta: TensorMeta, dim, keepdim: bool):
    """A reduction's output gradient broadcast back over the reduced dims of its input."""
    ndim = len(input_meta._sizes)
    if not keepdim and ndim:
        for d in normalize_dims(dim, ndim):
            grad = OPS["unsqueeze"](grad, d)
    return OPS["expand"](grad, tuple(input_meta._sizes))


def reduced_count(input_meta: TensorMeta, dim) -> int:
    count = 1
    for d in normalize_dims(dim, len(input_meta._sizes)):
        count *= input_meta._sizes[d]
    return count


def embed(grad, input_meta: TensorMeta, view):
    """A zero tensor shaped like the input with ``grad`` written into the window ``view(zeros)``."""
    result = zeros_of(input_meta, grad._dtype)
    OPS["copy_"](view(result), grad)
    return result


def scatter_add(shape, dim: int, index, src, like):
    """zeros(shape) with ``src`` added at ``index`` along ``dim`` (gather's adjoint)."""
    ndim = len(shape)
    dim %= ndim
    keys = []
    for d in range(ndim):
        if d == dim:
            keys.append(index)
            continue
        view_shape = [1] * ndim
        view_shape[d] = index._sizes[d]
        ar = arange(index._sizes[d], index, index._dtype)
        keys.append(OPS["expand"](OPS["view"](ar, tuple(view_shape)), tuple(index._sizes)))
    result = OPS["zeros"](size=tuple(shape), dtype=like._dtype, device=like._device)
    return OPS["index_put_"](result, tuple(keys), src, accumulate=True)


def transpose_last(t):
    return OPS["transpose"](t, -2, -1)


def conj(value):
    """The complex conjugate of a tensor or number; real values pass through unchanged.

    NOTE: [complex gradients] For a real loss L and z = x + iy, the gradient stored for z
    is dL/dx + i dL/dy (torch's convention). A holomorphic op's formula then multiplies the
    output gradient by the *conjugate* of its derivative: grad * conj(f'(z)).
    """
    if isinstance(value, complex):
        return value.conjugate()
    if not is_tensor(value) or not value._dtype.is_complex:
        return value
    parts = OPS["view_as_real"](value)
    return OPS["complex"](OPS["select"](parts, -1, 0), OPS["neg"](OPS["select"](parts, -1, 1)))
