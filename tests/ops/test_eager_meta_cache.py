"""Eager dispatch reuses output metas (NOTE: [eager meta cache]) without changing any answer.

Each case runs an op twice with equal-looking arguments that must still give different
outputs or errors (a value of another type, another default dtype, another layout, an
offset) and checks the second answer is the one the op gives on a fresh cache.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.ops.core import dispatch


@pytest.fixture(autouse=True)
def empty_cache():
    dispatch._META_CACHE.clear()
    yield
    dispatch._META_CACHE.clear()


def test_scalars_of_another_type_promote_differently():
    x = dl.arange(3)
    assert (x + 1).dtype == dl.int64
    assert (x + 1.0).dtype == dl.float32
    assert (x + True).dtype == dl.int64
    assert (dl.tensor([True, False]) + True).dtype == dl.bool


def test_the_default_dtype_is_part_of_the_key():
    x = dl.arange(3)
    assert (x * 0.5).dtype == dl.float32
    previous = dl.get_default_dtype()
    dl.set_default_dtype(dl.float64)
    try:
        assert (x * 0.5).dtype == dl.float64
    finally:
        dl.set_default_dtype(previous)
    assert (x * 0.5).dtype == dl.float32


def test_layouts_and_offsets_keep_their_own_metas():
    base = dl.randn(4, 6)
    assert (base + 1).stride() == (6, 1)
    transposed = base.t()
    assert (transposed + 1).stride() == (1, 6)  # a transposed input gives a transposed output
    assert (transposed.contiguous() + 1).stride() == (4, 1)
    row = base[1]
    assert row.narrow(0, 2, 3).storage_offset() == 8
    assert base[2].narrow(0, 2, 3).storage_offset() == 14
    np.testing.assert_array_equal(base[2].narrow(0, 2, 3).numpy(), base.numpy()[2, 2:5])


def test_a_bad_argument_raises_every_time_after_a_good_one():
    x = dl.randn(2, 3)
    assert x.sum(dim=(0, 1)).shape == ()
    for _ in range(2):
        with pytest.raises(TypeError):
            x.sum(dim=(0.0, 1))
        with pytest.raises(RuntimeError):
            x + dl.randn(4)


def test_repeated_ops_hit_the_cache_and_equal_numpy():
    a, b = dl.randn(5, 7), dl.randn(5, 7)
    for _ in range(3):
        np.testing.assert_allclose((a * b + a).numpy(), a.numpy() * b.numpy() + a.numpy(), rtol=1e-6)
    assert dispatch._META_CACHE  # the metas were kept


def test_the_cache_is_bounded():
    x = dl.randn(3)
    for i in range(dispatch._META_CACHE_LIMIT + 10):
        x * float(i)
    assert len(dispatch._META_CACHE) <= dispatch._META_CACHE_LIMIT
