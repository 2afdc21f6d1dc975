"""Unary elementwise ops: math functions, activations (relu, sigmoid, gelu, silu) and erf."""
from __future__ import annotations

import math

import numpy as np

from ...tensor.dtype import REAL_OF, bool_
from ..core import meta_rules as mr
from ..core.kernel_utils import half_as_float, quiet
from ..core.registry import register_table

__all__ = [
    "neg", "negative", "abs", "absolute", "sign", "square", "exp", "log", "log1p", "log2", "expm1", "sqrt",
    "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal", "floor", "ceil", "round",
    "trunc",
    "relu", "gelu", "silu", "isnan", "isinf", "isfinite", "positive",
]

POINTWISE = ("pointwise",)


# -- meta rules ---------------------------------------------------------------------------
def float_unary_meta(input):
    """Float-valued functions: integer and bool inputs give the default float dtype."""
    return mr.pointwise_meta(input, dtype=mr.float_dtype(input._dtype))


def same_dtype_meta(input):
    return mr.pointwise_meta(input, dtype=input._dtype)


def _no_bool(message: str, error=RuntimeError):
    def meta(input):
        if input._dtype is bool_:
            raise error(message)
        return same_dtype_meta(input)

    return meta


def _floating_only(kernel_name: str):
    def meta(input, **kwargs):
        mr.check_floating(input, kernel_name)
        return same_dtype_meta(input)

    return meta


_ABS_REAL_META = _no_bool("\"abs_cpu\" not implemented for 'Bool'", NotImplementedError)


def abs_meta(input):
    # The magnitude of a complex number is real: complex64 -> float32, complex128 -> float64.
    if input._dtype.is_complex:
        return mr.pointwise_meta(input, dtype=REAL_OF[input._dtype], compute_dtype=input._dtype)
    return _ABS_REAL_META(input)


def square_meta(input):
    # square(x) is pow(x, 2): a bool tensor promotes with the int 2 to int64.
    return mr.pointwise_meta(input, 2, scalar_operands=False)


