"""Helpers shared by meta rules: broadcasting, promotion, output strides, reductions, in-place checks.

Every helper works on anything with tensor geometry (``TensorMeta``, ``Tensor`` or a
proxy), reading only ``_sizes``, ``_strides``, ``_dtype`` and ``_device``; Python
scalars may appear among the operands and are skipped where geometry is concerned.
"""
from __future__ import annotations

import operator

from ...tensor import layout
from ...tensor.dtype import (
    bfloat16, bool_, complex64, complex128, float16, float32, float64, get_default_dtype, int8, int16, int32,
    int64, result_type, uint8,
)
from ...tensor.meta import TensorMeta
from ...tensor.properties import TensorProperties
from ...tensor.symint import SymInt, same_values

# The names torch prints for scalar types in error messages ("result type Float ...").
TYPE_NAMES = {
    float16: "Half", float32: "Float", float64: "Double", int8: "Char", int16: "Short",
    int32: "Int", int64: "Long", uint8: "Byte", bool_: "Bool", bfloat16: "BFloat16", complex64: "ComplexFloat",
    complex128: "ComplexDouble",
}
# The lower-case C names used by a few matmul messages ("float != double").
C_TYPE_NAMES = {
    float16: "c10::Half", float32: "float", float64: "double", int8: "signed char",
    int16: "short int", int32: "int", int64: "long int", uint8: "unsigned char", bool_: "bool",
    complex64: "c10::complex<float>", complex128: "c10::complex<double>", bfloat16: "c10::BFloat16",
}


def is_tensor(value) -> bool:
    """True for tensors, proxies and TensorMetas (anything with tensor geometry)."""
    return isinstance(value, TensorProperties)


contiguous_strides = layout.contiguous_strides


def make_meta(shape, dtype, strides=None, device=None) -> TensorMeta:
    """A TensorMeta from already-normalized geometry (shape and strides as int tuples)."""
    return TensorMeta.from_geometry(shape, contiguous_strides(shape) if strides is None else strides, dtype, device)


def device_mismatch(first, second) -> RuntimeError:
    """The error torch raises when one op mixes tensors of two devices."""
    return RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {first} and {second}!"
    )


def common_device(tensors):
    """The device all ``tensors`` live on; RuntimeError in torch's words if they differ."""
    device = tensors[0]._device
    for t in tensors:
        other = t._device
        if other is not device and other != device:
            raise device_mismatch(device, other)
    return device


def float_dtype(dtype):
    """The dtype a float-only op computes in: ``dtype`` if floating or complex, else the default float."""
    return dtype if dtype.is_floating_point or dtype.is_complex else get_default_dtype()


def check_floating(meta, op_name: str) -> None:
    """Kernels that only exist for floating dtypes raise NotImplementedError as torch does."""
    if not meta._dtype.is_floating_point:
        raise NotImplementedError(f'"{op_name}" not implemented for \'{TYPE_NAMES[meta._dtype]}\'')


# -- pointwise ------------------------------------------------------------------------------
#: The Python ints a tensor op takes as an operand: int64's and uint64's ranges together.
_INT_OPERAND_RANGE = (-2**63, 2**64 - 1)


def check_int_operand(value: int) -> None:
    """A Python int operand beyond 64 bits raises OverflowError as torch does.

    The check is part of the meta rule so that tracing raises where eager code does: a
    loop growing an int past every dtype stops at the same operation compiled or not.
    """
    low, high = _INT_OPERAND_RANGE
    if value > high:
        raise OverflowError("int too big to convert")
    if value < low:
        raise OverflowError("can't convert negative int to unsigned")


