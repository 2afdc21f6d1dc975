"""Derivatives of pointwise ops (unary, binary, where/clamp/masked_fill, logaddexp, copysign,
fmax/fmin, frexp, the gamma family, erfc)."""
from __future__ import annotations

import math

from .helpers import OPS, conj, is_tensor, is_value, zeros_grad, zeros_of
from .table import derivative
from .table import NOT_DIFFERENTIABLE


def one_minus(x):
    return OPS["add"](OPS["neg"](x), 1)


def _scaled(grad, alpha):
    return grad if alpha == 1 else OPS["mul"](grad, alpha)


@derivative("add")
def add_backward(grad, input, other, alpha=1):
    return grad, _scaled(grad, alpha)


@derivative("sub")
def sub_backward(grad, input, other, alpha=1):
    return grad, OPS["neg"](_scaled(grad, alpha))


@derivative("mul", saves=("input", "other"), only_for={"input": "other", "other": "input"})
def mul_backward(grad, input, other):
    # complex: grad * conj(other), NOTE: [complex gradients]
    return (OPS["mul"](grad, conj(other)) if is_value(other) else None,
            OPS["mul"](grad, conj(input)) if is_tensor(other) and is_value(input) else None)


@derivative("div", saves=("input", "other"), only_for={"input": "other"})
def div_backward(grad, input, other, rounding_mode=None):
    if rounding_mode is not None:
        return zeros_of(grad), (zeros_of(grad) if is_tensor(other) else None)
    grad_input = OPS["div"](grad, conj(other))
    if not is_tensor(other):
        return grad_input, None
    if not is_value(input):
        return grad_input, None
    return grad_input, OPS["neg"](OPS["div"](OPS["mul"](grad_input, conj(input)), conj(other)))


@derivative("remainder", saves=("input", "other"))
def remainder_backward(grad, input, other):
    if not is_tensor(other):
        return grad, None
    return grad, OPS["neg"](OPS["mul"](grad, OPS["div"](input, other, rounding_mode="floor")))


@derivative("pow", saves=("input", "exponent", "result"))
def pow_backward(grad, input, exponent, result):
    grad_input = grad_exponent = None
    if is_tensor(input):
        # d/dx x**e = e * x**(e-1), and 0 where e == 0 (torch masks the 0 * inf there)
        if not is_tensor(exponent) and exponent == 0:
            grad_input = zeros_of(input)
        else:
            lowered = OPS["sub"](exponent, 1) if is_tensor(exponent) else exponent - 1
            grad_input = OPS["mul"](grad, conj(OPS["mul"](OPS["pow"](input, lowered), exponent)))
        if is_tensor(exponent):
            grad_input = OPS["masked_fill"](grad_input, OPS["eq"](exponent, 0), 0.0)
    if is_tensor(exponent):
        log_base = OPS["log"](input) if is_tensor(input) else math.log(input)
        grad_exponent = OPS["mul"](grad, conj(OPS["mul"](result, log_base)))
        if is_tensor(input):  # 0 ** e has derivative 0 in e for e >= 0, as torch defines it
            at_zero = OPS["logical_and"](OPS["eq"](input, 0), OPS["ge"](exponent, 0))
            grad_exponent = OPS["masked_fill"](grad_exponent, at_zero, 0.0)
    return grad_input, grad_exponent


def _ties(grad, input, other, keep):
    """Gradient of minimum/maximum: to the selected input, split in half on ties."""
    half = OPS["div"](grad, 2)
    tie = OPS["eq"](input, other)
    grad_input = OPS["where"](tie, half, OPS["where"](keep, grad, 0.0))
    grad_other = OPS["where"](tie, half, OPS["where"](keep, 0.0, grad))
    return grad_input, grad_other


@derivative("minimum", saves=("input", "other"))
def minimum_backward(grad, input, other):
    return _ties(grad, input, other, OPS["lt"](input, other))


@derivative("maximum", saves=("input", "other"))
def maximum_backward(grad, input, other):
    return _ties(grad, input, other, OPS["gt"](input, other))


