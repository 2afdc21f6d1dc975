"""Comparisons, logical and bitwise ops, and selection: where, masked_fill, clamp, minimum, maximum."""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import bool_, result_type
from ...tensor.layout import broadcast_shapes
from ..core import meta_rules as mr
from ..core.kernel_utils import as_dtype, binary_dtype, fit_scalar, promoted_dtype
from .pointwise import binary_operator
from ..core.registry import register_table

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "where", "clamp", "clip", "clamp_min", "clamp_max", "minimum", "maximum", "masked_fill",
]

POINTWISE = ("pointwise",)


# -- meta rules ---------------------------------------------------------------------------
def predicate_meta(input, other):
    # Comparisons compute in the operands' promoted type and write bools.
    return mr.pointwise_meta(input, other, dtype=bool_, compute_dtype=result_type(input, other))


def logical_not_meta(input):
    return mr.pointwise_meta(input, dtype=bool_, compute_dtype=input._dtype)


def _integral_only(kernel_name: str, arity: int):
    def meta(*args):
        out = mr.pointwise_meta(*args[:arity])
        if out._dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{kernel_name}_cpu\" not implemented for '{mr.TYPE_NAMES[out._dtype]}'"
            )
        return out

    return meta


def where_meta(condition, input, other):
    if condition._dtype is not bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{mr.TYPE_NAMES[condition._dtype]}"
        )
    dtype = result_type(input, other)
    # The condition is read as it is; input and other are converted to the result dtype.
    operands = [condition] + [
        t if t._dtype is dtype else mr.converted(t, dtype) for t in (input, other) if mr.is_tensor(t)
    ]
    shape = broadcast_shapes(*(t._sizes for t in operands))
    strides = mr.pointwise_strides(shape, operands, len(operands) < 3)
    return mr.make_meta(shape, dtype, strides, mr.common_device(operands))


def masked_fill_meta(input, mask, value):
    if mask._dtype is not bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mr.C_TYPE_NAMES[mask._dtype]}"
        )
    if mr.is_tensor(value) and value._sizes:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{len(value._sizes)} dimension(s)."
        )
    shape = broadcast_shapes(input._sizes, mask._sizes)
    return mr.make_meta(shape, input._dtype, None, mr.common_device((input, mask)))


