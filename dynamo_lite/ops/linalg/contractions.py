"""Tensor contractions and products: einsum, tensordot, outer, kron, diag, baddbmm."""
from __future__ import annotations

import string

import numpy as np

from ...tensor import layout
from ...tensor.dtype import int64
from ..core import meta_rules as mr
from .linalg import _bmm_shape, _check_expand, addmm_kernel, bmm_meta, mm, scale_kwargs
from ..pointwise.pointwise import mul
from ..core.registry import register_op
from ..core.out_arg import check_out_autograd, write_out
from ..shape.views import permute, reshape

__all__ = ["einsum", "tensordot", "outer", "ger", "kron", "diag", "baddbmm"]

MATMUL = ("matmul",)
LETTERS = frozenset(string.ascii_letters)


# -- einsum -------------------------------------------------------------------------------
class EinsumSpec:
    """A parsed einsum equation: each operand's labels and the output's labels.

    An ellipsis becomes the label ``"..."`` (it stands for the broadcast leading dims).
    """

    def __init__(self, equation: str, operand_ranks: list):
        equation = equation.replace(" ", "")
        lhs, arrow, rhs = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) > len(operand_ranks):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
        if len(terms) < len(operand_ranks):
            raise RuntimeError("einsum(): more operands were provided than specified in the equation")
        self.inputs = [self._labels(term, equation, lhs_offset) for term, lhs_offset in _offsets(terms)]
        for i, (labels, rank) in enumerate(zip(self.inputs, operand_ranks)):
            named = len([x for x in labels if x != "..."])
            if "..." not in labels and named != rank:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) does not match the number "
                    f"of dimensions ({rank}) for operand {i} and no ellipsis was given"
                )
            if named > rank:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than the number "
                    f"of dimensions ({rank}) for operand {i}"
                )
        counts: dict = {}
        for labels in self.inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        if arrow:
            self.output = self._labels(rhs, equation, len(lhs) + 2)
            for label in self.output:
                if self.output.count(label) > 1:
                    raise RuntimeError(f"einsum(): output subscript {label} appears more than once in the output")
                if label not in counts:
                    raise RuntimeError(
                        f"einsum(): output subscript {label} does not appear in the equation for any input operand"
                    )
        else:  # implicit output: the ellipsis, then labels seen once, in alphabetical order
            once = sorted(label for label, n in counts.items() if n == 1 and label != "...")
            self.output = (["..."] if "..." in counts else []) + once

    @staticmethod
    def _labels(term: str, equation: str, offset: int) -> list:
        labels, i = [], 0
        while i < len(term):
            if term.startswith("...", i):
                labels.append("...")
                i += 3
                continue
            if term[i] not in LETTERS:
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            labels.append(term[i])
            i += 1
        return labels

    def sizes(self, shapes: list) -> tuple:
        """(label -> size, broadcast ellipsis shape), checking that sizes agree or broadcast."""
        sizes: dict = {}
        ellipses = []
        for i, (labels, shape) in enumerate(zip(self.inputs, shapes)):
            for label, dim_sizes in self._dims_of(labels, shape):
                if label == "...":
                    ellipses.append(dim_sizes)
                    continue
                size = dim_sizes
                seen = sizes.get(label)
                if seen is None or seen == 1:
                    sizes[label] = size
                elif size not in (1, seen):
                    raise RuntimeError(
                        f"einsum(): subscript {label} has size {size} for operand {i} which does not broadcast "
                        f"with previously seen size {seen}"
                    )
        return sizes, layout.broadcast_shapes(*ellipses) if ellipses else ()

    @staticmethod
    def _dims_of(labels: list, shape: tuple):
        """Pairs (label, size) for named dims and ("...", sizes tuple) for the ellipsis."""
        ellipsis_rank = len(shape) - (len(labels) - ("..." in labels))
        dim = 0
        for label in labels:
            if label == "...":
                yield label, tuple(shape[dim:dim + ellipsis_rank])
                dim += ellipsis_rank
            else:
                yield label, shape[dim]
                dim += 1

    def output_shape(self, shapes: list) -> tuple:
        sizes, ellipsis = self.sizes(shapes)
        shape: tuple = ()
        for label in self.output:
            shape += ellipsis if label == "..." else (sizes[label],)
        return shape

    def numpy_equation(self, shapes: list) -> tuple:
        """(equation with the ellipsis spelled as spare letters, operand shapes with every
        ellipsis padded to the full rank by size-1 dims, the shapes they broadcast to)."""
        sizes, ellipsis = self.sizes(shapes)
        used = {label for labels in self.inputs for label in labels}
        spare = [c for c in string.ascii_letters if c not in used][:len(ellipsis)]

        def spell(labels):
            return "".join("".join(spare) if label == "..." else label for label in labels)

        padded, targets = [], []
        for labels, shape in zip(self.inputs, shapes):
            source: tuple = ()
            target: tuple = ()
            for label, dim_sizes in self._dims_of(labels, shape):
                if label == "...":  # right-aligned: missing leading ellipsis dims have size 1
                    source += (1,) * (len(ellipsis) - len(dim_sizes)) + dim_sizes
                    target += ellipsis
                else:
                    source += (dim_sizes,)
                    target += (sizes[label],)
            padded.append(source)
            targets.append(target)
        lhs = ",".join(spell(labels) for labels in self.inputs)
        return f"{lhs}->{spell(self.output)}", padded, targets


