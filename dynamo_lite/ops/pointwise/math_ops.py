"""More elementwise math: lerp, hypot, atan2, fmod, frac, erfinv, nan_to_num, addcmul, addcdiv, isclose."""
from __future__ import annotations

import math

import numpy as np

from ...tensor.dtype import bool_
from ..core import meta_rules as mr
from ..core.kernel_utils import fit_scalar, integer_zero_check, quiet
from ..core.registry import register_table
from .unary import erf_kernel, erfc_nonnegative

__all__ = [
    "lerp", "hypot", "atan2", "arctan2", "fmod", "frac", "erfinv", "nan_to_num", "addcmul", "addcdiv",
    "isclose", "allclose", "equal",
]

POINTWISE = ("pointwise",)


# -- meta rules ---------------------------------------------------------------------------
def _not_implemented(kernel_name: str, dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{mr.TYPE_NAMES[dtype]}\'')


def lerp_meta(input, end, weight):
    # torch's lerp does not promote: end (and a tensor weight) must have input's dtype.
    for name, other in (("end", end), ("weight", weight)):
        if mr.is_tensor(other) and other._dtype is not input._dtype:
            raise RuntimeError(
                f"expected dtype {mr.C_TYPE_NAMES[input._dtype]} for `{name}` but got dtype "
                f"{mr.C_TYPE_NAMES[other._dtype]}"
            )
    if not input._dtype.is_floating_point:
        kind = "lerp_kernel_tensor" if mr.is_tensor(weight) else "lerp_kernel_scalar"
        raise _not_implemented(kind, input._dtype)
    return mr.pointwise_meta(input, end, weight, scalar_operands=False)


def _floating_binary_meta(kernel_name: str):
    """Binary ops defined for floats only (hypot): integer results are NotImplementedError."""

    def meta(input, other):
        out = mr.pointwise_meta(input, other)
        if not out._dtype.is_floating_point:
            raise _not_implemented(kernel_name, out._dtype)
        return out

    return meta


def atan2_meta(input, other):
    # Integer operands give the default float dtype, as true division does.
    return mr.pointwise_meta(input, other, dtype=mr.float_dtype(mr.result_type(input, other)))


def fmod_meta(input, other):
    out = mr.pointwise_meta(input, other)
    if out._dtype is bool_:
        raise _not_implemented("fmod_cpu", bool_)
    return out


def frac_meta(input):
    if not input._dtype.is_floating_point:
        raise _not_implemented("frac_cpu", input._dtype)
    return mr.pointwise_meta(input, dtype=input._dtype)


def float_unary_meta(input):
    return mr.pointwise_meta(input, dtype=mr.float_dtype(input._dtype))


def nan_to_num_meta(input, *, nan=0.0, posinf=None, neginf=None):
    return mr.pointwise_meta(input, dtype=input._dtype)


def addcmul_meta(input, tensor1, tensor2, *, value=1):
    out = mr.pointwise_meta(input, tensor1, tensor2)
    if out._dtype is bool_ and not isinstance(value, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    return out


ADDCDIV_INTEGER_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
    "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
    "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
    "implementation: (input + value * tensor1 / tensor2), for all dtypes."
)


def addcdiv_meta(input, tensor1, tensor2, *, value=1):
    if not any(t._dtype.is_floating_point or t._dtype.is_complex for t in (tensor1, tensor2)):
        raise RuntimeError(ADDCDIV_INTEGER_MESSAGE)
    return mr.pointwise_meta(input, tensor1, tensor2)


def isclose_meta(input, other, *, rtol=1e-05, atol=1e-08, equal_nan=False):
    if mr.is_tensor(other) and other._dtype is not input._dtype:
        raise RuntimeError(
            f"{mr.TYPE_NAMES[input._dtype]} did not match {mr.TYPE_NAMES[other._dtype]}"
        )
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return mr.pointwise_meta(input, other, dtype=bool_, compute_dtype=input._dtype)


