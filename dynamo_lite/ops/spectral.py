"""Discrete Fourier transforms as registry ops: complex-to-complex, real-to-complex (one-sided or full)
and complex-to-real, over any set of dims; the public functions are in dl.fft.

NOTE: [fft normalization] As in torch's ``_fft_*`` ops, ``normalization`` says which scale the op
applies whatever its direction: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n: the product of the signal
sizes); dl.fft maps ``norm="backward"/"ortho"/"forward"`` to it per direction. So each
derivative is the transform in the other direction with the same normalization. NumPy computes in
double precision: results are cast to the complex (or real) type of the input's precision.
"""
from __future__ import annotations

import math

from ..tensor.dtype import COMPLEX_OF, REAL_OF
from .core import meta_rules as mr
from .core.registry import register_op

__all__: list = []  # the public functions live in dl.fft


def _signal_size(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


def _scale(normalization: int, n: int) -> float:
    return (1.0, 1.0 / math.sqrt(n) if n else 1.0, 1.0 / n if n else 1.0)[normalization]


def c2c_meta(x, dims, normalization, forward):
    return mr.make_meta(x._sizes, x._dtype, None, x._device)


def r2c_meta(x, dims, normalization, onesided):
    sizes = list(x._sizes)
    if onesided:
        sizes[dims[-1]] = sizes[dims[-1]] // 2 + 1
    return mr.make_meta(tuple(sizes), COMPLEX_OF[x._dtype], None, x._device)


def c2r_meta(x, dims, normalization, last_dim_size):
    sizes = list(x._sizes)
    sizes[dims[-1]] = last_dim_size
    return mr.make_meta(tuple(sizes), REAL_OF[x._dtype], None, x._device)


def c2c_kernel(xp, x, dims, normalization, forward, *, out):
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    # norm="backward" leaves fftn unscaled, norm="forward" leaves ifftn unscaled: the scale is ours.
    result = transform(x, axes=dims, norm="backward" if forward else "forward")
    out[...] = result * _scale(normalization, _signal_size(x.shape, dims))
    return out


def r2c_kernel(xp, x, dims, normalization, onesided, *, out):
    result = xp.fft.rfftn(x, axes=dims) if onesided else xp.fft.fftn(x, axes=dims)
    out[...] = result * _scale(normalization, _signal_size(x.shape, dims))
    return out


def c2r_kernel(xp, x, dims, normalization, last_dim_size, *, out):
    sizes = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    result = xp.fft.irfftn(x, s=sizes, axes=dims, norm="forward")
    out[...] = result * _scale(normalization, _signal_size(out.shape, dims))
    return out


OPS = {
    "fft_c2c": register_op("fft_c2c", meta=c2c_meta, kernel=c2c_kernel),
    "fft_r2c": register_op("fft_r2c", meta=r2c_meta, kernel=r2c_kernel),
    "fft_c2r": register_op("fft_c2r", meta=c2r_meta, kernel=c2r_kernel),
}

METHODS: dict = {}
