"""Vector and matrix products and statistics: inner, vdot, cross, mv, addmv, addr, addbmm, trace, matrix_exp,
cov, pdist ...

``matrix_exp`` is a registry op (NOTE: [matrix_exp]); the rest are compositions of registry
ops (matmul, mul, sum, ...), so graphs capture them and autograd differentiates them.
"""
from __future__ import annotations

import numpy as np

from ...tensor import layout
from ...tensor.dtype import promote_types
from ..pointwise import comparison, complex_ops
from . import contractions
from ..creation import factories
from . import linalg
from ..core import meta_rules as mr
from ..pointwise import pointwise
from ..reductions import reductions
from ..shape import shape_ops
from ..pointwise import unary
from ..shape.diagonals import diagonal, triu_indices
from ..core.registry import register_op
from ..core.out_arg import check_out_autograd, write_out

__all__ = [
    "inner", "vdot", "cross", "mv", "addmv", "addr", "addbmm", "chain_matmul", "trace", "matrix_exp", "cov",
    "corrcoef", "pdist",
]


# -- matrix_exp: a registry op ----------------------------------------------------------------
# NOTE: [matrix_exp] Scaling and squaring: each matrix is divided by 2^s so that its 1-norm is
# at most 1/2, exponentiated by its Taylor series to degree 18 (remainder < 0.5^19 / 19! relative,
# far below float64 rounding), then squared s times. The derivative is the upper-right block of
# the exponential of [[A^H, G], [0, A^H]] (Najfeld and Havel), so it is this op again.
TAYLOR_DEGREE = 18


def matrix_exp_meta(input):
    if len(input._sizes) < 2 or input._sizes[-1] != input._sizes[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{input._sizes[-2] if len(input._sizes) > 1 else 1} by {input._sizes[-1] if input._sizes else 1} "
                           f"matrices")
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{mr.TYPE_NAMES[input._dtype]}")
    return mr.same_meta(input)


def matrix_exp_kernel(xp, a, out):
    work = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64).reshape((-1,) + a.shape[-2:])
    n = work.shape[-1]
    norms = xp.abs(work).sum(axis=-2).max(axis=-1) if n else xp.zeros(work.shape[0])
    with np.errstate(divide="ignore"):
        squarings = xp.maximum(xp.ceil(xp.log2(xp.maximum(norms, 1e-300) * 2)), 0).astype(np.int64)
    squarings = xp.where(xp.isfinite(norms), squarings, 0)
    scaled = work / (2.0 ** squarings)[:, None, None]
    term = xp.broadcast_to(xp.eye(n, dtype=work.dtype), work.shape).copy()
    total = term.copy()
    for k in range(1, TAYLOR_DEGREE + 1):
        term = term @ scaled / k
        total = total + term
    for step in range(int(squarings.max()) if squarings.size else 0):
        square = (step < squarings)[:, None, None]
        total = xp.where(square, total @ total, total)
    out[...] = total.reshape(a.shape)
    return out


OPS = {"matrix_exp": register_op("matrix_exp", meta=matrix_exp_meta, kernel=matrix_exp_kernel)}


def matrix_exp(input):
    """The matrix exponential of each square matrix in the last two dims (NOTE: [matrix_exp]).

    Example:
        >>> dl.matrix_exp(dl.zeros(2, 2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return OPS["matrix_exp"](input)


# -- products ---------------------------------------------------------------------------------
def inner(input, other):
    """Sum of products over the last dim of both (a scalar operand multiplies).

    Example:
        >>> dl.inner(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).item()
        11.0
    """
    if input.ndim == 0 or other.ndim == 0:
        return pointwise.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return contractions.tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


def vdot(input, other):
    """The dot product of two 1-D tensors, conjugating the first.

    Example:
        >>> dl.vdot(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).item()
        11.0
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {mr.TYPE_NAMES[input.dtype]} "
                           f"and {mr.TYPE_NAMES[other.dtype]}")
    first = _conj(input)
    return linalg.dot(first, other)


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (default: the first dim of size 3), broadcasting the rest.

    Example:
        >>> dl.cross(dl.tensor([1.0, 0.0, 0.0]), dl.tensor([0.0, 1.0, 0.0])).tolist()
        [0.0, 0.0, 1.0]
    """
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        shape = layout.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((d for d, size in enumerate(shape) if size == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(input, other, dim)


def _cross(input, other, given_dim):
    dim = layout.normalize_dim(given_dim, input.ndim)
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {given_dim} must have length 3. Got {input.shape[dim]} "
                           f"and {other.shape[dim]}")
    a = [input.narrow(dim, i, 1) for i in range(3)]
    b = [other.narrow(dim, i, 1) for i in range(3)]
    parts = [pointwise.sub(pointwise.mul(a[(i + 1) % 3], b[(i + 2) % 3]), pointwise.mul(a[(i + 2) % 3], b[(i + 1) % 3]))
             for i in range(3)]
    return shape_ops.cat(parts, dim)


def linalg_cross(input, other, *, dim=-1):
    """``dl.linalg.cross``: the cross product along ``dim`` (default the last).

    Example:
        >>> dl.linalg.cross(dl.tensor([[0.0, 1.0, 0.0]]), dl.tensor([[0.0, 0.0, 1.0]])).tolist()
        [[1.0, 0.0, 0.0]]
    """
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    return _cross(input, other, dim)


def mv(input, vec, *, out=None):
    """Matrix times vector.

    Example:
        >>> dl.mv(dl.eye(2), dl.tensor([1.0, 2.0])).tolist()
        [1.0, 2.0]
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if out is not None:
        check_out_autograd("mv", out, input, vec)
        return write_out(out, linalg.matmul(input, vec))
    return linalg.matmul(input, vec)


