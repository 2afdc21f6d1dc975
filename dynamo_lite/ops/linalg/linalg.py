"""Matrix products: matmul (``@``), mm, bmm, addmm and linear, with torch's shape rules and errors."""
from __future__ import annotations

import numpy as np

from ...tensor import layout
from ...tensor.dtype import bool_
from ..core import meta_rules as mr
from ..core.kernel_utils import quiet
from ..pointwise.pointwise import is_operand
from ..core.registry import register_op

__all__ = ["matmul", "mm", "bmm", "addmm", "linear", "dot", "norm"]

MATMUL = ("matmul",)


# -- meta rules ---------------------------------------------------------------------------
def _check_dtypes(a, b, message_style: str = "m1m2") -> None:
    if a._dtype is not b._dtype:
        if message_style == "scalar":
            raise RuntimeError(
                f"expected scalar type {mr.TYPE_NAMES[a._dtype]} but found {mr.TYPE_NAMES[b._dtype]}"
            )
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{mr.C_TYPE_NAMES[a._dtype]} != {mr.C_TYPE_NAMES[b._dtype]}"
        )
    if a._dtype is bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _mm_shape(rows: int, k1: int, k2: int, cols: int) -> None:
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k1} and {k2}x{cols})")


def _mv_shape(rows: int, k: int, n: int) -> None:
    if k != n:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({n})")


def _bmm_shape(batch: int, k: int, batch2: int, k2: int) -> None:
    if (batch, k) != (batch2, k2):
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{batch}, {k}] but got: [{batch2}, {k2}]."
        )


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """Output shape of ``a @ b`` (torch's 1-D / 2-D / batched rules), raising torch's errors."""
    da, db = len(a), len(b)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        if a[0] != b[0]:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same "
                f"number of elements, but got {a[0]} and {b[0]} elements respectively"
            )
        return ()
    if db == 1:  # matrix (or batch of matrices) times vector: folds into one mv
        rows = layout.prod(a[:-1])
        _mv_shape(rows, a[-1], b[0])
        return a[:-1]
    if da == 1 and db == 2:
        _mm_shape(1, a[0], b[0], b[1])
        return (b[1],)
    if db == 2:  # a's batch dims fold into the rows of one mm
        _mm_shape(layout.prod(a[:-1]), a[-1], b[0], b[1])
        return a[:-1] + (b[1],)
    a_batch, b_batch = (a[:-2] if da > 1 else ()), b[:-2]
    batch = layout.broadcast_shapes(a_batch, b_batch)
    k = a[-1]
    _bmm_shape(layout.prod(batch), k, layout.prod(batch), b[-2])
    rows = (a[-2],) if da > 1 else ()
    return batch + rows + (b[-1],)


def matmul_meta(a, b):
    _check_dtypes(a, b)
    mr.common_device((a, b))
    return mr.make_meta(matmul_shape(a._sizes, b._sizes), a._dtype, None, a._device)


def mm_meta(a, b):
    if len(a._sizes) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b._sizes) != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul_meta(a, b)


def bmm_meta(a, b):
    if len(a._sizes) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b._sizes) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _bmm_shape(a._sizes[0], a._sizes[2], b._sizes[0], b._sizes[1])
    _check_dtypes(a, b, "scalar")
    mr.common_device((a, b))
    return mr.make_meta((a._sizes[0], a._sizes[1], b._sizes[2]), a._dtype, None, a._device)


def _check_expand(source: tuple, target: tuple) -> None:
    """``source`` must broadcast to exactly ``target`` (torch's expand error otherwise)."""
    if len(source) > len(target):
        raise RuntimeError(
            f"The expanded size of the tensor ({len(target)}) must match the existing size ({len(source)})"
        )
    offset = len(target) - len(source)
    for i, size in enumerate(source):
        want = target[offset + i]
        if size != want and size != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({size}) at "
                f"non-singleton dimension {offset + i}.  Target sizes: {list(target)}.  "
                f"Tensor sizes: {list(source)}"
            )


def addmm_meta(input, mat1, mat2, *, beta=1, alpha=1):
    out = mm_meta(mat1, mat2)
    _check_dtypes(input, mat1)
    mr.common_device((input, mat1))
    _check_expand(input._sizes, out._sizes)
    return out


def linear_meta(input, weight, bias=None):
    if not input._sizes or not weight._sizes:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{len(input._sizes)}D and {len(weight._sizes)}D"
        )
    _check_dtypes(input, weight)
    mr.common_device((input, weight) if bias is None else (input, weight, bias))
    batch = input._sizes[:-1]
    k = input._sizes[-1]
    if len(weight._sizes) == 1:
        _mv_shape(layout.prod(batch), k, weight._sizes[0])
        shape = batch
    else:
        _mm_shape(layout.prod(batch), k, weight._sizes[-1], weight._sizes[0])
        shape = batch + (weight._sizes[0],)
    if bias is not None:
        _check_dtypes(input, bias)
        _check_expand(bias._sizes, (layout.prod(batch),) + shape[len(batch):])
    return mr.make_meta(shape, input._dtype, None, input._device)


# -- kernels ------------------------------------------------------------------------------
def _product(xp, a, b, out):
    """``a @ b`` into ``out``; float16 accumulates in float32 as torch does."""
    with quiet(xp):  # overflow gives inf silently, as in torch
        if out.dtype == np.float16:
            out[...] = xp.matmul(a.astype(np.float32), b.astype(np.float32))
            return out
        if out.ndim == 0:
            out[...] = xp.matmul(a, b)
            return out
        return xp.matmul(a, b, out=out)