def clamp_meta(input, *, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # Scalar bounds are kernel arguments unless a tensor bound makes them 0-dim operands.
    tensor_bounds = mr.is_tensor(min) or mr.is_tensor(max)
    meta = mr.pointwise_meta(input, min, max, scalar_operands=tensor_bounds)
    if meta._dtype is bool_ and not tensor_bounds:
        kind = "clamp" if min is not None and max is not None else ("clamp_min" if max is None else "clamp_max")
        raise NotImplementedError(f"\"{kind}_scalar_cpu\" not implemented for 'Bool'")
    return meta


# -- kernels ------------------------------------------------------------------------------
def _compare_kernel(ufunc):
    """Compare in the promoted dtype (as torch does: a float16 tensor vs a float32 scalar
    tensor compares in float16, and ``uint8_tensor < -1`` compares with -1 wrapped to 255),
    writing the bools into ``out``."""

    def kernel(xp, a, b, out):
        dt = binary_dtype(a, b)
        return ufunc(fit_scalar(as_dtype(xp, a, dt), dt), fit_scalar(as_dtype(xp, b, dt), dt), out=out)

    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


def _logical_kernel(ufunc):
    def kernel(xp, *args, out):
        return ufunc(*args, out=out)

    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


def _arith_kernel(ufunc):
    def kernel(xp, *args, out):
        dt = out.dtype if args[0] is not out else promoted_dtype(*args)
        return ufunc(*(fit_scalar(a, dt) for a in args), out=out, dtype=dt, casting="unsafe")

    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


_SAME_SIZE_INTS = {4: np.int32, 8: np.int64}


def _bits(xp, value, dtype, ints):
    """``value`` (an array of ``dtype`` or a Python number) as integers of the same bits, or None."""
    if isinstance(value, (bool, int, float)):
        return xp.asarray(fit_scalar(value, dtype), dtype=dtype).view(ints)
    return value.view(ints) if getattr(value, "dtype", None) == dtype else None


def _bit_select(xp, condition, a, b, out) -> bool:
    """where for a float32/float64 ``out`` as ``b ^ ((a ^ b) & -condition)`` on the bits; False if not applicable.

    A masked copy branches per element (~2 ms for 0.5 M float32 under a random mask, as
    relu's derivative has); these passes do not branch, and move exactly the same bits.
    """
    ints = _SAME_SIZE_INTS.get(out.dtype.itemsize)
    if xp is not np or out.dtype.kind != "f" or ints is None or getattr(condition, "dtype", None) != np.bool_:
        return False
    a_bits, b_bits = _bits(xp, a, out.dtype, ints), _bits(xp, b, out.dtype, ints)
    if a_bits is None or b_bits is None or (b_bits.ndim and xp.shares_memory(out, b)):
        return False
    mask = xp.subtract(0, condition, dtype=ints)  # all ones where the condition holds
    out_bits = out.view(ints)
    if not b_bits.ndim and not b_bits:  # where(c, a, 0.0): just a's bits under the mask
        xp.bitwise_and(a_bits, mask, out=out_bits)
        return True
    flips = xp.bitwise_and(xp.bitwise_xor(a_bits, b_bits), mask)
    xp.bitwise_xor(flips, b_bits, out=out_bits)
    return True


def where_kernel(xp, condition, a, b, out):
    if _bit_select(xp, condition, a, b, out):
        return out
    xp.copyto(out, fit_scalar(b, out.dtype), casting="unsafe")
    xp.copyto(out, fit_scalar(a, out.dtype), casting="unsafe", where=condition)
    return out


def masked_fill_kernel(xp, x, mask, value, *, out):
    if x is not out:
        xp.copyto(out, x)
    xp.copyto(out, value, casting="unsafe", where=mask)
    return out


def clamp_kernel(xp, x, out, min=None, max=None):
    dt = out.dtype
    if min is not None:
        xp.maximum(x, fit_scalar(min, dt), out=out, dtype=dt, casting="unsafe")
        x = out
    if max is not None:
        xp.minimum(x, fit_scalar(max, dt), out=out, dtype=dt, casting="unsafe")
    return out


# -- registration -------------------------------------------------------------------------
# name -> (meta rule, kernel, has in-place variant)
ELEMENTWISE_OPS = {
    "eq": (predicate_meta, _compare_kernel(np.equal), False),
    "ne": (predicate_meta, _compare_kernel(np.not_equal), False),
    "lt": (predicate_meta, _compare_kernel(np.less), False),
    "le": (predicate_meta, _compare_kernel(np.less_equal), False),
    "gt": (predicate_meta, _compare_kernel(np.greater), False),
    "ge": (predicate_meta, _compare_kernel(np.greater_equal), False),
    "logical_and": (predicate_meta, _logical_kernel(np.logical_and), False),
    "logical_or": (predicate_meta, _logical_kernel(np.logical_or), False),
    "logical_xor": (predicate_meta, _logical_kernel(np.logical_xor), False),
    "logical_not": (logical_not_meta, _logical_kernel(np.logical_not), False),
    "bitwise_and": (_integral_only("bitwise_and", 2), _arith_kernel(np.bitwise_and), True),
    "bitwise_or": (_integral_only("bitwise_or", 2), _arith_kernel(np.bitwise_or), True),
    "bitwise_xor": (_integral_only("bitwise_xor", 2), _arith_kernel(np.bitwise_xor), True),
    "bitwise_not": (_integral_only("bitwise_not", 1), _arith_kernel(np.invert), True),
    "minimum": (mr.pointwise_meta, _arith_kernel(np.minimum), False),
    "maximum": (mr.pointwise_meta, _arith_kernel(np.maximum), False),
    "where": (where_meta, where_kernel, False),
    "clamp": (clamp_meta, clamp_kernel, True),
    "masked_fill": (masked_fill_meta, masked_fill_kernel, True),
}
OPS = register_table(ELEMENTWISE_OPS, POINTWISE, mr.inplace_variant)


# -- public functions ---------------------------------------------------------------------
def _public(name: str, doc: str, arity: int = 2):
    op = OPS[name]
    if arity == 1:
        def fn(input):
            return op(input)
    else:
        def fn(input, other):
            return op(input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


eq = _public("eq", "Elementwise ``input == other`` (bool result).\n\nExample:\n    >>> dl.eq(dl.tensor([1, 2]), 2).tolist()\n    [False, True]")
ne = not_equal = _public("ne", "Elementwise ``input != other``.")
lt = less = _public("lt", "Elementwise ``input < other``.")
le = less_equal = _public("le", "Elementwise ``input <= other``.")
gt = greater = _public("gt", "Elementwise ``input > other``.\n\nExample:\n    >>> dl.gt(dl.tensor([1, 3]), 2).tolist()\n    [False, True]")
ge = greater_equal = _public("ge", "Elementwise ``input >= other``.")
logical_and = _public("logical_and", "Truth of both operands (nonzero is true).")
logical_or = _public("logical_or", "Truth of either operand.")
logical_xor = _public("logical_xor", "Truth of exactly one operand.")
logical_not = _public("logical_not", "``True`` where the element is zero.", arity=1)
bitwise_and = _public("bitwise_and", "Bitwise AND of integer or bool tensors (``&``).")
bitwise_or = _public("bitwise_or", "Bitwise OR of integer or bool tensors (``|``).")
bitwise_xor = _public("bitwise_xor", "Bitwise XOR of integer or bool tensors (``^``).")
bitwise_not = _public("bitwise_not", "Bitwise NOT (logical NOT for bool tensors, ``~``).", arity=1)
minimum = _public("minimum", "Elementwise minimum (NaN propagates).\n\nExample:\n    >>> dl.minimum(dl.tensor([1, 5]), dl.tensor([3, 2])).tolist()\n    [1, 2]")
maximum = _public("maximum", "Elementwise maximum (NaN propagates).")


def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other`` (either may be a scalar).

    Example:
        >>> x = dl.tensor([-1.0, 2.0])
        >>> dl.where(x > 0, x, 0.0).tolist()
        [0.0, 2.0]
    """
    return OPS["where"](condition, input, other)


def masked_fill(input, mask, value):
    """``input`` with ``value`` where the boolean ``mask`` (broadcast) is true.

    Example:
        >>> x = dl.tensor([1.0, 2.0])
        >>> dl.masked_fill(x, x > 1, 0.0).tolist()
        [1.0, 0.0]
    """
    return OPS["masked_fill"](input, mask, value)


def masked_fill_(self, mask, value):
    """In-place ``masked_fill``; ``mask`` must broadcast to ``self``'s shape."""
    return OPS["masked_fill_"](self, mask, value)


def _bounds(min, max) -> dict:
    bounds = {}
    if min is not None:
        bounds["min"] = min
    if max is not None:
        bounds["max"] = max
    return bounds


def clamp(input, min=None, max=None):
    """Limit ``input`` to ``[min, max]``; either bound may be None, a scalar or a tensor.

    Example:
        >>> dl.clamp(dl.tensor([-2, 0, 5]), min=-1, max=3).tolist()
        [-1, 0, 3]
    """
    return OPS["clamp"](input, **_bounds(min, max))


clip = clamp


def clamp_min(input, min):
    """``clamp(input, min=min)``."""
    return OPS["clamp"](input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)``."""
    return OPS["clamp"](input, max=max)


def clamp_(self, min=None, max=None):
    """In-place ``clamp``."""
    return OPS["clamp_"](self, **_bounds(min, max))


def clamp_min_(self, min):
    """In-place ``clamp(min=min)``."""
    return OPS["clamp_"](self, min=min)


def clamp_max_(self, max):
    """In-place ``clamp(max=max)``."""
    return OPS["clamp_"](self, max=max)


def _where_method(self, condition, other):
    """``x.where(condition, other)`` is ``where(condition, x, other)``."""
    return OPS["where"](condition, self, other)


def _inplace(name):
    op = OPS[name + "_"]

    def method(self, *args):
        return op(self, *args)

    method.__name__ = name + "_"
    return method


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return OPS["bitwise_not"](self)


METHODS = {name: globals()[name] for name in __all__ if name != "where"}
METHODS.update({
    "where": _where_method, "clamp_": clamp_, "clip_": clamp_, "masked_fill_": masked_fill_,
    "clamp_min_": clamp_min_, "clamp_max_": clamp_max_,
    "bitwise_and_": _inplace("bitwise_and"), "bitwise_or_": _inplace("bitwise_or"),
    "bitwise_xor_": _inplace("bitwise_xor"), "bitwise_not_": _inplace("bitwise_not"),
    "__eq__": binary_operator(OPS["eq"]), "__ne__": binary_operator(OPS["ne"]),
    "__lt__": binary_operator(OPS["lt"]), "__le__": binary_operator(OPS["le"]),
    "__gt__": binary_operator(OPS["gt"]), "__ge__": binary_operator(OPS["ge"]),
    "__and__": binary_operator(OPS["bitwise_and"]), "__rand__": binary_operator(OPS["bitwise_and"]),
    "__iand__": binary_operator(OPS["bitwise_and_"]),
    "__or__": binary_operator(OPS["bitwise_or"]), "__ror__": binary_operator(OPS["bitwise_or"]),
    "__ior__": binary_operator(OPS["bitwise_or_"]),
    "__xor__": binary_operator(OPS["bitwise_xor"]), "__rxor__": binary_operator(OPS["bitwise_xor"]),
    "__ixor__": binary_operator(OPS["bitwise_xor_"]),
    "__invert__": _invert,
})