def _scaled_sum(input, product, beta, alpha):
    """``beta * input + alpha * product``; with ``beta == 0`` the input is ignored (NaN in it too), as torch."""
    if alpha != 1:
        product = pointwise.mul(product, alpha)
    if beta == 0:
        shape = layout.broadcast_shapes(tuple(input.shape), tuple(product.shape))
        zeros = factories.zeros(shape, dtype=promote_types(input.dtype, product.dtype), device=input.device)
        return pointwise.add(zeros, product)
    return pointwise.add(input if beta == 1 else pointwise.mul(input, beta), product)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``.

    Example:
        >>> dl.addmv(dl.ones(2), dl.eye(2), dl.tensor([1.0, 2.0])).tolist()
        [2.0, 3.0]
    """
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``.

    Example:
        >>> dl.addr(dl.zeros(2, 2), dl.tensor([1.0, 2.0]), dl.tensor([1.0, 1.0])).tolist()
        [[1.0, 1.0], [2.0, 2.0]]
    """
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return _scaled_sum(input, contractions.outer(vec1, vec2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.

    Example:
        >>> dl.addbmm(dl.zeros(2, 2), dl.ones(3, 2, 1), dl.ones(3, 1, 2)).tolist()
        [[3.0, 3.0], [3.0, 3.0]]
    """
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor")
    return _scaled_sum(input, reductions.sum(linalg.bmm(batch1, batch2), 0), beta, alpha)


def chain_matmul(*matrices):
    """The product of the given 2-D matrices, left to right (torch's deprecated spelling of multi_dot).

    Example:
        >>> dl.chain_matmul(dl.eye(2), dl.ones(2, 3)).shape
        dl.Size([2, 3])
    """
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    result = matrices[0]
    for m in matrices[1:]:
        result = linalg.matmul(result, m)
    return result if len(matrices) > 1 else result.clone()


def trace(input):
    """The sum of the main diagonal of a matrix (integers sum in int64).

    Example:
        >>> dl.trace(dl.tensor([[1, 2], [3, 4]])).item()
        5
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return reductions.sum(diagonal(input))


# -- statistics -----------------------------------------------------------------------------
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in columns).

    Example:
        >>> dl.cov(dl.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(mr.float_dtype(x.dtype))
    weights = None
    for given in (fweights, aweights):
        if given is not None:
            weights = given if weights is None else pointwise.mul(weights, given)
    if weights is None:
        count = x.shape[1]
        mean = reductions.mean(x, 1, True)
        centered = pointwise.sub(x, mean)
        norm = max(count - correction, 0)
    else:
        total = reductions.sum(weights)
        mean = pointwise.div(reductions.sum(pointwise.mul(x, weights), 1, True), total)
        centered = pointwise.sub(x, mean)
        norm = total if correction == 0 else (
            pointwise.sub(total, pointwise.div(pointwise.mul(reductions.sum(pointwise.mul(weights, aweights)),
                                                             correction), total))
            if aweights is not None else pointwise.sub(total, correction))
        centered_weighted = pointwise.mul(centered, weights)
        product = linalg.matmul(centered_weighted, _conj_t(centered))
        result = pointwise.div(product, norm)
        return result.reshape(()) if input.ndim < 2 else result
    product = linalg.matmul(centered, _conj_t(centered))
    result = pointwise.div(product, norm)
    return result.reshape(()) if input.ndim < 2 else result


def _conj(x):
    if not x.dtype.is_complex:
        return x
    return complex_ops.complex(complex_ops.real(x), unary.neg(complex_ops.imag(x)))


def _conj_t(x):
    return _conj(x).transpose(0, 1)


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``, clipped to [-1, 1].

    Example:
        >>> dl.corrcoef(dl.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c.ndim == 0:
        return pointwise.div(c, c)
    d = unary.sqrt(diagonal(c))
    scaled = pointwise.div(pointwise.div(c, d.unsqueeze(1)), d.unsqueeze(0))
    return scaled if scaled.dtype.is_complex else comparison.clamp(scaled, -1, 1)


def pdist(input, p=2):
    """The ``p``-norm distances between all pairs of rows ``i < j``, flattened in row order.

    Example:
        >>> dl.pdist(dl.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
        [5.0, 1.0, 4.242640495300293]
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows, cols = triu_indices(n, n, 1, device=input.device)
    return linalg.norm(pointwise.sub(input[rows], input[cols]), p, dim=1)


METHODS = {name: globals()[name] for name in ("inner", "cross", "mv", "addmv", "addr", "addbmm", "trace",
                                               "matrix_exp")}
