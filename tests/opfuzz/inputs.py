"""Input tensors of fuzzed programs: a spec (shape, dtype, values, layout, seed) and its tensor.

A spec renders as a call ``make_input(...)`` in a program's source, so a printed program
rebuilds exactly the tensors it failed on. Layouts make the same logical tensor with other
strides (views: transposed, permuted, sliced with steps, expanded, channels_last).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

import dynamo_lite as dl

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int32", "int64")
DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES
LAYOUTS = ("contiguous", "transposed", "permuted", "sliced", "expanded", "channels_last")
VALUE_KINDS = ("normal", "small_ints", "special")

# Values a float input may hold besides normal ones: the cases compiled code tends to get
# wrong (signed zeros, NaN, infinities, denormals, magnitudes near the type's limits).
SPECIAL_FLOATS = (0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, -1e-40, 5e-324, 1e30, -1e30, 3e38, 1e-30, 0.5, -0.5, 1.5,
                  -2.5, 65504.0, 70000.0, 1e-8)


@dataclass(frozen=True)
class InputSpec:
    """How to build one input tensor."""

    shape: tuple
    dtype: str
    values: str = "normal"
    layout: str = "contiguous"
    seed: int = 0
    requires_grad: bool = False

    def source(self) -> str:
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"make_input({self.shape!r}, {self.dtype!r}, {self.values!r}, {self.layout!r}, {self.seed}{grad})"

    def with_shape(self, shape: tuple) -> InputSpec:
        return replace(self, shape=tuple(shape))


def _values(rng: np.random.Generator, shape: tuple, dtype: str, kind: str) -> np.ndarray:
    """A float64/int64/bool array of ``shape`` whose values fit ``dtype``."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        if kind == "special":
            pool = np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 7, info.max - 1], dtype=np.int64)
            return rng.choice(pool, size=shape)
        low, high = (-6, 7) if kind == "small_ints" else (max(info.min, -100), min(info.max, 100))
        return rng.integers(max(low, info.min), high, size=shape, dtype=np.int64)
    if kind == "small_ints":
        return rng.integers(-6, 7, size=shape).astype(np.float64)
    values = rng.standard_normal(shape) * 2
    if kind == "special":
        pool = np.array(SPECIAL_FLOATS)
        mask = rng.random(shape) < 0.5
        values = np.where(mask, rng.choice(pool, size=shape), values)
    return values


def _storage_shape(shape: tuple, layout: str, rng: np.random.Generator):
    """The contiguous tensor to make and the view that turns it into ``shape``."""
    rank = len(shape)
    if layout == "transposed" and rank >= 2:
        base = shape[:-2] + (shape[-1], shape[-2])
        return base, lambda t: t.transpose(-1, -2)
    if layout == "permuted" and rank >= 2:
        order = [int(i) for i in rng.permutation(rank)]
        inverse = [order.index(i) for i in range(rank)]
        base = tuple(shape[order[i]] for i in range(rank))
        return base, lambda t: t.permute(*inverse)
    if layout == "sliced" and rank >= 1:
        base = tuple(2 * n + 1 for n in shape)
        return base, lambda t: t[tuple(slice(1, None, 2) for _ in shape)]
    if layout == "expanded" and rank >= 1:
        base = tuple(1 if (n > 1 and i % 2 == 0) else n for i, n in enumerate(shape))
        return base, lambda t: t.expand(*shape)
    if layout == "channels_last" and rank == 4:
        return shape, lambda t: t.contiguous(memory_format=dl.channels_last)
    return shape, lambda t: t


def make_input(shape, dtype: str, values: str = "normal", layout: str = "contiguous", seed: int = 0,
               requires_grad: bool = False) -> dl.Tensor:
    """The tensor an ``InputSpec`` describes (a fresh one each call); with ``requires_grad`` a
    leaf with the layout's strides."""
    rng = np.random.default_rng(seed)
    base_shape, view = _storage_shape(tuple(shape), layout, rng)
    data = _values(rng, base_shape, dtype, values)
    if dtype in ("float16", "bfloat16"):
        base = dl.from_numpy(np.array(data, dtype=np.float32)).to(getattr(dl, dtype))
    else:
        base = dl.from_numpy(np.array(data, dtype=dtype))
    tensor = view(base)
    return tensor.detach().requires_grad_() if requires_grad else tensor
