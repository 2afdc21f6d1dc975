"""Binary arithmetic ops (add, sub, mul, div, floor_divide, remainder, pow), in place and as operators."""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import bool_
from ...tensor.symint import SymInt
from ...tensor.tensor import Tensor
from ..core import meta_rules as mr
from ..core.kernel_utils import as_dtype, compute_dtype, fit_scalar, integer_zero_check, promoted_dtype, quiet
from ..core.registry import register_op
from ..core.out_arg import check_out_autograd, write_out

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "pow",
]

POINTWISE = ("pointwise",)
INPLACE = ("inplace",)
ROUNDING_MODES = (None, "trunc", "floor")
_SCALAR_TYPES = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating, SymInt)  # SymInt: a traced size


# -- meta rules ---------------------------------------------------------------------------
def _check_alpha(dtype, alpha) -> None:
    if dtype is bool_:
        if not isinstance(alpha, (bool, np.bool_)):
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not dtype.is_floating_point and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add_meta(input, other, *, alpha=1):
    out = mr.pointwise_meta(input, other)
    if alpha != 1:
        _check_alpha(out._dtype, alpha)
    return out


def sub_meta(input, other, *, alpha=1):
    # torch rejects a bool operand on either side, whatever the result type would be.
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return add_meta(input, other, alpha=alpha)


def _is_bool(value) -> bool:
    if mr.is_tensor(value):
        return value._dtype is bool_
    return isinstance(value, (bool, np.bool_))


def true_div_meta(input, other):
    # True division of integers gives the default float dtype.
    return mr.pointwise_meta(input, other, dtype=mr.float_dtype(mr.result_type(input, other)))


def div_meta(input, other, *, rounding_mode=None):
    if rounding_mode not in ROUNDING_MODES:
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    if rounding_mode is None:
        return true_div_meta(input, other)
    return integer_div_meta(input, other, op_name=f"div_{rounding_mode}")


def remainder_meta(input, other):
    return integer_div_meta(input, other, op_name="remainder")


def integer_div_meta(input, other, op_name="div_floor"):
    out = mr.pointwise_meta(input, other)
    if out._dtype is bool_:
        raise NotImplementedError(f"\"{op_name}_cpu\" not implemented for 'Bool'")
    return out


def pow_meta(input, exponent):
    # A scalar exponent is an argument of the kernel, not a 0-dim operand (a scalar base is).
    out = mr.pointwise_meta(input, exponent, scalar_operands=not mr.is_tensor(input) or mr.is_tensor(exponent))
    if out._dtype is bool_ and mr.is_tensor(exponent):
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if (
        not out._dtype.is_floating_point
        and isinstance(exponent, (int, np.integer))
        and not isinstance(exponent, bool)
        and exponent < 0
    ):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return out


# -- kernels ------------------------------------------------------------------------------
def _scaled(xp, value, alpha, dtype):
    if alpha == 1:
        return value
    if hasattr(value, "shape"):
        return xp.multiply(value, alpha, dtype=dtype, casting="unsafe")
    return value * alpha


def add_kernel(xp, a, b, out, alpha=1):
    dt = compute_dtype(a, b, out)
    with quiet(xp):  # overflow gives inf silently, as in torch
        b = fit_scalar(_scaled(xp, b, alpha, dt), dt)
        return xp.add(fit_scalar(a, dt), b, out=out, dtype=dt, casting="unsafe")


def sub_kernel(xp, a, b, out, alpha=1):
    dt = compute_dtype(a, b, out)
    with quiet(xp):
        b = fit_scalar(_scaled(xp, b, alpha, dt), dt)
        return xp.subtract(fit_scalar(a, dt), b, out=out, dtype=dt, casting="unsafe")


def mul_kernel(xp, a, b, out):
    dt = compute_dtype(a, b, out)
    with quiet(xp):
        return xp.multiply(fit_scalar(a, dt), fit_scalar(b, dt), out=out, dtype=dt, casting="unsafe")


def true_div_kernel(xp, a, b, out):
    dt = out.dtype if a is not out else promoted_dtype(a, b)
    with quiet(xp):
        return xp.true_divide(a, b, out=out, dtype=dt, casting="unsafe")


def floor_div_kernel(xp, a, b, out):
    dt = compute_dtype(a, b, out)
    integer_zero_check(xp, b, dt, out)
    a, b = fit_scalar(a, dt), fit_scalar(b, dt)
    with quiet(xp):
        return xp.floor_divide(a, b, out=out, dtype=dt, casting="unsafe")


