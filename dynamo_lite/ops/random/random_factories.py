"""Random factories (rand, randn, randint, randperm and *_like) as ops tagged ``random``.

Each op receives the generator it draws from as an argument (NOTE: [random state] in
``tensor/generator.py``), so eager and compiled runs draw identical numbers.
"""
from __future__ import annotations

import builtins

import numpy as np

from ...tensor.device import as_device
from ...tensor.dtype import as_dtype, int64
from ...tensor.generator import Generator, default_generator, manual_seed
from ...tensor.layout import preserve_format
from ...tensor.meta import TensorMeta
from ..creation.conversions import _assign
from ..creation.factory_args import (
    accepts_requires_grad, check_no_extra, dtype_or_default, factory_meta, like_args, like_meta, size_arg,
)
from ..core.registry import register_op

__all__ = [
    "Generator", "default_generator", "get_rng_state", "initial_seed", "manual_seed", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "seed", "set_rng_state",
]

RANDOM = ("random",)
METHODS: dict = {}  # random Tensor methods (uniform_, normal_ ...) are not provided yet


def _draw(out, generator, on_host, on_device):
    """Fill ``out`` with ``on_host(numpy_generator, shape)`` or, on CUDA, ``on_device(cupy_state, shape)``."""
    if isinstance(out, np.ndarray):
        values = on_host(generator.numpy, out.shape)
    else:
        import cupy

        values = on_device(generator.cupy_random_state(cupy), out.shape)
    return _assign(out, values)


def _float_kind(dtype) -> np.dtype:
    """NumPy draws float32/float64 only; float16 is drawn as float32 and rounded."""
    return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _rand_kernel(xp, *tensor_args, out, dtype, generator, **_):
    kind = _float_kind(dtype)
    return _draw(out, generator, lambda g, s: g.random(s, dtype=kind), lambda r, s: r.random_sample(s, dtype=kind))


def _randn_kernel(xp, *tensor_args, out, dtype, generator, **_):
    kind = _float_kind(dtype)
    return _draw(
        out, generator, lambda g, s: g.standard_normal(s, dtype=kind), lambda r, s: r.standard_normal(s, dtype=kind)
    )


def _randint_kernel(xp, *tensor_args, out, low, high, generator, **_):
    return _draw(
        out, generator, lambda g, s: g.integers(low, high, size=s, dtype=np.int64), lambda r, s: r.randint(low, high, s)
    )


def _randperm_kernel(xp, *, out, n, generator, **_):
    return _draw(out, generator, lambda g, s: g.permutation(n), lambda r, s: r.permutation(n))


def _check_float(name, dtype):
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name}(): expected a floating point dtype, got {dtype!r}")


def _rand_meta(name):
    def meta(*args, dtype, **kwargs):
        _check_float(name, dtype)
        return (like_meta if args else factory_meta)(*args, dtype=dtype, **kwargs)

    return meta


def _randint_meta(*args, low, high, **kwargs):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return (like_meta if args else factory_meta)(*args, **kwargs)


rand_op = register_op("rand", meta=_rand_meta("rand"), kernel=_rand_kernel, tags=RANDOM)
randn_op = register_op("randn", meta=_rand_meta("randn"), kernel=_randn_kernel, tags=RANDOM)
randint_op = register_op("randint", meta=_randint_meta, kernel=_randint_kernel, tags=RANDOM)
randperm_op = register_op(
    "randperm", meta=lambda n, dtype, device, **_: TensorMeta((n,), dtype, None, device), kernel=_randperm_kernel,
    tags=RANDOM,
)
rand_like_op = register_op("rand_like", meta=_rand_meta("rand_like"), kernel=_rand_kernel, tags=RANDOM)
randn_like_op = register_op("randn_like", meta=_rand_meta("randn_like"), kernel=_randn_kernel, tags=RANDOM)
randint_like_op = register_op("randint_like", meta=_randint_meta, kernel=_randint_kernel, tags=RANDOM)


def _gen(generator):
    return default_generator if generator is None else generator


@accepts_requires_grad
def rand(*size, generator=None, dtype=None, device=None, **kwargs):
    """Uniform samples in [0, 1).

    Example:
        >>> dl.manual_seed(0); dl.rand(2, 3).shape
        dl.Size([2, 3])
    """
    size = size_arg(size, kwargs)
    check_no_extra("rand", kwargs)
    return rand_op(size=size, dtype=dtype_or_default(dtype), device=as_device(device), generator=_gen(generator))


@accepts_requires_grad
def randn(*size, generator=None, dtype=None, device=None, **kwargs):
    """Standard normal samples (same arguments as ``rand``)."""
    size = size_arg(size, kwargs)
    check_no_extra("randn", kwargs)
    return randn_op(size=size, dtype=dtype_or_default(dtype), device=as_device(device), generator=_gen(generator))


@accepts_requires_grad
def randint(*args, generator=None, dtype=None, device=None, **kwargs):
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    Example:
        >>> dl.randint(0, 10, (3,)).dtype
        dynamo_lite.int64
    """
    low = kwargs.pop("low", 0)
    if "high" in kwargs:
        args = (kwargs.pop("high"),) + args
    if "size" in kwargs:
        args = args + (kwargs.pop("size"),)
    if len(args) == 3:
        low, high, size = args
    elif len(args) == 2:
        high, size = args
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    check_no_extra("randint", kwargs)
    size = size_arg((size,), {})
    dtype = int64 if dtype is None else as_dtype(dtype)
    return randint_op(
        low=builtins.int(low), high=builtins.int(high), size=size, dtype=dtype, device=as_device(device),
        generator=_gen(generator),
    )


@accepts_requires_grad
def randperm(n, *, generator=None, dtype=None, device=None, **kwargs):
    """A random permutation of ``0..n-1``."""
    check_no_extra("randperm", kwargs)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dtype = int64 if dtype is None else as_dtype(dtype)
    return randperm_op(n=builtins.int(n), dtype=dtype, device=as_device(device), generator=_gen(generator))


@accepts_requires_grad
def rand_like(input, *, generator=None, dtype=None, device=None, memory_format=preserve_format, **kwargs):
    check_no_extra("rand_like", kwargs)
    dtype, device = like_args(input, dtype, device)
    return rand_like_op(input, dtype=dtype, device=device, memory_format=memory_format, generator=_gen(generator))


@accepts_requires_grad
def randn_like(input, *, generator=None, dtype=None, device=None, memory_format=preserve_format, **kwargs):
    check_no_extra("randn_like", kwargs)
    dtype, device = like_args(input, dtype, device)
    return randn_like_op(input, dtype=dtype, device=device, memory_format=memory_format, generator=_gen(generator))


@accepts_requires_grad
def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None,
                 memory_format=preserve_format, **kwargs):
    """``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    check_no_extra("randint_like", kwargs)
    if high is None:
        low, high = 0, low
    dtype, device = like_args(input, dtype, device)
    return randint_like_op(
        input, low=builtins.int(low), high=builtins.int(high), dtype=dtype, device=device,
        memory_format=memory_format, generator=_gen(generator),
    )


def seed() -> int:
    """Seed the default generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)
