"""Derivatives of the fft ops (NOTE: [fft normalization] in ops/spectral.py): each is the transform
in the other direction with the same scale; the one-sided ones account for the missing half."""
from __future__ import annotations

from .helpers import OPS
from .table import derivative


def _real_part(z):
    return OPS["select"](OPS["view_as_real"](z), -1, 0)


@derivative("fft_c2c")
def c2c_backward(grad, x, dims, normalization, forward):
    return OPS["fft_c2c"](grad, dims, normalization, not forward)


@derivative("fft_r2c", saves=("x",))
def r2c_backward(grad, x, dims, normalization, onesided):
    """The one-sided spectrum's gradient, zero-padded to the full length, through the inverse c2c; real part."""
    if onesided:
        last = dims[-1] % len(grad._sizes)
        missing = x._sizes[last] - grad._sizes[last]
        if missing > 0:
            pad = [0, 0] * (len(grad._sizes) - 1 - last) + [0, missing]
            grad = OPS["constant_pad_nd"](grad, pad)
    return _real_part(OPS["fft_c2c"](grad, dims, normalization, False))


@derivative("fft_c2r")
def c2r_backward(grad, x, dims, normalization, last_dim_size):
    """r2c of the gradient, with the bins that stand for two conjugate ones counted twice."""
    result = OPS["fft_r2c"](grad, dims, normalization, True)
    last = dims[-1] % len(grad._sizes)
    doubled = grad._sizes[last] - result._sizes[last]
    if doubled <= 0:
        return result
    size = result._sizes[last]
    parts = [OPS["narrow"](result, last, 0, 1), OPS["mul"](OPS["narrow"](result, last, 1, doubled), 2.0)]
    if size - 1 - doubled > 0:
        parts.append(OPS["narrow"](result, last, 1 + doubled, size - 1 - doubled))
    return OPS["cat"](parts, last)
