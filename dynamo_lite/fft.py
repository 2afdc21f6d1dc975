"""dl.fft: discrete Fourier transforms (fft, ifft, rfft, irfft and their 2-D / n-D forms), sample
frequencies and shifts, as torch.fft; differentiable, and captured in graphs as registry ops.

Example:
    >>> dl.fft.fft(dl.tensor([1.0, 0.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
"""
from __future__ import annotations

from .ops.core import api as ops
from .ops.core.meta_rules import TYPE_NAMES
from .ops.spectral import OPS
from .tensor.dtype import float16, bfloat16, get_default_dtype
from .tensor.layout import normalize_dim

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "ifft", "ifft2", "ifftn", "ifftshift", "irfft", "irfft2", "irfftn",
    "rfft", "rfft2", "rfftfreq", "rfftn",
]

#: norm -> (normalization of the forward transform, of the inverse) (NOTE: [fft normalization]).
_NORMALIZATION = {"backward": (0, 2), "ortho": (1, 1), "forward": (2, 0)}


def _normalization(norm, forward: bool) -> int:
    norm = "backward" if norm is None else norm
    if norm not in _NORMALIZATION:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMALIZATION[norm][0 if forward else 1]


def _floating(x, require_real_name=None):
    """``x`` with integer/bool values promoted to the default float dtype; half precisions refused."""
    if x.dtype in (float16, bfloat16):
        raise RuntimeError(f"Unsupported dtype {TYPE_NAMES[x.dtype]}")
    if require_real_name and x.is_complex():
        raise RuntimeError(f"{require_real_name} expects a real input tensor, but got {TYPE_NAMES[x.dtype]}")
    return x if x.is_floating_point() or x.is_complex() else x.to(get_default_dtype())


def _complex(x):
    x = _floating(x)
    return x if x.is_complex() else ops.complex(x, ops.zeros_like(x))


def _dims_and_sizes(x, s, dim) -> tuple:
    """The transformed dims (normalized, unique) and their signal sizes (None: keep the input's)."""
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = tuple(range(x.dim())) if s is None else tuple(range(x.dim() - len(s), x.dim()))
    dims = tuple(normalize_dim(d, x.dim()) for d in ((dim,) if isinstance(dim, int) else dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    return dims, (None,) * len(dims) if s is None else tuple(s)


def _resize(x, dims, sizes):
    """``x`` cut or zero-padded to ``sizes`` along ``dims``."""
    for d, n in zip(dims, sizes):
        if n is None:
            continue
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        current = x.shape[d]
        if n < current:
            x = x.narrow(d, 0, n)
        elif n > current:
            pad = [0, 0] * (x.dim() - 1 - d) + [0, n - current]
            x = ops.constant_pad_nd(x, pad)
    return x


def _c2c(x, s, dim, norm, forward):
    x = _complex(x)
    dims, sizes = _dims_and_sizes(x, s, dim)
    return OPS["fft_c2c"](_resize(x, dims, sizes), dims, _normalization(norm, forward), forward)


def _r2c(name, x, s, dim, norm):
    x = _floating(x, require_real_name=name)
    dims, sizes = _dims_and_sizes(x, s, dim)
    return OPS["fft_r2c"](_resize(x, dims, sizes), dims, _normalization(norm, True), True)


def _c2r(x, s, dim, norm):
    x = _complex(x)
    dims, sizes = _dims_and_sizes(x, s, dim)
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resize(x, dims, sizes[:-1] + (last // 2 + 1,))
    return OPS["fft_c2r"](x, dims, _normalization(norm, False), last)


def fft(input, n=None, dim=-1, norm=None):
    """The 1-D discrete Fourier transform along ``dim`` (``n`` points: the input cut or zero-padded).

    Example:
        >>> dl.fft.fft(dl.ones(2)).tolist()
        [(2+0j), 0j]
    """
    return _c2c(input, None if n is None else (n,), (dim,), norm, True)


def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of ``fft``."""
    return _c2c(input, None if n is None else (n,), (dim,), norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """The 2-D transform over ``dim``."""
    return _c2c(input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of ``fft2``."""
    return _c2c(input, s, dim, norm, False)


def fftn(input, s=None, dim=None, norm=None):
    """The n-D transform over ``dim`` (all dims, or the last ``len(s)``)."""
    return _c2c(input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None):
    """The inverse of ``fftn``."""
    return _c2c(input, s, dim, norm, False)


def rfft(input, n=None, dim=-1, norm=None):
    """The transform of a real signal: the ``n // 2 + 1`` non-negative frequencies.

    Example:
        >>> dl.fft.rfft(dl.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
        [(10+0j), (-2+2j), (-2+0j)]
    """
    return _r2c("rfft", input, None if n is None else (n,), (dim,), norm)


def irfft(input, n=None, dim=-1, norm=None):
    """The real signal (``n`` points, by default ``2 * (size - 1)``) whose ``rfft`` is ``input``."""
    return _c2r(input, None if n is None else (n,), (dim,), norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("rfftn", input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r(input, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None):
    return _r2c("rfftn", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None):
    return _c2r(input, s, dim, norm)


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **_):
    """The sample frequencies of an ``n``-point ``fft`` with sample spacing ``d``.

    Example:
        >>> dl.fft.fftfreq(4).tolist()
        [0.0, 0.25, -0.5, -0.25]
    """
    dtype = dtype or get_default_dtype()
    steps = ops.cat([ops.arange((n - 1) // 2 + 1, dtype=dtype, device=device),
                     ops.arange(-(n // 2), 0, dtype=dtype, device=device)])
    return _frequencies(steps, n, d, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **_):
    """The sample frequencies of an ``n``-point ``rfft``: ``0 .. n // 2`` over ``d * n``."""
    steps = ops.arange(n // 2 + 1, dtype=dtype or get_default_dtype(), device=device)
    return _frequencies(steps, n, d, requires_grad)


def _frequencies(steps, n, d, requires_grad):
    frequencies = steps * (1.0 / (n * d))
    return frequencies.requires_grad_() if requires_grad else frequencies  # (only then: a graph break)


def _shift(input, dim, sign):
    dims = tuple(range(input.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    dims = tuple(normalize_dim(d, input.dim()) for d in dims)
    if not dims:
        return input
    return ops.roll(input, tuple(sign * (input.shape[d] // 2) for d in dims), dims)


def fftshift(input, dim=None):
    """``input`` with the zero frequency moved to the middle of ``dim`` (all dims by default)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``."""
    return _shift(input, dim, -1)

