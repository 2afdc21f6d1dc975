"""The gamma family and Bessel I0 as registry ops: lgamma, digamma, polygamma, mvlgamma, i0 (and i1, i0's derivative).

NOTE: [gamma kernels] NumPy has no vectorized lgamma/digamma/zeta, so the kernels are
written with array arithmetic only (they run on CuPy unchanged), all in float64:
- lgamma: the Lanczos approximation (g = 7, 9 terms; ~1e-15 relative) for x >= 0.5 and the
  reflection formula below it; poles (0, -1, -2, ...) and +-inf give +inf, as torch does.
- digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
  series in 1/x^2; reflection for x < 0.5; 0 gives -inf (-0.0: +inf), negative integers NaN.
- polygamma(n >= 1): (-1)^(n+1) n! zeta(n + 1, x) with the Hurwitz zeta by direct sum up to
  x + N >= 10, then Euler-Maclaurin with Bernoulli numbers (poles give +inf in zeta).
- i0/i1: the power series (all terms positive, so no cancellation) until the terms vanish;
  +-inf give NaN, as in torch.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core import meta_rules as mr
from ..core.kernel_utils import quiet
from ..core.registry import register_op, register_table

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0"]

LANCZOS_G = 7.0
LANCZOS_COEFFICIENTS = (
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
)
HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)
SHIFT_TO = 10.0  # digamma/zeta: recurse up to here, then the asymptotic series
ASYMPTOTIC_TERMS = 12


def _bernoulli_even(count: int) -> list:
    """B_2, B_4, ..., B_2count as Fractions (Akiyama-Tanigawa)."""
    size = 2 * count + 1
    row, numbers = [], []
    for m in range(size):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    return [numbers[2 * k] for k in range(1, count + 1)]


BERNOULLI_EVEN = _bernoulli_even(ASYMPTOTIC_TERMS)


def _float64(xp, x):
    return xp.asarray(x, dtype=np.float64)


def _lgamma_positive(xp, x):
    """lgamma for x >= 0.5 (Lanczos)."""
    z = x - 1.0
    series = xp.full_like(z, LANCZOS_COEFFICIENTS[0])
    for i, c in enumerate(LANCZOS_COEFFICIENTS[1:], start=1):
        series = series + c / (z + i)
    t = z + LANCZOS_G + 0.5
    return HALF_LOG_TWO_PI + (z + 0.5) * xp.log(t) - t + xp.log(series)


def lgamma_values(xp, x):
    x = _float64(xp, x)
    with quiet(xp):
        reflected = 1.0 - x
        small = x < 0.5
        base = _lgamma_positive(xp, xp.where(small, reflected, x))
        reflection = math.log(math.pi) - xp.log(xp.abs(xp.sin(math.pi * x))) - base
        result = xp.where(small, reflection, base)
        result = xp.where((x == 1.0) | (x == 2.0), 0.0, result)  # exact zeros, as torch gives
        pole = (x <= 0) & (x == xp.floor(x))
        return xp.where(pole | xp.isinf(x), xp.inf, result)


def _shift_up(xp, x, term):
    """Sum ``term(x + k)`` for k = 0, 1, ... while ``x + k < SHIFT_TO``; return (sum, shifted x)."""
    total = xp.zeros_like(x)
    for _ in range(int(SHIFT_TO)):
        below = x < SHIFT_TO
        total = total + xp.where(below, term(x), 0.0)
        x = xp.where(below, x + 1.0, x)
    return total, x


def digamma_values(xp, x):
    x = _float64(xp, x)
    with quiet(xp):
        small = x < 0.5
        y = xp.where(small, 1.0 - x, x)
        shift, y = _shift_up(xp, y, lambda v: 1.0 / v)
        inverse_square = 1.0 / (y * y)
        series = xp.zeros_like(y)
        for k in range(ASYMPTOTIC_TERMS, 0, -1):
            series = (series + float(BERNOULLI_EVEN[k - 1] / (2 * k))) * inverse_square
        positive = xp.log(y) - 0.5 / y - series - shift
        result = xp.where(small, positive - math.pi / xp.tan(math.pi * x), positive)
        result = xp.where((x < 0) & (x == xp.floor(x)), xp.nan, result)
        return xp.where(x == 0, xp.copysign(xp.inf, -x), result)


def hurwitz_zeta(xp, s: int, q):
    """``sum_k (q + k)^-s`` for an integer ``s >= 2`` (NOTE: [gamma kernels])."""
    with quiet(xp):
        head, a = _shift_up(xp, q, lambda v: v ** -float(s))
        tail = a ** (1.0 - s) / (s - 1) + 0.5 * a ** -float(s)
        rising, power = float(s), a ** (-float(s) - 1.0)  # s (s+1) ... (s+2k-2) and a^(-s-2k+1)
        for k in range(1, ASYMPTOTIC_TERMS + 1):
            tail = tail + float(BERNOULLI_EVEN[k - 1] / math.factorial(2 * k)) * rising * power
            rising *= (s + 2 * k - 1) * (s + 2 * k)
            power = power / (a * a)
        pole = (q <= 0) & (q == xp.floor(q))
        return xp.where(pole, xp.inf, head + tail)


def polygamma_values(xp, n: int, x):
    x = _float64(xp, x)
    if n == 0:
        return digamma_values(xp, x)
    with quiet(xp):
        result = (-1.0) ** (n + 1) * math.factorial(n) * hurwitz_zeta(xp, n + 1, x)
        return result if n == 1 else xp.where(x == xp.inf, xp.nan, result)  # torch's NaN at +inf for n >= 2


def _bessel_series(xp, x, order: int):
    """``sum_k (x/2)^(2k+order) / (k! (k+order)!)`` for order 0 or 1."""
    x = _float64(xp, x)
    quarter_square = x * x / 4.0
    term = x / 2.0 if order else xp.ones_like(x)
    total = term
    with quiet(xp):
        for k in range(1, 1000):
            term = term * quarter_square / (k * (k + order))
            total = total + term
            if not bool(xp.any(term > total * 1e-17)):
                break
    return total


def _writer(values):
    def kernel(xp, x, out):
        out[...] = values(xp, x)
        return out

    kernel.__name__ = values.__name__.replace("_values", "_kernel")
    return kernel


def i0_values(xp, x):
    # +-inf give NaN, as torch's i0 does (its exp(x) * series form evaluates inf * 0 there).
    return xp.where(xp.isinf(x), xp.nan, _bessel_series(xp, xp.where(xp.isinf(x), 0.0, x), 0))


def i1_values(xp, x):
    return xp.where(xp.isinf(x), xp.nan, _bessel_series(xp, xp.where(xp.isinf(x), 0.0, x), 1))


def float_unary_meta(input):
    return mr.pointwise_meta(input, dtype=mr.float_dtype(input._dtype))


def polygamma_meta(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return float_unary_meta(input)


def polygamma_kernel(xp, n, x, out):
    out[...] = polygamma_values(xp, n, x)
    return out


# name -> (meta rule, kernel, has an in-place variant)
GAMMA_OPS = {
    "lgamma": (float_unary_meta, _writer(lgamma_values), True),
    "digamma": (float_unary_meta, _writer(digamma_values), True),
    "i0": (float_unary_meta, _writer(i0_values), True),
    "i1": (float_unary_meta, _writer(i1_values), False),
}
OPS = register_table(GAMMA_OPS, ("pointwise",), mr.inplace_variant)
OPS["polygamma"] = register_op("polygamma", meta=polygamma_meta, kernel=polygamma_kernel)


def lgamma(input):
    """The log of the absolute value of the gamma function (+inf at poles).

    Example:
        >>> round(dl.lgamma(dl.tensor([5.0])).item(), 4)
        3.1781
    """
    return OPS["lgamma"](input)


def digamma(input):
    """The derivative of lgamma.

    Example:
        >>> round(dl.digamma(dl.tensor([1.0])).item(), 4)
        -0.5772
    """
    return OPS["digamma"](input)


def polygamma(n, input):
    """The ``n``-th derivative of digamma (``n = 0`` is digamma).

    Example:
        >>> round(dl.polygamma(1, dl.tensor([1.0])).item(), 4)
        1.6449
    """
    return OPS["polygamma"](n, input)


def i0(input):
    """The modified Bessel function of the first kind, order 0.

    Example:
        >>> round(dl.i0(dl.tensor([1.0])).item(), 4)
        1.2661
    """
    return OPS["i0"](input)


def mvlgamma(input, p):
    """The multivariate log-gamma of dimension ``p``: ``p(p-1)/4 log(pi) + sum_i lgamma(input - i/2)``.

    Elements not greater than ``(p - 1) / 2`` give inf, as in torch (no check reads the values).

    Example:
        >>> round(dl.mvlgamma(dl.tensor([2.5]), 2).item(), 4)
        0.8516
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input if input.dtype.is_floating_point else input.to(mr.float_dtype(input.dtype))
    terms = [lgamma(x - i / 2) for i in range(p)]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total + p * (p - 1) / 4 * math.log(math.pi)


def _inplace_method(name: str):
    op = OPS[name + "_"]

    def method(self):
        return op(self)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``: writes into ``self`` and returns it."
    return method


def _polygamma_method(self, n):
    return OPS["polygamma"](n, self)


def _mvlgamma_(self, p):
    return self.copy_(mvlgamma(self, p))


METHODS = {name: globals()[name] for name in ("lgamma", "digamma", "i0", "mvlgamma")}
METHODS.update({name + "_": _inplace_method(name) for name in ("lgamma", "digamma", "i0")})
METHODS.update({"polygamma": _polygamma_method, "mvlgamma_": _mvlgamma_})
