"""Helpers for op tests: dl tensors in many memory layouts over known NumPy values."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array

LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "channels_last")
NUMERIC_DTYPES = (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)
FLOAT_DTYPES = (np.float32, np.float64)


def values(rng, shape, dtype):
    """Random values of ``dtype``: normals for floats, small ints (non-negative for uint8), bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    low = 0 if dtype.kind == "u" else -6
    return rng.integers(low, 7, shape).astype(dtype)


def laid_out(arr: np.ndarray, layout: str) -> dl.Tensor:
    """A dl tensor holding ``arr``'s values in the requested memory layout (shares no memory with arr).

    ``transposed`` reverses the dim order in memory, ``sliced`` takes every other element of a
    larger buffer at a nonzero offset, ``channels_last`` is NHWC for 4-D arrays; layouts that
    do not apply to the rank fall back to contiguous. (``expanded`` needs a smaller source:
    see ``expanded``.)
    """
    arr = np.asarray(arr)
    if layout == "transposed" and arr.ndim >= 2:
        return from_array(np.ascontiguousarray(arr.transpose()).transpose())
    if layout == "sliced" and arr.ndim >= 1:
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1] + 1,), dtype=arr.dtype)
        view = big[..., 1::2]
        view[...] = arr
        return from_array(view)
    if layout == "channels_last" and arr.ndim == 4:
        return from_array(np.ascontiguousarray(arr.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2))
    return from_array(np.array(arr, copy=True))


def expanded(rng, shape, dtype):
    """A tensor with stride-0 (broadcast) dims over fresh values, and the values it holds."""
    shape = tuple(shape)
    small = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
    src = values(rng, small, dtype)
    full = np.broadcast_to(src, shape)
    return from_array(full), np.array(full)


def make(rng, shape, dtype, layout="contiguous"):
    """``(tensor, values)``: a tensor of ``shape``/``dtype`` in ``layout`` and the NumPy values it holds."""
    if layout == "expanded":
        return expanded(rng, shape, dtype)
    arr = values(rng, shape, dtype)
    return laid_out(arr, layout), arr


def to_numpy(t) -> np.ndarray:
    return np.array(t.numpy(), copy=True)


def assert_close(actual, expected, *, rtol=None, atol=None, dtype=None):
    """Compare a dl tensor to NumPy values: shape, dtype (if given) and values (NaN == NaN)."""
    got = to_numpy(actual)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), f"dtype {got.dtype} != {np.dtype(dtype)}"
    if got.dtype.kind in "biu" and expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return
    tol = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5}.get(got.dtype, 1e-9)
    np.testing.assert_allclose(
        got.astype(np.float64), expected.astype(np.float64), rtol=rtol or tol, atol=atol or tol, equal_nan=True
    )


# -- hypothesis strategies ------------------------------------------------------------------
def shapes(min_dims=0, max_dims=4, max_side=5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


layouts = st.sampled_from(LAYOUTS)
numeric_dtypes = st.sampled_from(NUMERIC_DTYPES)
seeds = st.integers(0, 2**32 - 1)