# -- kernels ------------------------------------------------------------------------------
def lerp_kernel(xp, start, end, weight, out):
    # torch's formula: from the nearer end, so weight 0 gives start and weight 1 gives end
    # exactly; float16 computes in float32.
    dt = np.float32 if out.dtype == np.float16 else out.dtype
    with quiet(xp):
        diff = xp.subtract(end, start, dtype=dt)
        if isinstance(weight, (int, float)):  # one weight (an optimizer's): only its end's formula
            if abs(weight) < 0.5:
                xp.add(start, xp.multiply(weight, diff, dtype=dt), dtype=dt, out=out, casting="unsafe")
            else:
                xp.subtract(end, xp.multiply(diff, xp.subtract(1, weight, dtype=dt), dtype=dt), dtype=dt, out=out,
                            casting="unsafe")
            return out
        low = xp.add(start, xp.multiply(weight, diff, dtype=dt), dtype=dt)
        high = xp.subtract(end, xp.multiply(diff, xp.subtract(1, weight, dtype=dt), dtype=dt), dtype=dt)
        out[...] = xp.where(xp.abs(weight) < 0.5, low, high)
    return out


def _ufunc_kernel(ufunc):
    def kernel(xp, *args, out):
        with quiet(xp):
            return ufunc(*args, out=out, dtype=out.dtype, casting="unsafe")

    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


def fmod_kernel(xp, a, b, out):
    dt = out.dtype
    integer_zero_check(xp, b, dt, out)
    with quiet(xp):
        return xp.fmod(fit_scalar(a, dt), fit_scalar(b, dt), out=out, dtype=dt, casting="unsafe")


def frac_kernel(xp, x, out):
    with quiet(xp):
        return xp.subtract(x, xp.trunc(x), out=out)


# NOTE: [erfinv] NumPy has no erfinv. A first guess from M. Giles' single-precision
# polynomial approximation ("Approximating the erfinv function", GPU Computing Gems, 2010;
# relative error ~1e-7) is refined by Newton steps: on erf(x) = |y| for |y| < 0.5, and on
# log(erfc(x)) = log(1 - |y|) beyond, which stays well conditioned in the tails (1 - |y| is
# exact there). Accuracy in float64 is then that of erf/erfc (NOTE: [erf]): ~1e-15 relative
# for |y| < 0.999, degrading to ~1e-9 at 1 - 1e-15.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_NEWTON_STEPS = 3


def _horner(xp, coeffs, w):
    acc = xp.full_like(w, coeffs[0])
    for c in coeffs[1:]:
        acc *= w
        acc += c
    return acc


def _newton_step(xp, x, a, complement):
    """One Newton step toward erf(x) = a (x >= 0), in the better-conditioned form for ``a``."""
    slope = _TWO_OVER_SQRT_PI * xp.exp(-x * x)
    erf = xp.empty_like(x)
    erf_kernel(xp, x, erf)
    central = x - (erf - a) / slope
    erfc = erfc_nonnegative(xp, x)
    tail = x + (xp.log(erfc) - xp.log(complement)) * erfc / slope
    return xp.where(a < 0.5, central, tail)


def erfinv_kernel(xp, y, out):
    y = xp.asarray(y, dtype=np.float64)
    with quiet(xp):
        a = xp.abs(y)
        w = -xp.log((1.0 - a) * (1.0 + a))
        central = _horner(xp, _GILES_CENTRAL, w - 2.5)
        tail = _horner(xp, _GILES_TAIL, xp.sqrt(w) - 3.0)
        x = xp.where(w < 5.0, central, tail) * a
        complement = 1.0 - a
        for _ in range(_NEWTON_STEPS):
            x = _newton_step(xp, x, a, complement)
        x = xp.where(a == 1.0, xp.inf, x)
        x = xp.where(a > 1.0, xp.nan, x)
        x = xp.where(a == 0.0, 0.0, x)
        out[...] = xp.copysign(x, y)
    return out


