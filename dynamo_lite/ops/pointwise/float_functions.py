"""Elementwise floating-point functions: logaddexp, copysign, fmax, nextafter, frexp, sinc, xlogy ...

Ops NumPy has a ufunc for are registry ops; the others are compositions of registry ops,
so graphs capture them and autograd differentiates them either way.
"""
from __future__ import annotations

import math
from collections import namedtuple

from ...tensor.dtype import bool_, complex128, float64, int32
from . import comparison
from ..core import meta_rules as mr
from . import pointwise, unary
from ..core.kernel_utils import quiet
from .math_ops import _floating_binary_meta, _require_tensor, atan2_meta
from ..core.registry import register_op, register_table

__all__ = [
    "logaddexp", "logaddexp2", "copysign", "heaviside", "fmax", "fmin", "nextafter", "signbit", "frexp",
    "float_power", "ldexp", "sgn", "xlogy", "logit", "sinc", "deg2rad", "rad2deg",
]

FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])


def copysign_meta(input, other):
    return atan2_meta(input, other)  # the same rule: integers and bools give the default float dtype


def heaviside_meta(input, values):
    if mr.is_tensor(values) and values._dtype is not input._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return mr.pointwise_meta(input, values)


def fmax_meta(input, other):
    return mr.pointwise_meta(input, other)


def signbit_meta(input):
    return mr.pointwise_meta(input, dtype=bool_)


def frexp_meta(input):
    if not input._dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return mr.same_meta(input), mr.same_meta(input, int32)


def _ufunc_kernel(ufunc):
    def kernel(xp, *args, out):
        with quiet(xp):
            return getattr(xp, ufunc)(*args, out=out, dtype=out.dtype, casting="unsafe")

    kernel.__name__ = f"{ufunc}_kernel"
    return kernel


def heaviside_kernel(xp, x, values, out):
    out[...] = xp.where(x == 0, values, x > 0)  # NaN gives 0 (NumPy's heaviside gives NaN)
    return out


def signbit_kernel(xp, x, out):
    if x.dtype.kind == "b":
        out[...] = False
        return out
    return xp.signbit(x, out=out)


def frexp_kernel(xp, x, out):
    mantissa, exponent = out
    m, e = xp.frexp(x)
    mantissa[...], exponent[...] = m, e
    return out


# name -> (meta rule, kernel, has an in-place variant)
PORT_POINTWISE_OPS = {
    "logaddexp": (_floating_binary_meta("logaddexp_cpu"), _ufunc_kernel("logaddexp"), False),
    "logaddexp2": (_floating_binary_meta("logaddexp2_cpu"), _ufunc_kernel("logaddexp2"), False),
    "copysign": (copysign_meta, _ufunc_kernel("copysign"), True),
    "heaviside": (heaviside_meta, heaviside_kernel, True),
    "fmax": (fmax_meta, _ufunc_kernel("fmax"), False),
    "fmin": (fmax_meta, _ufunc_kernel("fmin"), False),
    "nextafter": (_floating_binary_meta("nextafter_cpu"), _ufunc_kernel("nextafter"), True),
    "signbit": (signbit_meta, signbit_kernel, False),
}
OPS = register_table(PORT_POINTWISE_OPS, ("pointwise",), mr.inplace_variant)
OPS["frexp"] = register_op("frexp", meta=frexp_meta, kernel=frexp_kernel)


def _binary(name: str, doc: str, inplace: bool = False, arg: str = "other"):
    """The public function (or in-place method) of a binary registry op that takes tensors only."""
    op = OPS[name + "_" if inplace else name]

    def fn(input, other):
        _require_tensor(op.name, other, 2 - inplace, arg)
        return op(input, other)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = doc
    return fn


logaddexp = _binary("logaddexp", """``log(exp(input) + exp(other))`` without overflow (floating results only).

    Example:
        >>> round(dl.logaddexp(dl.tensor([0.0]), dl.tensor([0.0])).item(), 4)
        0.6931
    """)
logaddexp2 = _binary("logaddexp2", """``log2(2**input + 2**other)`` without overflow (floating results only).

    Example:
        >>> dl.logaddexp2(dl.tensor([1.0]), dl.tensor([1.0])).tolist()
        [2.0]
    """)
heaviside = _binary("heaviside", """The step function: 0 below zero, 1 above, ``values`` at zero (same dtypes).

    Example:
        >>> dl.heaviside(dl.tensor([-1.0, 0.0, 2.0]), dl.tensor([0.5])).tolist()
        [0.0, 0.5, 1.0]
    """, arg="values")
fmax = _binary("fmax", """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    Example:
        >>> dl.fmax(dl.tensor([1.0, float("nan")]), dl.tensor([2.0, 3.0])).tolist()
        [2.0, 3.0]
    """)
fmin = _binary("fmin", """Elementwise minimum that ignores NaN (NaN only where both are NaN).

    Example:
        >>> dl.fmin(dl.tensor([1.0, float("nan")]), dl.tensor([2.0, 3.0])).tolist()
        [1.0, 3.0]
    """)