def pointwise_meta(*inputs, dtype=None, compute_dtype=None, scalar_operands=True) -> TensorMeta:
    """Output meta of an elementwise op over ``inputs`` (tensors, metas, scalars or None).

    Shape broadcasts; ``dtype`` defaults to torch's result type of the inputs; device is the
    tensors' common device; strides follow ``pointwise_strides`` over the inputs as the
    op computes on them: converted to ``compute_dtype`` (default: the output dtype), see
    NOTE: [pointwise output strides]. ``scalar_operands=False`` says the op takes its
    scalars as plain arguments (``pow(x, 2)``, ``clamp(x, 0, 1)``) rather than as 0-dim
    operands (``x + 1``), which decides whether the same-shape fast path applies.

    Example:
        >>> pointwise_meta(TensorMeta((3, 1), dl.int32), 2.5).dtype
        dynamo_lite.float32
    """
    tensors = []
    scalars = []
    for x in inputs:
        if isinstance(x, TensorProperties):
            tensors.append(x)
        elif x is not None:
            if type(x) is int:
                check_int_operand(x)
            scalars.append(x)
    if not tensors:
        raise TypeError("a pointwise op needs at least one tensor argument")
    first = tensors[0]._sizes
    equal = _equality(tensors)
    if all(equal(t._sizes, first) for t in tensors):
        shape = first
    else:
        shape = layout.broadcast_shapes(*(t._sizes for t in tensors))
    if dtype is None:
        dtype = promoted(inputs, tensors, scalars)
    device = common_device(tensors)
    compute = dtype if compute_dtype is None else compute_dtype
    operands = [t if t._dtype is compute else converted(t, compute) for t in tensors]
    return make_meta(shape, dtype, pointwise_strides(shape, operands, scalar_operands and bool(scalars)), device)


def _equality(tensors):
    """``==`` for the sizes and strides of ``tensors`` in a fast-path check: plain on real
    tensors, guard-free on metas, whose sizes may be symbolic (NOTE: [guard-free fast paths]
    in tensor/symint.py; tracing hands meta rules metas only)."""
    return same_values if type(tensors[0]) is TensorMeta else operator.eq


def converted(meta, dtype):
    """The layout of ``meta`` converted to another dtype (``.to(dtype)``): the same strides if
    dense, else dense strides in the same dim order. Ops compute on such converted inputs, so
    these are the strides that decide a pointwise output's layout."""
    shape, strides = meta._sizes, meta._strides
    if not layout.is_non_overlapping_and_dense(shape, strides):
        strides = layout.strides_for_order(shape, _dim_order(shape, [meta]))
    return make_meta(shape, dtype, strides, meta._device)


_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3, SymInt: 1}


def promoted(inputs, tensors, scalars):
    """``result_type(*inputs)``, fast when the tensors share a dtype the scalars don't raise."""
    dtype = tensors[0]._dtype
    for t in tensors:
        if t._dtype is not dtype:
            return result_type(*inputs)
    category = dtype._category
    for x in scalars:
        c = _SCALAR_CATEGORY.get(type(x))
        if c is None or c > category:
            return result_type(*inputs)
    return dtype


def pointwise_strides(shape: tuple, tensors, has_scalar: bool = False) -> tuple:
    """Output strides of an elementwise op, preserving the inputs' memory format.

    NOTE: [pointwise output strides] Like torch's TensorIterator: when every operand has
    the output shape and all are contiguous (or all channels_last, or all share one
    dense layout), the output takes that layout. Otherwise the dims are ordered from
    innermost to outermost by comparing the operands' strides in argument order (the
    first operand that orders two dims decides; broadcast dims don't vote), and the
    output is dense in that order. So ``t + 1`` for a transposed ``t`` is transposed and
    a channels_last input gives a channels_last output. An operand whose dtype differs
    from the compute dtype votes with the layout of its converted copy (``converted``),
    as torch converts such inputs before it computes.
    """
    ndim = len(shape)
    if ndim <= 1:
        return (1,) * ndim
    contiguous = contiguous_strides(shape)
    equal = _equality(tensors)
    if not has_scalar and all(equal(t._sizes, shape) for t in tensors):
        first = tensors[0]._strides
        if all(equal(t._strides, contiguous) for t in tensors):
            return contiguous
        if all(layout.is_contiguous_strides(shape, t._strides) for t in tensors):
            return contiguous
        if ndim == 4 and all(layout.is_channels_last_strides(shape, t._strides) for t in tensors):
            return layout.channels_last_strides(shape)
        if all(equal(t._strides, first) for t in tensors) and layout.is_non_overlapping_and_dense(shape, first):
            return first
    return layout.strides_for_order(shape, _dim_order(shape, tensors))


