"""Random sampling: multinomial, normal, bernoulli and the in-place fills uniform_, normal_, bernoulli_,
exponential_, random_ (drawn from dl's generator, see NOTE: [random state])."""
from __future__ import annotations

import builtins

import numpy as np

from ...tensor.dtype import bool_, float16, float32, float64, int64
from ...tensor.meta import TensorMeta
from ..core import meta_rules as mr
from .random_factories import _draw, _gen
from ..core.registry import register_op

__all__ = ["multinomial", "normal", "bernoulli"]

RANDOM = ("random",)
FILL = ("inplace", "random")


# -- meta rules ---------------------------------------------------------------------------
def multinomial_meta(input, num_samples, replacement=False, *, generator):
    if len(input._sizes) not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {mr.TYPE_NAMES[input._dtype]}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input._sizes[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    return mr.make_meta(input._sizes[:-1] + (num_samples,), int64, None, input._device)


def bernoulli_meta(input, p=None, *, generator):
    if p is None and not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{mr.TYPE_NAMES[input._dtype]}'")
    return mr.make_meta(input._sizes, input._dtype, mr.pointwise_strides(input._sizes, [input]), input._device)


def _float_fill_meta(kernel_name: str, check):
    """Meta of a float-only in-place fill: torch's message for integer tensors, then ``check``."""

    def meta(self, *args, generator):
        if not self._dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{mr.TYPE_NAMES[self._dtype]}'")
        check(*args)
        return TensorMeta.of(self)

    return meta


def _check_uniform(low, high):
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")


def _check_normal(mean, std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def exponential_meta(self, lambd, *, generator):
    if not self._dtype.is_floating_point:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a floating point "
            f"but you specified {mr.TYPE_NAMES[self._dtype]}"
        )
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return TensorMeta.of(self)


def bernoulli_fill_meta(self, p, *, generator):
    if not mr.is_tensor(p) and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if mr.is_tensor(p):
        mr.common_device((self, p))
    return TensorMeta.of(self)


def random_fill_meta(self, low, high, *, generator):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return TensorMeta.of(self)


# -- kernels ------------------------------------------------------------------------------
def _uniform(out, generator):
    """Uniform [0, 1) samples shaped like ``out`` (float32/float64 by its precision)."""
    kind = _float_kind_of(out)
    holder = np.empty(out.shape, dtype=kind) if isinstance(out, np.ndarray) else _device_empty(out, kind)
    return _draw(holder, generator, lambda g, s: g.random(s, dtype=kind), lambda r, s: r.random_sample(s, dtype=kind))


def _standard_normal(out, generator):
    kind = _float_kind_of(out)
    holder = np.empty(out.shape, dtype=kind) if isinstance(out, np.ndarray) else _device_empty(out, kind)
    return _draw(holder, generator, lambda g, s: g.standard_normal(s, dtype=kind),
                 lambda r, s: r.standard_normal(s, dtype=kind))


def _float_kind_of(out):
    return np.dtype(np.float64) if out.dtype == np.float64 else np.dtype(np.float32)


def _device_empty(out, kind):
    import cupy

    return cupy.empty(out.shape, dtype=kind)


def multinomial_kernel(xp, probs, num_samples, replacement=False, *, out, generator):
    rows = probs.reshape(-1, probs.shape[-1]).astype(np.float64)
    if rows.size and (not bool(xp.isfinite(rows).all()) or bool((rows < 0).any())):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1, keepdims=True)
    if bool((totals <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    result = out.reshape(rows.shape[0], num_samples)
    draws = _uniform(xp.empty((rows.shape[0], num_samples if replacement else rows.shape[1])), generator)
    if replacement:  # inverse CDF: the first category whose cumulative share exceeds the draw
        cdf = xp.cumsum(rows / totals, axis=1)
        cdf[:, -1] = 1.0
        for i in range(rows.shape[0]):
            result[i] = xp.searchsorted(cdf[i], draws[i], side="right")
    else:  # exponential races: category c wins at time E_c / p_c; take the first num_samples
        with np.errstate(divide="ignore"):
            times = -xp.log1p(-draws) / rows
        result[...] = xp.argsort(times, axis=1, kind="stable")[:, :num_samples]
    return out


def bernoulli_kernel(xp, x, p=None, *, out, generator):
    probs = x if p is None else p
    u = _uniform(out, generator)
    if p is None and x.size and bool(((x < 0) | (x > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    out[...] = u < probs
    return out


def uniform_kernel(xp, x, low, high, *, out, generator):
    u = _uniform(out, generator)
    out[...] = u * (high - low) + low
    return out


def normal_fill_kernel(xp, x, mean, std, *, out, generator):
    z = _standard_normal(out, generator)
    out[...] = z * std + mean
    return out


def exponential_kernel(xp, x, lambd, *, out, generator):
    u = _uniform(out, generator)
    out[...] = -xp.log1p(-u) / lambd
    return out


def bernoulli_fill_kernel(xp, x, p, *, out, generator):
    if hasattr(p, "shape") and p.size and bool(((p < 0) | (p > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    out[...] = _uniform(out, generator) < p
    return out


def random_fill_kernel(xp, x, low, high, *, out, generator):
    values = _draw(np.empty(out.shape, np.int64) if isinstance(out, np.ndarray) else _device_empty(out, np.int64),
                   generator, lambda g, s: g.integers(low, high, size=s, dtype=np.int64),
                   lambda r, s: r.randint(low, high, s))
    out[...] = values
    return out


OPS = {
    "multinomial": register_op("multinomial", meta=multinomial_meta, kernel=multinomial_kernel, tags=RANDOM),
    "bernoulli": register_op("bernoulli", meta=bernoulli_meta, kernel=bernoulli_kernel, tags=RANDOM),
    "uniform_": register_op("uniform_", meta=_float_fill_meta("check_uniform_bounds", _check_uniform),
                            kernel=uniform_kernel, tags=FILL),
    "normal_": register_op("normal_", meta=_float_fill_meta("normal_kernel_cpu", _check_normal),
                           kernel=normal_fill_kernel, tags=FILL),
    "exponential_": register_op("exponential_", meta=exponential_meta, kernel=exponential_kernel, tags=FILL),
    "bernoulli_": register_op("bernoulli_", meta=bernoulli_fill_meta, kernel=bernoulli_fill_kernel, tags=FILL),
    "random_": register_op("random_", meta=random_fill_meta, kernel=random_fill_kernel, tags=FILL),
}


# -- public functions ---------------------------------------------------------------------
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw category indices from the (unnormalized) probabilities in each row of ``input``.

    Example:
        >>> dl.manual_seed(0); dl.multinomial(dl.tensor([0.0, 1.0]), 2, replacement=True).tolist()
        [1, 1]
    """
    return OPS["multinomial"](input, builtins.int(num_samples), bool(replacement), generator=_gen(generator))


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    """Samples from N(mean, std**2): ``mean``/``std`` are tensors (broadcast) or numbers with a ``size``.

    Example:
        >>> dl.normal(dl.zeros(3), 1.0).shape
        dl.Size([3])
    """
    from ..creation.factories import randn
    from ..pointwise.pointwise import add, mul

    for value in (mean, std):
        if not mr.is_tensor(value):
            _check_normal(0.0, value if value is std else 1.0)
    if not mr.is_tensor(mean) and not mr.is_tensor(std):
        if size is None:
            raise TypeError("normal() with a number mean and std needs a size")
        return add(mul(randn(size, generator=generator, dtype=dtype, device=device), std), mean)
    model = mean if mr.is_tensor(mean) else std
    shape = tuple(model.shape)
    if mr.is_tensor(mean) and mr.is_tensor(std):
        from ...tensor.layout import broadcast_shapes

        shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    noise = randn(shape, generator=generator, dtype=model.dtype, device=model.device)
    return add(mul(noise, std), mean)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``input`` (or ``p`` if given), in ``input``'s dtype.

    Example:
        >>> dl.bernoulli(dl.tensor([0.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    if p is None:
        return OPS["bernoulli"](input, generator=_gen(generator))
    return OPS["bernoulli"](input, p, generator=_gen(generator))


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill ``self`` with samples uniform in ``[a, b)``; returns it."""
    return OPS["uniform_"](self, a, b, generator=_gen(generator))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill ``self`` with samples from N(mean, std**2); returns it."""
    return OPS["normal_"](self, mean, std, generator=_gen(generator))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill ``self`` with samples from the exponential distribution of rate ``lambd``; returns it."""
    return OPS["exponential_"](self, lambd, generator=_gen(generator))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill ``self`` with 0/1 samples, 1 with probability ``p`` (a number or a tensor); returns it."""
    return OPS["bernoulli_"](self, p, generator=_gen(generator))


# random_() without bounds: integers up to the largest each dtype holds exactly.
_RANDOM_LIMITS = {float16: 2**11 + 1, float32: 2**24 + 1, float64: 2**53 + 1, bool_: 2}


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    """Fill ``self`` with integers uniform in ``[from, to)``: ``random_(to)``, ``random_(from, to)`` or
    ``random_()`` (from 0 to the largest integer the dtype holds exactly); returns it."""
    from_ = kwargs.pop("from", from_)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        to = _RANDOM_LIMITS.get(self.dtype) or (int(np.iinfo(self.dtype.numpy).max) + 1)
    return OPS["random_"](self, builtins.int(from_), builtins.int(to), generator=_gen(generator))


METHODS = {
    "multinomial": multinomial, "bernoulli": bernoulli, "uniform_": uniform_, "normal_": normal_,
    "exponential_": exponential_, "bernoulli_": bernoulli_, "random_": random_,
}