def nan_to_num_kernel(xp, x, out, nan=0.0, posinf=None, neginf=None):
    if out.dtype.kind != "f":  # integers and bools hold no NaN or infinity
        if x is not out:
            out[...] = x
        return out
    info = np.finfo(out.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    with quiet(xp):
        out[...] = xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
    return out


def _cast_value(value, dtype):
    """The scalar ``value`` as the result dtype holds it (torch truncates a float for integers)."""
    if np.dtype(dtype).kind in "iu" and isinstance(value, float):
        return int(value)
    return value


def _addc_kernel(ufunc):
    def kernel(xp, input, tensor1, tensor2, out, value=1):
        dt = out.dtype
        value = _cast_value(value, dt)
        if dt.kind == "f":
            return _addc_half_aware(xp, input, tensor1, tensor2, value, ufunc, out)
        if dt.kind == "b":
            return xp.logical_or(input, xp.logical_and(xp.logical_and(tensor1, tensor2), value), out=out)
        # Not in place: tensor1 alone may be smaller than its broadcast with tensor2.
        scaled = xp.multiply(xp.multiply(tensor1, value, dtype=dt, casting="unsafe"), tensor2,
                             dtype=dt, casting="unsafe")
        return xp.add(input, scaled, out=out, dtype=dt, casting="unsafe")

    kernel.__name__ = f"addc{ufunc.__name__[:3]}_kernel"
    return kernel


def _addc_half_aware(xp, input, tensor1, tensor2, value, ufunc, out):
    """float16 computes in float32 (as torch's CPU kernels do) and rounds once."""
    dt = np.float32 if out.dtype == np.float16 else out.dtype
    with quiet(xp):
        # Not in place: tensor1 alone may be smaller than its broadcast with tensor2.
        scaled = ufunc(xp.multiply(tensor1, value, dtype=dt, casting="unsafe"), tensor2, dtype=dt, casting="unsafe")
        if dt is out.dtype:
            return xp.add(input, scaled, out=out, dtype=dt, casting="unsafe")
        out[...] = xp.add(input, scaled, dtype=dt, casting="unsafe")
    return out


def isclose_kernel(xp, a, b, out, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.dtype.kind in "iub" and (not hasattr(b, "dtype") or b.dtype.kind in "iub"):
        a = a.astype(np.float64)  # integer differences must not wrap around
    with quiet(xp):
        out[...] = xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return out


# -- registration -------------------------------------------------------------------------
# name -> (meta rule, kernel, has an in-place variant)
MATH_OPS = {
    "lerp": (lerp_meta, lerp_kernel, True),
    "hypot": (_floating_binary_meta("hypot_cpu"), _ufunc_kernel(np.hypot), True),
    "atan2": (atan2_meta, _ufunc_kernel(np.arctan2), True),
    "fmod": (fmod_meta, fmod_kernel, True),
    "frac": (frac_meta, frac_kernel, True),
    "erfinv": (float_unary_meta, erfinv_kernel, True),
    "nan_to_num": (nan_to_num_meta, nan_to_num_kernel, True),
    "addcmul": (addcmul_meta, _addc_kernel(np.multiply), True),
    "addcdiv": (addcdiv_meta, _addc_kernel(np.divide), True),
    "isclose": (isclose_meta, isclose_kernel, False),
}
OPS = register_table(MATH_OPS, POINTWISE, mr.inplace_variant)


# -- public functions ---------------------------------------------------------------------
def _require_tensor(fn_name: str, value, position: int, name: str = "other") -> None:
    if not mr.is_tensor(value):
        raise TypeError(
            f"{fn_name}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
        )


def _pick(name: str, inplace: bool):
    return OPS[name + "_" if inplace else name]


def _lerp(input, end, weight, inplace=False):
    _require_tensor("lerp", end, 2, "end")
    return _pick("lerp", inplace)(input, end, weight)


def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` is a number or a tensor.

    Example:
        >>> dl.lerp(dl.tensor([0.0, 10.0]), dl.tensor([10.0, 20.0]), 0.5).tolist()
        [5.0, 15.0]
    """
    return _lerp(input, end, weight)


def hypot(input, other):
    """``sqrt(input**2 + other**2)`` without overflow (floating tensors only).

    Example:
        >>> dl.hypot(dl.tensor([3.0]), dl.tensor([4.0])).tolist()
        [5.0]
    """
    _require_tensor("hypot", other, 2)
    return OPS["hypot"](input, other)


def atan2(input, other):
    """The angle of the point ``(other, input)``, in ``(-pi, pi]``.

    Example:
        >>> round(dl.atan2(dl.tensor([1.0]), dl.tensor([1.0])).item(), 4)
        0.7854
    """
    _require_tensor("atan2", other, 2)
    return OPS["atan2"](input, other)


arctan2 = atan2


def fmod(input, other):
    """C-style remainder: the result has the sign of ``input`` (``remainder`` follows ``other``).

    Example:
        >>> dl.fmod(dl.tensor([-7, 7]), 3).tolist()
        [-1, 1]
    """
    return OPS["fmod"](input, other)


def frac(input):
    """The fractional part ``input - trunc(input)`` (floating tensors only).

    Example:
        >>> dl.frac(dl.tensor([-1.25, 2.5])).tolist()
        [-0.25, 0.5]
    """
    return OPS["frac"](input)


def erfinv(input):
    """The inverse error function (see NOTE: [erfinv]); integer inputs give the default float dtype.

    Example:
        >>> round(dl.erfinv(dl.tensor([0.5])).item(), 6)
        0.476936
    """
    return OPS["erfinv"](input)


def _nan_to_num_kwargs(nan, posinf, neginf) -> dict:
    kwargs = {} if nan == 0.0 else {"nan": nan}
    if posinf is not None:
        kwargs["posinf"] = posinf
    if neginf is not None:
        kwargs["neginf"] = neginf
    return kwargs


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: the dtype's extremes).

    Example:
        >>> dl.nan_to_num(dl.tensor([float("nan"), 1.0])).tolist()
        [0.0, 1.0]
    """
    return OPS["nan_to_num"](input, **_nan_to_num_kwargs(nan, posinf, neginf))


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return OPS["nan_to_num_"](self, **_nan_to_num_kwargs(nan, posinf, neginf))


def _addc(name: str, inplace: bool = False):
    op = _pick(name, inplace)

    def fn(input, tensor1, tensor2, *, value=1):
        return op(input, tensor1, tensor2) if value == 1 else op(input, tensor1, tensor2, value=value)

    fn.__name__ = fn.__qualname__ = name + ("_" if inplace else "")
    return fn


addcmul = _addc("addcmul")
addcmul.__doc__ = """``input + value * tensor1 * tensor2``.

    Example:
        >>> dl.addcmul(dl.ones(2), dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]), value=0.5).tolist()
        [2.5, 5.0]
    """
addcdiv = _addc("addcdiv")
addcdiv.__doc__ = """``input + value * tensor1 / tensor2`` (integer ``tensor1``/``tensor2`` are rejected).

    Example:
        >>> dl.addcdiv(dl.ones(2), dl.tensor([1.0, 2.0]), dl.tensor([4.0, 4.0])).tolist()
        [1.25, 1.5]
    """


def _isclose_kwargs(rtol, atol, equal_nan) -> dict:
    defaults = {"rtol": 1e-05, "atol": 1e-08, "equal_nan": False}
    given = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    return {k: v for k, v in given.items() if v != defaults[k]}


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (bool result).

    Example:
        >>> dl.isclose(dl.tensor([1.0, 2.0]), dl.tensor([1.0 + 1e-9, 2.1])).tolist()
        [True, False]
    """
    return OPS["isclose"](input, other, **_isclose_kwargs(rtol, atol, equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element is close (a Python bool: it reads the data, so compiled code breaks the graph here).

    Example:
        >>> dl.allclose(dl.tensor([1.0]), dl.tensor([1.0 + 1e-9]))
        True
    """
    _require_tensor("allclose", other, 2)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> bool:
    """Whether both have the same size and the same elements (a Python bool: it reads the data, so
    compiled code breaks the graph here). NaN equals nothing, as in ``==``.

    Example:
        >>> dl.equal(dl.tensor([1, 2]), dl.tensor([1.0, 2.0])), dl.equal(dl.ones(2), dl.ones(3))
        (True, False)
    """
    _require_tensor("equal", other, 2)
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all())


def _inplace_method(name: str):
    op = OPS[name + "_"]

    def method(self, *args):
        return op(self, *args)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``: writes into ``self`` and returns it."
    return method


def _lerp_(self, end, weight):
    return _lerp(self, end, weight, inplace=True)


def _checked_binary_(name: str):
    op = OPS[name + "_"]

    def method(self, other):
        _require_tensor(name + "_", other, 1)
        return op(self, other)

    method.__name__ = method.__qualname__ = name + "_"
    return method


METHODS = {name: globals()[name] for name in __all__}
METHODS.update({
    "lerp_": _lerp_, "hypot_": _checked_binary_("hypot"), "atan2_": _checked_binary_("atan2"),
    "arctan2_": _checked_binary_("atan2"), "fmod_": _inplace_method("fmod"), "frac_": _inplace_method("frac"),
    "erfinv_": _inplace_method("erfinv"), "nan_to_num_": _nan_to_num_,
    "addcmul_": _addc("addcmul", inplace=True), "addcdiv_": _addc("addcdiv", inplace=True),
})