def gelu_meta(input, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    mr.check_floating(input, "GeluKernelImpl")
    return same_dtype_meta(input)


def predicate_meta(input):
    return mr.pointwise_meta(input, dtype=bool_, compute_dtype=input._dtype)


# -- kernels ------------------------------------------------------------------------------
def _ufunc_kernel(ufunc, quiet_errors: bool = True):
    """``ufunc(x)`` computed in the output dtype, straight into ``out``."""
    if quiet_errors:
        def kernel(xp, x, out):
            with quiet(xp):
                return ufunc(x, out=out, dtype=out.dtype, casting="unsafe")
    else:
        def kernel(xp, x, out):
            return ufunc(x, out=out, dtype=out.dtype, casting="unsafe")
    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


def abs_kernel(xp, x, out):
    if x.dtype.kind == "c":
        out[...] = xp.absolute(x)
        return out
    return xp.absolute(x, out=out, dtype=out.dtype, casting="unsafe")


def rsqrt_kernel(xp, x, out):
    with quiet(xp):
        xp.sqrt(x, out=out, dtype=out.dtype, casting="unsafe")
        return xp.reciprocal(out, out=out)


@half_as_float
def sigmoid_kernel(xp, x, out):
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving the exact 0.
    with quiet(xp):
        xp.negative(x, out=out, dtype=out.dtype, casting="unsafe")
        xp.exp(out, out=out)
        out += 1
        return xp.reciprocal(out, out=out)


@half_as_float
def silu_kernel(xp, x, out):
    sigmoid_kernel(xp, x, out)
    with quiet(xp):
        return xp.multiply(out, x, out=out)


def relu_kernel(xp, x, out):
    return xp.maximum(x, 0, out=out, dtype=out.dtype, casting="unsafe")


def sign_kernel(xp, x, out):
    if out.dtype.kind == "f":
        # (x > 0) - (x < 0): NaN maps to 0, as torch's sign does.
        return xp.subtract(x > 0, x < 0, out=out, dtype=out.dtype)
    if out.dtype.kind == "b":
        out[...] = x
        return out
    return xp.sign(x, out=out)


def _rounding_kernel(ufunc):
    def kernel(xp, x, out):
        if out.dtype.kind != "f":  # integers are already whole
            out[...] = x
            return out
        return ufunc(x, out=out)

    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


# NOTE: [erf] NumPy has no erf. For z >= 0, erfc(z) = exp(-z*z) * t * P(t) with
# t = 1 / (1 + ERFC_P * z) and P the degree-12 polynomial below, whose coefficients are a
# weighted least-squares fit (weights exp(-z*z) * t, so the error in erf itself is what is
# minimized) of erfc(z) * exp(z*z) / t against math.erfc on z in [0, 26]. Max abs error of
# erf in float64: 2e-15. Near 0, erf = 1 - erfc loses relative precision, so |x| < 0.01
# uses the Taylor series (relative error < 1e-14). gelu needs only erfc of |x|, which has
# no cancellation, so it runs this in the tensor's own float dtype.
ERFC_P = 0.3275911
ERFC_COEFFS = (
    0.18501858131156323, 0.1812330437878324, 0.20525522058245205, -0.0007331548213354022,
    0.6678078169823469, -1.2428443567366187, 2.46469119197552, -3.133623620092095,
    2.999491430686021, -1.9588911206178636, 0.7976841947397588, -0.18345653923461214,
    0.018367311437032185,
)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erfc_nonnegative(xp, z):
    """erfc(z) for z >= 0 (NaN propagates), in z's dtype. See NOTE: [erf]."""
    z = xp.asarray(z)  # ufuncs on 0-dim arrays return scalars, which cannot be written into
    with quiet(xp):
        t = xp.multiply(z, ERFC_P, out=xp.empty_like(z))
        t += 1
        xp.reciprocal(t, out=t)
        acc = xp.full_like(z, ERFC_COEFFS[-1])
        for c in ERFC_COEFFS[-2::-1]:
            acc *= t
            acc += c
        acc *= t
        gauss = xp.multiply(z, z, out=xp.empty_like(z))
        xp.negative(gauss, out=gauss)
        xp.exp(gauss, out=gauss)
        acc *= gauss
    return acc


def erf_kernel(xp, x, out):
    x64 = x.astype(np.float64)
    z = xp.abs(x64)
    erf = erfc_nonnegative(xp, z)
    xp.subtract(1.0, erf, out=erf)
    xp.copysign(erf, x64, out=erf)
    x2 = xp.multiply(x64, x64)
    series = 1.0 - x2 * (1.0 / 3.0 - x2 * (1.0 / 10.0 - x2 / 42.0))
    series *= x64 * TWO_OVER_SQRT_PI
    out[...] = xp.where(z < 0.01, series, erf)
    return out


@half_as_float
def gelu_erf_kernel(xp, x, out):
    # Phi(x) = erfc(-x / sqrt 2) / 2, from erfc(|x| / sqrt 2) and its reflection.
    half_erfc = erfc_nonnegative(xp, xp.abs(x) * (1.0 / math.sqrt(2.0)))
    half_erfc *= 0.5
    phi = xp.where(x < 0, half_erfc, 1.0 - half_erfc)
    return xp.multiply(x, phi, out=out, dtype=out.dtype, casting="unsafe")


GELU_TANH_K = math.sqrt(2.0 / math.pi)


@half_as_float
def gelu_tanh_kernel(xp, x, out):
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), all in out. x^3 may overflow
    # to inf for huge inputs; tanh(inf) = 1 gives the right result, so do not warn.
    with quiet(xp):
        xp.multiply(x, x, out=out)
        out *= 0.044715 * GELU_TANH_K
        out += GELU_TANH_K
        out *= x
        xp.tanh(out, out=out)
        out += 1.0
        out *= x
        out *= 0.5
    return out


def gelu_kernel(xp, x, out, approximate="none"):
    return (gelu_tanh_kernel if approximate == "tanh" else gelu_erf_kernel)(xp, x, out)


