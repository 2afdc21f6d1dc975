"""Derivatives of the complex-number ops: view_as_real/view_as_complex, complex, polar, angle.

A complex gradient follows torch's convention: for a real loss L and z = x + iy, the
gradient of z is dL/dx + i dL/dy (what ``view_as_real`` of it holds as a pair).
"""
from __future__ import annotations

from ...tensor.layout import contiguous_format
from .helpers import OPS, zeros_of
from .table import derivative


def _parts(grad):
    """(real part, imaginary part) of a complex gradient, as real tensors."""
    pairs = OPS["view_as_real"](grad)
    return OPS["select"](pairs, -1, 0), OPS["select"](pairs, -1, 1)


@derivative("view_as_real")
def view_as_real_backward(grad, input):
    # view_as_complex needs a unit stride over the pairs: make the gradient dense first.
    return OPS["view_as_complex"](OPS["clone"](grad, memory_format=contiguous_format))


@derivative("view_as_complex")
def view_as_complex_backward(grad, input):
    return OPS["view_as_real"](grad)


@derivative("complex")
def complex_backward(grad, real, imag):
    return _parts(grad)


@derivative("polar", saves=("abs", "angle"))
def polar_backward(grad, abs, angle):
    # z = r (cos t + i sin t): dL/dr = gx cos t + gy sin t, dL/dt = r (gy cos t - gx sin t).
    gx, gy = _parts(grad)
    cos, sin = OPS["cos"](angle), OPS["sin"](angle)
    grad_abs = OPS["add"](OPS["mul"](gx, cos), OPS["mul"](gy, sin))
    grad_angle = OPS["mul"](abs, OPS["sub"](OPS["mul"](gy, cos), OPS["mul"](gx, sin)))
    return grad_abs, grad_angle


@derivative("angle", saves=("input",))
def angle_backward(grad, input):
    if not input._dtype.is_complex:
        return zeros_of(input, grad._dtype)  # piecewise constant on the reals
    # t = atan2(y, x): dt/dx = -y / |z|^2, dt/dy = x / |z|^2.
    x, y = _parts(input)
    scale = OPS["div"](grad, OPS["add"](OPS["mul"](x, x), OPS["mul"](y, y)))
    return OPS["complex"](OPS["neg"](OPS["mul"](scale, y)), OPS["mul"](scale, x))