@derivative("where", saves=("condition",))
def where_backward(grad, condition, input, other):
    return None, OPS["where"](condition, grad, 0.0), OPS["where"](condition, 0.0, grad)


@derivative("clamp", saves=("input", "min", "max"))
def clamp_backward(grad, input, min=None, max=None):
    inside = None
    if min is not None:
        inside = OPS["ge"](input, min)
    if max is not None:
        below = OPS["le"](input, max)
        inside = below if inside is None else OPS["logical_and"](inside, below)
    grad_input = grad if inside is None else OPS["where"](inside, grad, 0.0)
    bounds = {}
    if is_tensor(min):
        bounds["min"] = OPS["where"](OPS["lt"](input, min), grad, 0.0)
    if is_tensor(max):
        over = OPS["gt"](input, max)
        if min is not None:
            over = OPS["logical_and"](over, OPS["ge"](input, min))
        bounds["max"] = OPS["where"](over, grad, 0.0)
    return grad_input, bounds


@derivative("masked_fill", saves=("mask",))
def masked_fill_backward(grad, input, mask, value):
    grad_value = OPS["sum"](OPS["where"](mask, grad, 0.0)) if is_tensor(value) else None
    return OPS["masked_fill"](grad, mask, 0.0), None, grad_value


# -- unary ----------------------------------------------------------------------------------
@derivative("neg")
def neg_backward(grad, input):
    return OPS["neg"](grad)


@derivative("abs", saves=("input",))
def abs_backward(grad, input):
    if input._dtype.is_complex:  # grad * sgn(z), sgn(z) = z / |z| and 0 at 0 (torch's sgn)
        magnitude = OPS["abs"](input)
        unit = OPS["div"](input, OPS["masked_fill"](magnitude, OPS["eq"](magnitude, 0), 1.0))
        return OPS["mul"](grad, unit)
    return OPS["mul"](grad, OPS["sign"](input))


derivative("sign", "floor", "ceil", "round", "trunc")(zeros_grad)


@derivative("square", saves=("input",))
def square_backward(grad, input):
    return OPS["mul"](grad, conj(OPS["mul"](input, 2)))


@derivative("exp", saves=("result",))
def exp_backward(grad, input, result):
    return OPS["mul"](grad, conj(result))


@derivative("log", saves=("input",))
def log_backward(grad, input):
    return OPS["div"](grad, conj(input))


@derivative("log1p", saves=("input",))
def log1p_backward(grad, input):
    return OPS["div"](grad, conj(OPS["add"](input, 1)))


@derivative("log2", saves=("input",))
def log2_backward(grad, input):
    return OPS["div"](grad, conj(OPS["mul"](input, math.log(2.0))))


@derivative("expm1", saves=("result",))
def expm1_backward(grad, input, result):
    return OPS["mul"](grad, conj(OPS["add"](result, 1)))


@derivative("sqrt", saves=("result",))
def sqrt_backward(grad, input, result):
    return OPS["div"](grad, conj(OPS["mul"](result, 2)))


@derivative("rsqrt", saves=("result",))
def rsqrt_backward(grad, input, result):
    return OPS["mul"](grad, conj(OPS["mul"](OPS["pow"](result, 3), -0.5)))


@derivative("sin", saves=("input",))
def sin_backward(grad, input):
    return OPS["mul"](grad, conj(OPS["cos"](input)))


@derivative("cos", saves=("input",))
def cos_backward(grad, input):
    return OPS["neg"](OPS["mul"](grad, conj(OPS["sin"](input))))


@derivative("tan", saves=("result",))
def tan_backward(grad, input, result):
    return OPS["mul"](grad, conj(OPS["add"](OPS["mul"](result, result), 1)))


@derivative("sinh", saves=("input",))
def sinh_backward(grad, input):
    return OPS["mul"](grad, conj(OPS["cosh"](input)))


@derivative("cosh", saves=("input",))
def cosh_backward(grad, input):
    return OPS["mul"](grad, conj(OPS["sinh"](input)))


@derivative("tanh", saves=("result",))
def tanh_backward(grad, input, result):
    return OPS["mul"](grad, conj(one_minus(OPS["mul"](result, result))))


