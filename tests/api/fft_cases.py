"""dl.fft cases written once against the torch API (``t`` is torch or dynamo_lite):
``fixtures/record_fft.py`` records torch's answers, ``test_fft.py`` checks ours (eager, gradients,
compiled)."""
from __future__ import annotations

import numpy as np

_RNG = np.random.default_rng(21)
X = _RNG.normal(size=(3, 8)).round(3).tolist()
X2 = _RNG.normal(size=(2, 5, 6)).round(3).tolist()
Z = _RNG.normal(size=(3, 8, 2)).round(3).tolist()  # complex, as (real, imag) pairs
ODD = _RNG.normal(size=(7,)).round(3).tolist()


def _x(t, dtype=None):
    return t.tensor(X, dtype=dtype or t.float32)


def _z(t, dtype=None):
    return t.view_as_complex(t.tensor(Z, dtype=dtype or t.float32))


def _pairs(t, *tensors):
    """Complex results as real (…, 2) pairs (what the fixtures store and the tests compare)."""
    return tuple(t.view_as_real(r) if r.is_complex() else r for r in tensors)


# name -> fn(t): each returns tensors; complex ones are compared through view_as_real.
VALUE_CASES = {
    "fft_real": lambda t: _pairs(t, t.fft.fft(_x(t)), t.fft.fft(_x(t), n=5), t.fft.fft(_x(t), n=11, dim=0)),
    "fft_complex": lambda t: _pairs(t, t.fft.fft(_z(t)), t.fft.ifft(_z(t)), t.fft.ifft(_z(t), n=6, norm="ortho")),
    "fft_norms": lambda t: _pairs(t, *(f(_z(t), norm=norm) for f in (t.fft.fft, t.fft.ifft)
                                       for norm in ("backward", "ortho", "forward"))),
    "fft_float64": lambda t: _pairs(t, t.fft.fft(_x(t, t.float64)), t.fft.rfft(_x(t, t.float64), norm="forward")),
    "fft_integer": lambda t: _pairs(t, t.fft.fft(t.arange(6)), t.fft.rfft(t.arange(5))),
    "rfft_irfft": lambda t: _pairs(t, t.fft.rfft(_x(t)), t.fft.rfft(_x(t), n=5, norm="ortho"),
                                   t.fft.irfft(t.fft.rfft(_x(t))), t.fft.irfft(_z(t)), t.fft.irfft(_z(t), n=9),
                                   t.fft.irfft(_z(t), n=4, norm="forward"), t.fft.irfft(t.fft.rfft(t.tensor(ODD)), n=7)),
    "fft2_fftn": lambda t: _pairs(t, t.fft.fft2(t.tensor(X2)), t.fft.ifft2(t.tensor(X2), s=(4, 7)),
                                  t.fft.fftn(t.tensor(X2)), t.fft.fftn(t.tensor(X2), dim=(0, 2), norm="ortho"),
                                  t.fft.ifftn(t.tensor(X2), s=(3, 3))),
    "rfft2_rfftn": lambda t: _pairs(t, t.fft.rfft2(t.tensor(X2)), t.fft.rfftn(t.tensor(X2), s=(4, 4)),
                                    t.fft.irfft2(t.fft.rfft2(t.tensor(X2)), s=(5, 6)),
                                    t.fft.irfftn(t.fft.rfftn(t.tensor(X2))), t.fft.irfftn(_z(t), s=(3, 5))),
    "freqs_shifts": lambda t: (t.fft.fftfreq(5, 0.1), t.fft.fftfreq(8), t.fft.rfftfreq(6, dtype=t.float64),
                               t.fft.rfftfreq(7, 2.0), t.fft.fftshift(_x(t)), t.fft.ifftshift(_x(t)),
                               t.fft.fftshift(t.tensor(X2), dim=1), t.fft.ifftshift(t.tensor(X2), dim=(0, 2)),
                               t.fft.fftshift(t.fft.fftfreq(7))),
}


def _weights(t, shape, dtype):
    return t.tensor(np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape).tolist(), dtype=dtype)


def _grad_of(t, fn, source, complex_input):
    """d/d(input) of sum(weights * view_as_real(fn(input))), in float64; the input is complex when asked."""
    leaf = t.tensor(source, dtype=t.float64, requires_grad=True)
    value = fn(t.view_as_complex(leaf) if complex_input else leaf)
    pairs = t.view_as_real(value) if value.is_complex() else value
    (grad,) = t.autograd.grad((pairs * _weights(t, tuple(pairs.shape), t.float64)).sum(), leaf)
    return grad


GRAD_CASES = {
    "grad_fft_real": lambda t: _grad_of(t, lambda x: t.fft.fft(x, n=10, norm="ortho"), X, False),
    "grad_fft_complex": lambda t: _grad_of(t, lambda z: t.fft.fft(z), Z, True),
    "grad_ifft_complex": lambda t: _grad_of(t, lambda z: t.fft.ifft(z, n=5), Z, True),
    "grad_rfft": lambda t: _grad_of(t, lambda x: t.fft.rfft(x), X, False),
    "grad_rfft_odd": lambda t: _grad_of(t, lambda x: t.fft.rfft(x, norm="forward"), ODD, False),
    "grad_irfft": lambda t: _grad_of(t, lambda z: t.fft.irfft(z), Z, True),
    "grad_irfft_odd_n": lambda t: _grad_of(t, lambda z: t.fft.irfft(z, n=9, norm="ortho"), Z, True),
    "grad_fft2": lambda t: _grad_of(t, lambda x: t.fft.fft2(x), X2, False),
    "grad_rfftn_irfftn": lambda t: _grad_of(t, lambda x: t.fft.irfftn(t.fft.rfftn(x) * 2, s=(5, 6)), X2, False),
}

ERROR_CASES = {
    "rfft_complex": lambda t: t.fft.rfft(_z(t)),
    "fft_zero_points": lambda t: t.fft.fft(_x(t), n=0),
    "irfft_zero_points": lambda t: t.fft.irfft(_x(t), n=0),
    "bad_norm": lambda t: t.fft.fft(_x(t), norm="bad"),
    "dim_out_of_range": lambda t: t.fft.fft(_x(t), dim=2),
    "s_and_dim_lengths": lambda t: t.fft.fftn(_x(t), s=(2, 3), dim=(0,)),
    "repeated_dims": lambda t: t.fft.fftn(_x(t), dim=(0, 0)),
    "fft2_of_vector": lambda t: t.fft.fft2(t.ones(3)),
    "half_input": lambda t: t.fft.fft(t.ones(3, dtype=t.float16)),
    "shift_dim_out_of_range": lambda t: t.fft.fftshift(_x(t), dim=5),
}
