"""diff, rot90 and cdist, written with registered ops (graphs capture them, autograd differentiates them)."""
from __future__ import annotations

from ...tensor import layout
from ...tensor.dtype import bool_
from ..pointwise import comparison
from ..core import meta_rules as mr
from ..pointwise import pointwise
from . import shape_ops
from ..autocast.policy import float32_function
from ..linalg.linalg import norm

__all__ = ["cdist", "diff", "rot90"]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first); bool inputs use xor.

    Example:
        >>> dl.diff(dl.tensor([1, 4, 9, 16])).tolist()
        [3, 5, 7]
    """
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = layout.normalize_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    if any(t.dim() != input.dim() for t in parts):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    result = shape_ops.cat(parts, dim) if len(parts) > 1 else input
    subtract = comparison.logical_xor if input.dtype == bool_ else pointwise.sub
    for _ in range(n):
        length = result.shape[dim]
        if length == 0:
            break
        result = subtract(result.narrow(dim, 1, length - 1), result.narrow(dim, 0, length - 1))
    return result


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second.

    Example:
        >>> dl.rot90(dl.tensor([[1, 2], [3, 4]])).tolist()
        [[2, 4], [1, 3]]
    """
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    first, second = (layout.normalize_dim(d, input.dim()) for d in dims)
    if first == second:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {first} and dim1 = {second}")
    turns = k % 4
    if turns == 1:
        return input.flip([second]).transpose(first, second)
    if turns == 2:
        return input.flip([first, second])
    if turns == 3:
        return input.flip([first]).transpose(first, second)
    return input.clone()


@float32_function  # in float32 under dl.autocast, as torch
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between every row of ``x1`` (``(..., P, M)``) and of ``x2`` (``(..., R, M)``).

    Computed from the differences of every pair (no matrix-product shortcut for p = 2),
    so distances of equal rows are exactly 0.

    Example:
        >>> dl.cdist(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
        [[5.0, 1.0]]
    """
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {mr.TYPE_NAMES[x.dtype]}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


METHODS = {"diff": diff, "rot90": rot90}