def trunc_div_kernel(xp, a, b, out):
    dt = compute_dtype(a, b, out)
    if np.dtype(dt).kind == "f":
        with quiet(xp):
            xp.true_divide(a, b, out=out, dtype=dt, casting="unsafe")
            return xp.trunc(out, out=out)
    integer_zero_check(xp, b, dt, out)
    a, b = fit_scalar(as_dtype(xp, a, dt), dt), fit_scalar(as_dtype(xp, b, dt), dt)
    # Integer division rounding toward zero: floor, then step back up where the signs differ.
    quotient = xp.floor_divide(a, b, dtype=dt, casting="unsafe")
    inexact = xp.not_equal(xp.multiply(quotient, b, dtype=dt, casting="unsafe"), a)
    inexact &= xp.less(a, 0) != xp.less(b, 0)
    return xp.add(quotient, inexact, out=out, dtype=dt, casting="unsafe")


def div_kernel(xp, a, b, out, rounding_mode=None):
    return _DIV_KERNELS[rounding_mode](xp, a, b, out)


_DIV_KERNELS = {None: true_div_kernel, "trunc": trunc_div_kernel, "floor": floor_div_kernel}


def remainder_kernel(xp, a, b, out):
    dt = compute_dtype(a, b, out)
    integer_zero_check(xp, b, dt, out)
    a, b = fit_scalar(a, dt), fit_scalar(b, dt)
    with quiet(xp):
        return xp.remainder(a, b, out=out, dtype=dt, casting="unsafe")


def pow_kernel(xp, a, b, out):
    dt = compute_dtype(a, b, out)
    if np.dtype(dt).kind == "b":  # a bool tensor to a bool power: x ** True is x, x ** False is True
        return xp.logical_or(a, not b, out=out)
    a, b = fit_scalar(a, dt), fit_scalar(b, dt)
    if np.dtype(dt).kind == "u" and hasattr(b, "shape"):
        b = b.astype(dt)  # unsigned math: a negative exponent wraps around, as in torch
    if np.dtype(dt).kind in "iub" and hasattr(b, "shape") and b.size and bool(xp.any(b < 0)):
        return _int_pow_negative(xp, a, b, out, dt)
    with quiet(xp):
        return xp.power(a, b, out=out, dtype=dt, casting="unsafe")


def _int_pow_negative(xp, a, b, out, dt):
    """Integer powers with negative exponents: 1 for base 1, +-1 for base -1, else 0 (as torch)."""
    negative = b < 0
    result = xp.power(a, xp.where(negative, 0, b), dtype=dt, casting="unsafe")
    minus_one = xp.where(b % 2 == 0, 1, -1).astype(dt)
    special = xp.where(a == 1, 1, xp.where(a == -1, minus_one, 0)).astype(dt)
    out[...] = xp.where(negative, special, result)
    return out


# -- registration -------------------------------------------------------------------------
# name -> (meta rule, kernel); each also gets an in-place "name_" variant.
BINARY_OPS = {
    "add": (add_meta, add_kernel),
    "sub": (sub_meta, sub_kernel),
    "mul": (mr.pointwise_meta, mul_kernel),
    "div": (div_meta, div_kernel),
    "floor_divide": (integer_div_meta, floor_div_kernel),
    "remainder": (remainder_meta, remainder_kernel),
    "pow": (pow_meta, pow_kernel),
}
OPS = {}
for _name, (_meta, _kernel) in BINARY_OPS.items():
    OPS[_name] = register_op(_name, meta=_meta, kernel=_kernel, tags=POINTWISE)
    OPS[_name + "_"] = register_op(_name + "_", meta=mr.inplace_variant(_meta), kernel=_kernel, tags=INPLACE)


# -- public functions ---------------------------------------------------------------------
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion.

    Example:
        >>> dl.add(dl.tensor([1, 2]), 1.5).tolist()
        [2.5, 3.5]
    """
    if out is not None:
        check_out_autograd("add", out, input, other)
        return write_out(out, add(input, other, alpha=alpha))
    return OPS["add"](input, other) if alpha == 1 else OPS["add"](input, other, alpha=alpha)


def sub(input, other, *, alpha=1):
    """``input - alpha * other``.

    Example:
        >>> dl.sub(dl.tensor([3, 4]), 1).tolist()
        [2, 3]
    """
    return OPS["sub"](input, other) if alpha == 1 else OPS["sub"](input, other, alpha=alpha)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (what ``1 - x`` computes)."""
    if alpha == 1:
        return OPS["sub"](other, input)
    return OPS["add"](other, OPS["mul"](input, -alpha))


def mul(input, other):
    """Elementwise product.

    Example:
        >>> dl.mul(dl.tensor([1, 2]), 3).tolist()
        [3, 6]
    """
    return OPS["mul"](input, other)