nextafter = _binary("nextafter", """The next representable value after ``input`` towards ``other``.

    Example:
        >>> dl.nextafter(dl.tensor([1.0], dtype=dl.float64), dl.tensor([2.0], dtype=dl.float64)).item() > 1.0
        True
    """)


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (a tensor or a number); integers give the default float dtype.

    Example:
        >>> dl.copysign(dl.tensor([1.0, 2.0]), -1.0).tolist()
        [-1.0, -2.0]
    """
    return OPS["copysign"](input, other)


def signbit(input):
    """Whether the sign bit is set (True for -0.0 and negative numbers).

    Example:
        >>> dl.signbit(dl.tensor([-0.0, 1.0])).tolist()
        [True, False]
    """
    return OPS["signbit"](input)


def frexp(input):
    """``(mantissa, exponent)`` with ``input == mantissa * 2**exponent``, ``|mantissa|`` in [0.5, 1).

    Example:
        >>> [t.tolist() for t in dl.frexp(dl.tensor([8.0]))]
        [[0.5], [4]]
    """
    return FrexpResult(*OPS["frexp"](input))


# -- compositions of registry ops -----------------------------------------------------------
def float_power(input, exponent):
    """``input ** exponent`` computed in double precision (float64, or complex128 for complex operands).

    Example:
        >>> dl.float_power(dl.tensor([2]), 3).dtype
        dynamo_lite.float64
    """
    complex_ = any(mr.is_tensor(v) and v.dtype.is_complex or isinstance(v, complex) for v in (input, exponent))
    target = complex128 if complex_ else float64
    cast = [v.to(target) if mr.is_tensor(v) else v for v in (input, exponent)]
    return pointwise.pow(*cast)


def ldexp(input, other):
    """``input * 2**other`` (integers give the default float dtype).

    Example:
        >>> dl.ldexp(dl.tensor([1.0]), dl.tensor([3])).tolist()
        [8.0]
    """
    _require_tensor("ldexp", other, 2)
    return pointwise.mul(input, pointwise.pow(2.0, other))


sgn = unary.sign


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (even where ``other`` is 0), NaN where ``other`` is NaN.

    Example:
        >>> dl.xlogy(dl.tensor([0.0, 2.0]), dl.tensor([0.0, 1.0])).tolist()
        [0.0, 0.0]
    """
    if not mr.is_tensor(other):
        if not mr.is_tensor(input):
            raise TypeError(f"xlogy(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
        log_other = math.log(other) if other > 0 else -math.inf if other == 0 else math.nan
        product = pointwise.mul(input, log_other)
        return product if math.isnan(other) else comparison.where(comparison.eq(input, 0), 0.0, product)
    product = pointwise.mul(unary.log(other), input)
    if not mr.is_tensor(input):
        return product if input != 0 else comparison.where(unary.isnan(product), product, 0.0)
    keep_zero = comparison.logical_and(comparison.eq(input, 0), comparison.logical_not(unary.isnan(other)))
    return comparison.where(keep_zero, 0.0, product)


def logit(input, eps=None):
    """``log(p / (1 - p))`` with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    Example:
        >>> dl.logit(dl.tensor([0.5])).tolist()
        [0.0]
    """
    p = input if input.dtype.is_floating_point else input.to(mr.float_dtype(input.dtype))
    if eps is not None:
        p = comparison.clamp(p, eps, 1 - eps)
    return unary.log(pointwise.div(p, pointwise.rsub(p, 1)))


def sinc(input):
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0 (its gradient there is 0).

    Example:
        >>> dl.sinc(dl.tensor([0.0, 1.0])).tolist()[0]
        1.0
    """
    x = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(mr.float_dtype(input.dtype))
    zero = comparison.eq(x, 0)
    safe = pointwise.mul(comparison.where(zero, 1.0, x), math.pi)  # no 0/0 on either branch's gradient
    return comparison.where(zero, 1.0, pointwise.div(unary.sin(safe), safe))


def _angle_conversion(name: str, factor: float, doc: str):
    def fn(input):
        x = input if input.dtype.is_floating_point else input.to(mr.float_dtype(input.dtype))
        return pointwise.mul(x, factor)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


deg2rad = _angle_conversion("deg2rad", math.pi / 180, """Degrees to radians.

    Example:
        >>> round(dl.deg2rad(dl.tensor([180.0])).item(), 5)
        3.14159
    """)
rad2deg = _angle_conversion("rad2deg", 180 / math.pi, """Radians to degrees.

    Example:
        >>> round(dl.rad2deg(dl.tensor([3.14159265])).item(), 3)
        180.0
    """)


def _inplace(fn):
    """The ``name_`` method of a composition: computes out of place, then copies into ``self``."""
    def method(self, *args, **kwargs):
        result = fn(self, *args, **kwargs)
        if result.dtype != self.dtype:
            raise RuntimeError(f"result type {mr.TYPE_NAMES[result.dtype]} can't be cast to the desired output "
                               f"type {mr.TYPE_NAMES[self.dtype]}")
        return self.copy_(result)

    method.__name__ = method.__qualname__ = fn.__name__ + "_"
    method.__doc__ = f"In-place ``{fn.__name__}``: writes into ``self`` and returns it."
    return method


def copysign_(self, other):
    """In-place ``copysign``: writes into ``self`` and returns it."""
    return OPS["copysign_"](self, other)


METHODS = {name: globals()[name] for name in __all__}
METHODS.update({
    "copysign_": copysign_, "sgn_": unary.METHODS["sign_"],
    "heaviside_": _binary("heaviside", heaviside.__doc__, inplace=True, arg="values"),
    "nextafter_": _binary("nextafter", nextafter.__doc__, inplace=True),
    "float_power_": _inplace(float_power), "ldexp_": _inplace(ldexp), "xlogy_": _inplace(xlogy),
    "logit_": _inplace(logit), "sinc_": _inplace(sinc), "deg2rad_": _inplace(deg2rad), "rad2deg_": _inplace(rad2deg),
})