def matmul_kernel(xp, a, b, out):
    if a.ndim > 2 and b.ndim <= 2 and out.size:
        # Fold a's batch dims into the rows: one large product instead of many small ones.
        rows = out.size // (b.shape[-1] if b.ndim == 2 else 1)
        a2 = a.reshape(rows, a.shape[-1])
        out2 = out.reshape(rows, -1) if b.ndim == 2 else out.reshape(rows)
        _product(xp, a2, b, out2)
        return out
    return _product(xp, a, b, out)


def addmm_kernel(xp, input, mat1, mat2, out, beta=1, alpha=1):
    _product(xp, mat1, mat2, out)
    if alpha != 1:
        out *= alpha
    if beta == 0:  # beta=0 ignores input entirely (even NaN), as torch documents
        return out
    return xp.add(out, input if beta == 1 else input * beta, out=out, casting="unsafe")


def linear_kernel(xp, input, weight, bias=None, *, out):
    if out.size:
        k = input.shape[-1]
        rows = out.size // (weight.shape[0] if weight.ndim == 2 else 1)
        x2 = input.reshape(rows, k)
        if weight.ndim == 2:
            _product(xp, x2, weight.T, out.reshape(rows, weight.shape[0]))
        else:
            _product(xp, x2, weight, out.reshape(rows))
    if bias is not None:
        xp.add(out, bias, out=out, casting="unsafe")
    return out


MATMUL_OPS = {
    "matmul": (matmul_meta, matmul_kernel),
    "mm": (mm_meta, _product),
    "bmm": (bmm_meta, _product),
    "addmm": (addmm_meta, addmm_kernel),
    "linear": (linear_meta, linear_kernel),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=MATMUL) for name, (meta, kernel) in MATMUL_OPS.items()}


# -- public functions ---------------------------------------------------------------------
def matmul(input, other):
    """Matrix product with torch's rules: 1-D operands are vectors, batch dims broadcast.

    Example:
        >>> dl.matmul(dl.ones(2, 3), dl.ones(3)).tolist()
        [3.0, 3.0]
    """
    return OPS["matmul"](input, other)


def mm(input, mat2):
    """Product of two matrices (2-D only).

    Example:
        >>> dl.mm(dl.ones(2, 3), dl.ones(3, 4)).shape
        dl.Size([2, 4])
    """
    return OPS["mm"](input, mat2)


def bmm(input, mat2):
    """Batched product of ``(b, n, k)`` and ``(b, k, m)`` tensors."""
    return OPS["bmm"](input, mat2)


def scale_kwargs(beta, alpha) -> dict:
    """The ``beta``/``alpha`` keyword arguments of addmm-like ops, left out when they are 1."""
    return {name: value for name, value in (("beta", beta), ("alpha", alpha)) if value != 1}


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape."""
    return OPS["addmm"](input, mat1, mat2, **scale_kwargs(beta, alpha))


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` as one op (backends map it to a single GEMM).

    Example:
        >>> dl.linear(dl.ones(2, 3), dl.ones(4, 3)).shape
        dl.Size([2, 4])
    """
    return OPS["linear"](input, weight) if bias is None else OPS["linear"](input, weight, bias)


def dot(input, other):
    """Inner product of two 1-D tensors of one dtype (a 0-dim result).

    Example:
        >>> dl.dot(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).item()
        11.0
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{mr.TYPE_NAMES[input.dtype]} and {mr.TYPE_NAMES[other.dtype]}"
        )
    return OPS["matmul"](input, other)


def norm(input, p="fro", dim=None, keepdim=False):
    """Vector p-norm over ``dim`` (all elements by default): 2 ("fro"), 1, inf, -inf, 0 or any p.

    Built from pointwise ops and reductions, so backends fuse it like any other chain.

    Example:
        >>> dl.norm(dl.tensor([3.0, 4.0])).item()
        5.0
    """
    from ..reductions import reductions
    from ..pointwise import unary

    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {mr.TYPE_NAMES[input.dtype]}"
        )
    p = 2 if p == "fro" else p
    magnitude = unary.abs(input)
    if p == float("inf"):
        return reductions.amax(magnitude, () if dim is None else dim, keepdim)
    if p == float("-inf"):
        return reductions.amin(magnitude, () if dim is None else dim, keepdim)
    if p == 0:
        return reductions.sum(magnitude != 0, dim, keepdim, dtype=input.dtype)
    if p == 1:
        return reductions.sum(magnitude, dim, keepdim)
    if p == 2:
        return unary.sqrt(reductions.sum(unary.square(input), dim, keepdim))
    return reductions.sum(magnitude ** p, dim, keepdim) ** (1.0 / p)


def _rmatmul(self, other):
    return OPS["matmul"](other, self) if is_operand(other) else NotImplemented


def _matmul_operator(self, other):
    return OPS["matmul"](self, other) if is_operand(other) else NotImplemented


METHODS = {
    "matmul": matmul, "mm": mm, "bmm": bmm, "addmm": addmm, "dot": dot, "norm": norm,
    "__matmul__": _matmul_operator, "__rmatmul__": _rmatmul,
}