def _predicate_kernel(ufunc):
    def kernel(xp, x, out):
        return ufunc(x, out=out)

    kernel.__name__ = f"{ufunc.__name__}_kernel"
    return kernel


# -- registration -------------------------------------------------------------------------
# name -> (meta rule, kernel, has an in-place variant "name_")
_NO_BOOL_NEG = _no_bool(
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."
)
UNARY_OPS = {
    "neg": (_NO_BOOL_NEG, _ufunc_kernel(np.negative, False), True),
    "abs": (abs_meta, abs_kernel, True),
    "sign": (same_dtype_meta, sign_kernel, True),
    "square": (square_meta, _ufunc_kernel(np.square), True),  # may overflow: quiet, like torch
    "exp": (float_unary_meta, _ufunc_kernel(np.exp), True),
    "log": (float_unary_meta, _ufunc_kernel(np.log), True),
    "log1p": (float_unary_meta, _ufunc_kernel(np.log1p), True),
    "log2": (float_unary_meta, _ufunc_kernel(np.log2), True),
    "expm1": (float_unary_meta, _ufunc_kernel(np.expm1), True),
    "sqrt": (float_unary_meta, _ufunc_kernel(np.sqrt), True),
    "rsqrt": (float_unary_meta, rsqrt_kernel, True),
    "sin": (float_unary_meta, _ufunc_kernel(np.sin), True),
    "cos": (float_unary_meta, _ufunc_kernel(np.cos), True),
    "tan": (float_unary_meta, _ufunc_kernel(np.tan), True),
    "sinh": (float_unary_meta, _ufunc_kernel(np.sinh), True),  # overflows to inf: quiet, like torch
    "cosh": (float_unary_meta, _ufunc_kernel(np.cosh), True),
    "tanh": (float_unary_meta, _ufunc_kernel(np.tanh), True),
    "sigmoid": (float_unary_meta, sigmoid_kernel, True),
    "erf": (float_unary_meta, erf_kernel, True),
    "reciprocal": (float_unary_meta, _ufunc_kernel(np.reciprocal), True),
    "floor": (_no_bool("\"floor_vml_cpu\" not implemented for 'Bool'", NotImplementedError),
              _rounding_kernel(np.floor), True),
    "ceil": (_no_bool("\"ceil_vml_cpu\" not implemented for 'Bool'", NotImplementedError),
             _rounding_kernel(np.ceil), True),
    "round": (_no_bool("\"round_vml_cpu\" not implemented for 'Bool'", NotImplementedError),
              _rounding_kernel(np.rint), True),
    "trunc": (_no_bool("\"trunc_vml_cpu\" not implemented for 'Bool'", NotImplementedError),
              _rounding_kernel(np.trunc), True),
    "relu": (_no_bool("Boolean inputs not supported for relu"), relu_kernel, True),
    "gelu": (gelu_meta, gelu_kernel, False),
    "silu": (_floating_only("silu_cpu"), silu_kernel, False),
    "isnan": (predicate_meta, _predicate_kernel(np.isnan), False),
    "isinf": (predicate_meta, _predicate_kernel(np.isinf), False),
    "isfinite": (predicate_meta, _predicate_kernel(np.isfinite), False),
}


def _abs_inplace_meta(self):
    if self._dtype.is_complex:  # the magnitude is real: it cannot be written back
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _ABS_INPLACE(self)


_ABS_INPLACE = mr.inplace_variant(abs_meta)
#: Meta rules of in-place variants that check more than ``mr.inplace_variant`` does.
_INPLACE_METAS = {abs_meta: _abs_inplace_meta}
OPS = register_table(UNARY_OPS, POINTWISE, lambda meta: _INPLACE_METAS.get(meta) or mr.inplace_variant(meta))