@derivative("sigmoid", saves=("result",))
def sigmoid_backward(grad, input, result):
    return OPS["mul"](grad, conj(OPS["mul"](result, one_minus(result))))


@derivative("erf", saves=("input",))
def erf_backward(grad, input):
    return OPS["mul"](grad, OPS["mul"](OPS["exp"](OPS["neg"](OPS["mul"](input, input))), 2 / math.sqrt(math.pi)))


@derivative("reciprocal", saves=("result",))
def reciprocal_backward(grad, input, result):
    return OPS["neg"](OPS["mul"](grad, conj(OPS["mul"](result, result))))


@derivative("relu", saves=("result",))
def relu_backward(grad, input, result):
    return OPS["where"](OPS["gt"](result, 0), grad, 0.0)


@derivative("gelu", saves=("input",))
def gelu_backward(grad, input, approximate="none"):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        cube = OPS["mul"](OPS["mul"](input, input), input)
        inner = OPS["mul"](OPS["add"](input, OPS["mul"](cube, 0.044715)), k)
        t = OPS["tanh"](inner)
        d_inner = OPS["mul"](OPS["add"](OPS["mul"](OPS["mul"](input, input), 3 * 0.044715), 1), k)
        sech2 = one_minus(OPS["mul"](t, t))
        d = OPS["add"](OPS["mul"](OPS["add"](t, 1), 0.5), OPS["mul"](OPS["mul"](OPS["mul"](input, 0.5), sech2), d_inner))
        return OPS["mul"](grad, d)
    cdf = OPS["mul"](OPS["add"](OPS["erf"](OPS["mul"](input, 1 / math.sqrt(2))), 1), 0.5)
    pdf = OPS["mul"](OPS["exp"](OPS["mul"](OPS["mul"](input, input), -0.5)), 1 / math.sqrt(2 * math.pi))
    return OPS["mul"](grad, OPS["add"](cdf, OPS["mul"](input, pdf)))


@derivative("silu", saves=("input",))
def silu_backward(grad, input):
    s = OPS["sigmoid"](input)
    return OPS["mul"](grad, OPS["mul"](s, OPS["add"](OPS["mul"](input, one_minus(s)), 1)))


@derivative("lerp", saves=("input", "end", "weight"))
def lerp_backward(grad, input, end, weight):
    grad_weight = OPS["mul"](grad, OPS["sub"](end, input)) if is_tensor(weight) else None
    return OPS["mul"](grad, one_minus(weight) if is_tensor(weight) else 1 - weight), OPS["mul"](grad, weight), grad_weight


@derivative("hypot", saves=("input", "other", "result"))
def hypot_backward(grad, input, other, result):
    scaled = OPS["div"](grad, result)
    return OPS["mul"](scaled, input), OPS["mul"](scaled, other)


@derivative("atan2", saves=("input", "other"))
def atan2_backward(grad, input, other):
    scaled = OPS["div"](grad, OPS["add"](OPS["mul"](input, input), OPS["mul"](other, other)))
    return OPS["mul"](scaled, other), OPS["neg"](OPS["mul"](scaled, input))


@derivative("fmod", saves=("input", "other"))
def fmod_backward(grad, input, other):
    if not is_tensor(other):
        return grad, None
    return grad, OPS["neg"](OPS["mul"](grad, OPS["div"](input, other, rounding_mode="trunc")))


@derivative("frac")
def frac_backward(grad, input):
    return grad


@derivative("erfinv", saves=("result",))
def erfinv_backward(grad, input, result):
    return OPS["mul"](OPS["mul"](grad, OPS["exp"](OPS["mul"](result, result))), math.sqrt(math.pi) / 2)


@derivative("nan_to_num", saves=("input",))
def nan_to_num_backward(grad, input, nan=0.0, posinf=None, neginf=None):
    return OPS["where"](OPS["isfinite"](input), grad, 0.0)


@derivative("addcmul", saves=("tensor1", "tensor2"))
def addcmul_backward(grad, input, tensor1, tensor2, value=1):
    scaled = grad if value == 1 else OPS["mul"](grad, conj(value))
    return grad, OPS["mul"](scaled, conj(tensor2)), OPS["mul"](scaled, conj(tensor1))