multiply = mul


def div(input, other, *, rounding_mode=None):
    """Division: true division (ints give floats), or rounded with ``"trunc"``/``"floor"``.

    Example:
        >>> dl.div(dl.tensor([-7, 7]), 2, rounding_mode="floor").tolist()
        [-4, 3]
    """
    if rounding_mode is None:
        return OPS["div"](input, other)
    return OPS["div"](input, other, rounding_mode=rounding_mode)


divide = div


def true_divide(input, other):
    """``div(input, other)`` without rounding."""
    return OPS["div"](input, other)


def floor_divide(input, other):
    """Division rounded toward minus infinity (``//``).

    Example:
        >>> dl.floor_divide(dl.tensor([-7.0, 7.0]), 2).tolist()
        [-4.0, 3.0]
    """
    return OPS["floor_divide"](input, other)


def remainder(input, other):
    """Python-style modulus: the result has the sign of the divisor (``%``).

    Example:
        >>> dl.remainder(dl.tensor([-7, 7]), 3).tolist()
        [2, 1]
    """
    return OPS["remainder"](input, other)


def pow(input, exponent):
    """``input ** exponent``; either may be a scalar.

    Example:
        >>> dl.pow(dl.tensor([2, 3]), 2).tolist()
        [4, 9]
    """
    return OPS["pow"](input, exponent)


def _inplace(name):
    op = OPS[name + "_"]

    def method(self, other, **kwargs):
        return op(self, other, **kwargs) if kwargs else op(self, other)

    method.__name__ = name + "_"
    method.__doc__ = f"In-place ``{name}``: writes into ``self`` (which keeps its dtype) and returns it."
    return method


def _add_inplace(self, other, *, alpha=1):
    return OPS["add_"](self, other) if alpha == 1 else OPS["add_"](self, other, alpha=alpha)


def _sub_inplace(self, other, *, alpha=1):
    return OPS["sub_"](self, other) if alpha == 1 else OPS["sub_"](self, other, alpha=alpha)


def _div_inplace(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return OPS["div_"](self, other)
    return OPS["div_"](self, other, rounding_mode=rounding_mode)


# -- operators --------------------------------------------------------------------------
_OPERAND_TYPES = (Tensor, *_SCALAR_TYPES)


def is_operand(value) -> bool:
    """What tensor operators accept on the other side: tensors and real Python/NumPy scalars."""
    return isinstance(value, _OPERAND_TYPES)


def binary_operator(fn, reflected: bool = False):
    """``Tensor.__op__`` (or ``__rop__``) from a function of two operands."""

    if reflected:
        def method(self, other):
            return fn(other, self) if is_operand(other) else NotImplemented
    else:
        def method(self, other):
            return fn(self, other) if is_operand(other) else NotImplemented

    method.__name__ = getattr(fn, "__name__", "operator")
    return method


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": true_divide, "floor_divide": floor_divide,
    "remainder": remainder, "pow": pow,
    "add_": _add_inplace, "sub_": _sub_inplace, "subtract_": _sub_inplace, "mul_": _inplace("mul"),
    "multiply_": _inplace("mul"), "div_": _div_inplace, "divide_": _div_inplace,
    "true_divide_": _inplace("div"), "floor_divide_": _inplace("floor_divide"),
    "remainder_": _inplace("remainder"), "pow_": _inplace("pow"),
    "__add__": binary_operator(OPS["add"]), "__radd__": binary_operator(OPS["add"]),
    "__iadd__": binary_operator(OPS["add_"]),
    "__sub__": binary_operator(OPS["sub"]), "__rsub__": binary_operator(OPS["sub"], True),
    "__isub__": binary_operator(OPS["sub_"]),
    "__mul__": binary_operator(OPS["mul"]), "__rmul__": binary_operator(OPS["mul"]),
    "__imul__": binary_operator(OPS["mul_"]),
    "__truediv__": binary_operator(OPS["div"]), "__rtruediv__": binary_operator(OPS["div"], True),
    "__itruediv__": binary_operator(OPS["div_"]),
    "__floordiv__": binary_operator(OPS["floor_divide"]),
    "__rfloordiv__": binary_operator(OPS["floor_divide"], True),
    "__ifloordiv__": binary_operator(OPS["floor_divide_"]),
    "__mod__": binary_operator(OPS["remainder"]), "__rmod__": binary_operator(OPS["remainder"], True),
    "__imod__": binary_operator(OPS["remainder_"]),
    "__pow__": binary_operator(OPS["pow"]), "__rpow__": binary_operator(OPS["pow"], True),
    "__ipow__": binary_operator(OPS["pow_"]),
}