def _offsets(terms):
    offset = 0
    for term in terms:
        yield term, offset
        offset += len(term) + 1


def einsum_meta(equation, operands):
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    first = operands[0]
    for other in operands[1:]:
        if other._dtype is not first._dtype:
            raise RuntimeError(
                f"expected scalar type {mr.TYPE_NAMES[first._dtype]} but found {mr.TYPE_NAMES[other._dtype]}"
            )
    device = mr.common_device(operands)
    spec = EinsumSpec(equation, [len(t._sizes) for t in operands])
    shape = spec.output_shape([t._sizes for t in operands])
    dtype = first._dtype
    if len(operands) == 1 and not dtype.is_floating_point and _sums_a_label(spec):
        dtype = int64  # a single operand is summed like ``sum``, which widens integers
    return mr.make_meta(shape, dtype, None, device)


def _sums_a_label(spec: EinsumSpec) -> bool:
    return any(label not in spec.output for label in spec.inputs[0])


def einsum_kernel(xp, equation, operands, *, out):
    spec = EinsumSpec(equation, [a.ndim for a in operands])
    shapes = [a.shape for a in operands]
    numpy_equation, padded, targets = spec.numpy_equation(shapes)
    arrays = []
    for a, source, target in zip(operands, padded, targets):
        a = a.reshape(source) if a.shape != source else a
        arrays.append(xp.broadcast_to(a, target) if source != target else a)
    compute = np.float32 if out.dtype == np.float16 else out.dtype
    result = xp.einsum(numpy_equation, *arrays, dtype=compute, optimize=len(arrays) > 1)
    out[...] = result
    return out


# -- diag and baddbmm ---------------------------------------------------------------------
def _diagonal_length(rows: int, cols: int, offset: int) -> int:
    if offset >= 0:
        return max(0, min(rows, cols - offset))
    return max(0, min(rows + offset, cols))


def diag_meta(input, diagonal=0):
    rank = len(input._sizes)
    if rank not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {rank}D")
    if rank == 1:
        n = input._sizes[0] + abs(diagonal)
        shape = (n, n)
    else:
        shape = (_diagonal_length(*input._sizes, diagonal),)
    return mr.make_meta(shape, input._dtype, None, input._device)


def diag_kernel(xp, x, diagonal=0, *, out):
    out[...] = xp.diag(x, diagonal)
    return out


def baddbmm_meta(input, batch1, batch2, *, beta=1, alpha=1):
    if len(batch1._sizes) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(batch2._sizes) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _bmm_shape(batch1._sizes[0], batch1._sizes[2], batch2._sizes[0], batch2._sizes[1])
    if not input._dtype is batch1._dtype is batch2._dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {mr.C_TYPE_NAMES[input._dtype]}, "
            f"batch1: {mr.C_TYPE_NAMES[batch1._dtype]}, batch2: {mr.C_TYPE_NAMES[batch2._dtype]}"
        )
    out = bmm_meta(batch1, batch2)
    mr.common_device((input, batch1))
    _check_expand(input._sizes, out._sizes)
    return out