@derivative("addcdiv", saves=("tensor1", "tensor2"))
def addcdiv_backward(grad, input, tensor1, tensor2, value=1):
    scaled = OPS["div"](grad if value == 1 else OPS["mul"](grad, conj(value)), conj(tensor2))
    return grad, scaled, OPS["neg"](OPS["div"](OPS["mul"](scaled, conj(tensor1)), conj(tensor2)))


NOT_DIFFERENTIABLE.update({
    name: "integer or boolean outputs, or piecewise constant with no derivative in torch"
    for name in ("heaviside", "heaviside_", "nextafter", "nextafter_", "signbit", "histc", "isin")
})


def _where_grad(condition, grad):
    return OPS["where"](condition, grad, 0.0)


@derivative("logaddexp", saves=("input", "other"))
def logaddexp_backward(grad, input, other):
    return (OPS["mul"](grad, OPS["sigmoid"](OPS["sub"](input, other))),
            OPS["mul"](grad, OPS["sigmoid"](OPS["sub"](other, input))))


@derivative("logaddexp2", saves=("input", "other"))
def logaddexp2_backward(grad, input, other):
    difference = OPS["mul"](OPS["sub"](input, other), math.log(2))
    return (OPS["mul"](grad, OPS["sigmoid"](difference)), OPS["mul"](grad, OPS["sigmoid"](OPS["neg"](difference))))


@derivative("copysign", saves=("input", "result"))
def copysign_backward(grad, input, other, result):
    # d|x| sign(y) / dx = result / x away from 0 (0 there, as torch); no gradient flows to the sign.
    zero = OPS["eq"](input, 0)
    ratio = OPS["div"](result, OPS["where"](zero, 1.0, input))
    grad_input = _where_grad(OPS["logical_not"](zero), OPS["mul"](grad, ratio))
    return grad_input, (zeros_of(other) if is_tensor(other) else None)


def _extremum_masks(input, other, keeps_input):
    chosen = OPS["logical_or"](keeps_input(input, other), OPS["isnan"](other))
    return chosen, OPS["logical_not"](chosen)


@derivative("fmax", saves=("input", "other"))
def fmax_backward(grad, input, other):
    first, second = _extremum_masks(input, other, OPS["ge"])
    return _where_grad(first, grad), _where_grad(second, grad)


@derivative("fmin", saves=("input", "other"))
def fmin_backward(grad, input, other):
    first, second = _extremum_masks(input, other, OPS["le"])
    return _where_grad(first, grad), _where_grad(second, grad)


@derivative("frexp", saves=("result",))
def frexp_backward(grads, input, result):
    return OPS["div"](grads[0], OPS["pow"](2.0, result[1]))


@derivative("lgamma", saves=("input",))
def lgamma_backward(grad, input):
    return OPS["mul"](grad, OPS["digamma"](input))


@derivative("digamma", saves=("input",))
def digamma_backward(grad, input):
    return OPS["mul"](grad, OPS["polygamma"](1, input))


@derivative("polygamma", saves=("input",))
def polygamma_backward(grad, n, input):
    return None, OPS["mul"](grad, OPS["polygamma"](n + 1, input))


@derivative("i0", saves=("input",))
def i0_backward(grad, input):
    return OPS["mul"](grad, OPS["i1"](input))


@derivative("i1", saves=("input", "result"))
def i1_backward(grad, input, result):
    # I1' = I0 - I1 / x, which tends to 1/2 at 0.
    zero = OPS["eq"](input, 0)
    slope = OPS["sub"](OPS["i0"](input), OPS["div"](result, OPS["where"](zero, 1.0, input)))
    return OPS["mul"](grad, OPS["where"](zero, 0.5, slope))


@derivative("erfc", saves=("input",))
def erfc_backward(grad, input):
    return OPS["mul"](grad, OPS["mul"](OPS["exp"](OPS["neg"](OPS["mul"](input, input))), -2 / math.sqrt(math.pi)))