def _dim_order(shape: tuple, tensors) -> tuple:
    """Dims from outermost to innermost, decided by the operands' strides (see NOTE above)."""
    ndim = len(shape)
    operand_strides = []
    for t in tensors:
        offset = ndim - len(t._sizes)
        strides = [0] * ndim
        for i, (size, stride) in enumerate(zip(t._sizes, t._strides)):
            # A broadcast dim (size 1 stretched to more) has no say in the order.
            strides[offset + i] = 0 if size == 1 and shape[offset + i] != 1 else stride
        operand_strides.append(strides)

    def should_swap(dim0: int, dim1: int) -> int:
        for strides in operand_strides:
            s0, s1 = strides[dim0], strides[dim1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # innermost first
    # Insertion sort that tolerates ambiguous (0) comparisons by looking further back.
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[dim0], perm[dim1])
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break
    return tuple(reversed(perm))


def memory_format_strides(meta, shape: tuple) -> tuple:
    """Strides for ``shape`` in ``meta``'s suggested memory format (contiguous or channels_last)."""
    if len(shape) == 4 and meta.suggest_memory_format() is layout.channels_last:
        return layout.channels_last_strides(shape)
    return contiguous_strides(shape)


# -- in-place -------------------------------------------------------------------------------
def check_inplace(self, dtype, shape) -> TensorMeta:
    """Validate writing a result of ``dtype``/``shape`` into ``self``; return ``self``'s meta.

    Raises RuntimeError as torch does when the result type cannot be cast to ``self``'s
    dtype (a float result into an int tensor), when broadcasting would grow ``self`` and
    when ``self`` has elements sharing memory (an expanded tensor).
    """
    if dtype._category > self._dtype._category:
        raise RuntimeError(
            f"result type {TYPE_NAMES[dtype]} can't be cast to the desired output type "
            f"{TYPE_NAMES[self._dtype]}"
        )
    if tuple(shape) != self._sizes:
        raise RuntimeError(
            f"output with shape {list(self._sizes)} doesn't match the broadcast shape {list(shape)}"
        )
    if any(stride == 0 and size > 1 for size, stride in zip(self._sizes, self._strides)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    return TensorMeta.of(self)


def inplace_variant(meta_rule):
    """The meta rule of ``op_`` from that of ``op``: same checks, result written into arg 0."""

    def inplace_meta(self, *args, **kwargs):
        result = meta_rule(self, *args, **kwargs)
        return check_inplace(self, result._dtype, result._sizes)

    inplace_meta.__name__ = f"{getattr(meta_rule, '__name__', 'meta')}_inplace"
    return inplace_meta


# -- reductions -----------------------------------------------------------------------------
def reduction_dims(dim, ndim: int, *, empty_means_all: bool = True) -> tuple:
    """Normalize a reduction ``dim`` argument (None, int or sequence) to a sorted tuple.

    A 0-dim tensor accepts dim 0/-1 and reduces over nothing; ``()`` means all dims, as
    torch's ``sum(dim=[])`` does.
    """
    if dim is None or (empty_means_all and isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = layout.normalize_dims(dim, ndim)
    return () if ndim == 0 else tuple(sorted(dims))


def reduced_shape(shape: tuple, dims: tuple, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def reduction_meta(input, dims: tuple, keepdim: bool, dtype=None) -> TensorMeta:
    """Output meta of a reduction over normalized ``dims``: contiguous, as torch allocates it."""
    shape = reduced_shape(input._sizes, dims, keepdim)
    return make_meta(shape, input._dtype if dtype is None else dtype, None, input._device)


def check_nonempty_reduction(input, dims: tuple, op_name: str) -> None:
    """max/min-like reductions have no identity: reducing an empty dim is an IndexError."""
    for d in dims:
        if input._sizes[d] == 0:
            raise IndexError(f"{op_name}(): Expected reduction dim {d} to have non-zero size.")


def same_meta(input, dtype=None) -> TensorMeta:
    """A contiguous meta of ``input``'s shape (softmax-like ops allocate contiguous outputs)."""
    return make_meta(input._sizes, input._dtype if dtype is None else dtype, None, input._device)