OPS = {
    "einsum": register_op("einsum", meta=einsum_meta, kernel=einsum_kernel, tags=MATMUL),
    "diag": register_op("diag", meta=diag_meta, kernel=diag_kernel),
    "baddbmm": register_op("baddbmm", meta=baddbmm_meta, kernel=addmm_kernel, tags=MATMUL),
}


# -- public functions ---------------------------------------------------------------------
def einsum(equation, *operands):
    """Sum of products over the labelled dims of ``operands`` (Einstein notation).

    Operands may be given one by one or as one list. The output is always a new
    contiguous tensor (torch returns a view for a pure permutation; values are equal).

    Example:
        >>> dl.einsum("ij,jk->ik", dl.ones(2, 3), dl.ones(3, 4)).shape
        dl.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return OPS["einsum"](equation, list(operands))


def _tensordot_dims(dims, a_rank: int) -> tuple:
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a_rank:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if mr.is_tensor(dims):
        raise TypeError("tensordot: dims given as a tensor are not supported; pass ints or lists of ints")
    dims_a, dims_b = dims
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return dims_a, dims_b


def tensordot(a, b, dims=2):
    """Contract ``dims`` (an int: a's last and b's first dims; or two lists) as one matrix product.

    Example:
        >>> dl.tensordot(dl.ones(2, 3, 4), dl.ones(3, 4, 5)).shape
        dl.Size([2, 5])
    """
    dims_a, dims_b = _tensordot_dims(dims, a.ndim)
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} and second "
                f"has size {b.shape[db]} in dim {db}"
            )
    contract_a = [layout.normalize_dim(d, a.ndim) for d in dims_a]
    contract_b = [layout.normalize_dim(d, b.ndim) for d in dims_b]
    free_a = [d for d in range(a.ndim) if d not in contract_a]
    free_b = [d for d in range(b.ndim) if d not in contract_b]
    k = layout.prod([a.shape[d] for d in contract_a])
    left = reshape(permute(a, free_a + contract_a), (-1, k) if k else (layout.prod([a.shape[d] for d in free_a]), 0))
    right = reshape(permute(b, contract_b + free_b), (k, layout.prod([b.shape[d] for d in free_b])))
    out_shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return reshape(mm(left, right), out_shape)


def outer(input, vec2, *, out=None):
    """The outer product of two vectors (``input[i] * vec2[j]``, with type promotion).

    Example:
        >>> dl.outer(dl.tensor([1, 2]), dl.tensor([1, 10])).tolist()
        [[1, 10], [2, 20]]
    """
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    if out is not None:
        check_out_autograd("outer", out, input, vec2)
        return write_out(out, mul(reshape(input, (-1, 1)), vec2))
    return mul(reshape(input, (-1, 1)), vec2)


ger = outer


def kron(input, other):
    """The Kronecker product: every element of ``input`` times a whole block ``other``.

    Example:
        >>> dl.kron(dl.tensor([1, 2]), dl.tensor([1, 10])).tolist()
        [1, 10, 2, 20]
    """
    rank = max(input.ndim, other.ndim)
    a_shape = (1,) * (rank - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (rank - other.ndim) + tuple(other.shape)
    # a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...), then merge each pair of dims.
    a = reshape(input, [s for size in a_shape for s in (size, 1)])
    b = reshape(other, [s for size in b_shape for s in (1, size)])
    return reshape(mul(a, b), [x * y for x, y in zip(a_shape, b_shape)])


def diag(input, diagonal=0):
    """A 1-D input becomes a matrix with it on a diagonal; a matrix gives a copy of a diagonal.

    Example:
        >>> dl.diag(dl.tensor([1, 2])).tolist()
        [[1, 0], [0, 2]]
    """
    return OPS["diag"](input) if diagonal == 0 else OPS["diag"](input, diagonal)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices.

    Example:
        >>> dl.baddbmm(dl.zeros(2, 3, 5), dl.ones(2, 3, 4), dl.ones(2, 4, 5)).shape
        dl.Size([2, 3, 5])
    """
    return OPS["baddbmm"](input, batch1, batch2, **scale_kwargs(beta, alpha))


METHODS = {name: globals()[name] for name in ("outer", "ger", "kron", "diag", "baddbmm")}