# -- public functions ---------------------------------------------------------------------
def _public(name: str, doc: str):
    op = OPS[name]

    def fn(input):
        return op(input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _public_inplace(name: str):
    op = OPS[name + "_"]

    def fn(self):
        return op(self)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"In-place ``{name}``: writes into ``self`` and returns it."
    return fn


neg = negative = _public("neg", "``-input``.\n\nExample:\n    >>> dl.neg(dl.tensor([1, -2])).tolist()\n    [-1, 2]")
abs = absolute = _public("abs", "``|input|``.\n\nExample:\n    >>> dl.abs(dl.tensor([-1.5])).tolist()\n    [1.5]")
sign = _public("sign", "-1, 0 or 1 by the sign of each element (0 for NaN).")
square = _public("square", "``input * input`` (bool promotes to int64, like ``input ** 2``).")
exp = _public("exp", "``e ** input``; integer inputs give the default float dtype.\n\nExample:\n    >>> dl.exp(dl.tensor([0])).tolist()\n    [1.0]")
log = _public("log", "Natural logarithm (``-inf`` at 0, NaN below).")
log1p = _public("log1p", "``log(1 + input)``, accurate near 0.")
log2 = _public("log2", "Base-2 logarithm.")
expm1 = _public("expm1", "``exp(input) - 1``, accurate near 0.")
sqrt = _public("sqrt", "Square root.\n\nExample:\n    >>> dl.sqrt(dl.tensor([4.0])).tolist()\n    [2.0]")
rsqrt = _public("rsqrt", "``1 / sqrt(input)``.")
sin = _public("sin", "Sine.")
cos = _public("cos", "Cosine.")
tan = _public("tan", "Tangent.")
sinh = _public("sinh", "Hyperbolic sine.")
cosh = _public("cosh", "Hyperbolic cosine.\n\nExample:\n    >>> dl.cosh(dl.tensor([0.0])).tolist()\n    [1.0]")
tanh = _public("tanh", "Hyperbolic tangent.")
sigmoid = _public("sigmoid", "``1 / (1 + exp(-input))``.\n\nExample:\n    >>> dl.sigmoid(dl.tensor([0.0])).tolist()\n    [0.5]")
erf = _public("erf", "The error function (see NOTE: [erf] for accuracy).\n\nExample:\n    >>> round(dl.erf(dl.tensor([1.0])).item(), 6)\n    0.842701")
reciprocal = _public("reciprocal", "``1 / input``; integer inputs give the default float dtype.")
floor = _public("floor", "Round down (integers are returned unchanged).")
ceil = _public("ceil", "Round up (integers are returned unchanged).")
round = _public("round", "Round half to even (integers are returned unchanged).")
trunc = _public("trunc", "Round toward zero (integers are returned unchanged).")
relu = _public("relu", "``max(input, 0)``.\n\nExample:\n    >>> dl.relu(dl.tensor([-1.0, 2.0])).tolist()\n    [0.0, 2.0]")
silu = _public("silu", "``input * sigmoid(input)`` (floating inputs only).")
isnan = _public("isnan", "True where the element is NaN.")
isinf = _public("isinf", "True where the element is +-inf.")
isfinite = _public("isfinite", "True where the element is neither NaN nor +-inf.")


def gelu(input, approximate: str = "none"):
    """GELU, ``input * Phi(input)``: exact (``"none"``) or the tanh approximation (``"tanh"``).

    Example:
        >>> round(dl.gelu(dl.tensor([1.0])).item(), 4)
        0.8413
    """
    if approximate == "none":
        return OPS["gelu"](input)
    return OPS["gelu"](input, approximate=approximate)


def positive(input):
    """``+input``: the input itself (bool tensors are rejected, as by torch)."""
    if input.dtype is bool_:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _unary_operator(op):
    def method(self):
        return op(self)

    method.__name__ = op.name
    return method


METHODS = {name: globals()[name] for name in UNARY_OPS}
METHODS.update({"negative": neg, "absolute": abs, "positive": positive})
METHODS.update({name + "_": _public_inplace(name) for name, spec in UNARY_OPS.items() if spec[2]})
METHODS.update({"negative_": METHODS["neg_"], "absolute_": METHODS["abs_"]})
METHODS.update({
    "__neg__": _unary_operator(OPS["neg"]), "__abs__": _unary_operator(OPS["abs"]),
    "__pos__": positive,
})
