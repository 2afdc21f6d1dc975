"""cat, stack, flip, tril/triu, gather, index_select, masked_fill, one_hot, repeat and padding vs NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.ops.shape.shape_ops import one_hot
from dynamo_lite.tensor.dtype import result_type
from dynamo_lite.tensor.tensor import from_array

from .oracle import assert_close, layouts, make, seeds, shapes, to_numpy


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_dims=1), count=st.integers(1, 3), layout=layouts, seed=seeds, data=st.data())
def test_cat_and_stack(shape, count, layout, seed, data):
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    axis = dim % len(shape)
    parts, arrays = [], []
    for i in range(count):
        part_shape = list(shape)
        part_shape[axis] = data.draw(st.integers(0, 3))
        dtype = data.draw(st.sampled_from([np.float32, np.int64]))
        t, a = make(rng, part_shape, dtype, layout)
        parts.append(t)
        arrays.append(a)
    result = dl.cat(parts, dim)
    rt = result_type(*parts).numpy  # torch promotion (float32 with int64 stays float32)
    expected = np.concatenate([a.astype(rt) for a in arrays], axis=axis)
    assert result.dtype.numpy == rt
    assert_close(result, expected)
    same = [make(rng, shape, np.float32, layout) for _ in range(count)]
    stack_dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    assert_close(dl.stack([t for t, _ in same], stack_dim), np.stack([a for _, a in same], stack_dim))


def test_cat_layouts_and_legacy_empty():
    cl, a = make(np.random.default_rng(0), (2, 3, 4, 5), np.float32, "channels_last")
    assert dl.cat([cl, cl], 1).is_contiguous(memory_format=dl.channels_last)
    assert dl.cat([cl, dl.ones(2, 1, 4, 5)], 1).is_contiguous()
    assert_close(dl.cat([dl.ones(0), from_array(a[0])]), a[0])  # a 1-D empty tensor joins anything


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.cat([]), ValueError, "expected a non-empty list of Tensors"),
        (lambda: dl.cat([dl.ones(2, 3), dl.ones(2, 4)]), RuntimeError,
         "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1"),
        (lambda: dl.cat([dl.ones(2, 3), dl.ones(2, 3, 4)]), RuntimeError, "Tensors must have same number of dimensions: got 2 and 3"),
        (lambda: dl.cat([dl.tensor(1.0), dl.tensor(1.0)]), RuntimeError, "zero-dimensional tensor \\(at position 0\\)"),
        (lambda: dl.cat([dl.ones(2, 3)], 2), IndexError, "Dimension out of range"),
        (lambda: dl.stack([dl.ones(3), dl.ones(4)]), RuntimeError,
         r"stack expects each tensor to be equal size, but got \[3\] at entry 0 and \[4\] at entry 1"),
        (lambda: dl.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    ],
)
def test_cat_stack_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_dims=2), layout=layouts, seed=seeds, diagonal=st.integers(-3, 3), data=st.data())
def test_flip_tril_triu(shape, layout, seed, diagonal, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, np.float32, layout)
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    flipped = x.flip(*dims)
    assert_close(flipped, np.flip(a, dims))
    assert_close(dl.flip(x, dims), np.flip(a, dims))
    assert_close(dl.tril(x, diagonal), np.tril(a, diagonal))
    assert_close(x.triu(diagonal), np.triu(a, diagonal))
    assert dl.tril(x).is_contiguous()


def test_flip_keeps_the_memory_format():
    single = dl.empty_strided((1,), (2,)).fill_(1.0)
    assert single.flip(0).stride() == (2,)  # a dense input keeps its strides, as empty_like does
    cl, _ = make(np.random.default_rng(0), (2, 3, 4, 5), np.float32, "channels_last")
    assert cl.flip(1).stride() == cl.stride()
    t, _ = make(np.random.default_rng(0), (3, 4), np.float32, "transposed")
    assert t.flip(0).stride() == (1, 3)


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3), layout=layouts, seed=seeds, data=st.data())
def test_gather_and_index_select(shape, layout, seed, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, np.float32, layout)
    dim = data.draw(st.integers(0, len(shape) - 1))
    index_shape = tuple(data.draw(st.integers(1, 4)) if d == dim else data.draw(st.integers(1, s)) for d, s in enumerate(shape))
    index = rng.integers(0, shape[dim], index_shape)
    corner = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_shape))
    assert_close(dl.gather(x, dim, from_array(index)), np.take_along_axis(a[corner], index, dim))
    assert_close(dl.gather(x, dim - len(shape), from_array(index)), np.take_along_axis(a[corner], index, dim))
    picks = rng.integers(0, shape[dim], data.draw(st.integers(0, 5)))
    dtype = data.draw(st.sampled_from([np.int64, np.int32]))
    assert_close(x.index_select(dim - len(shape), from_array(picks.astype(dtype))), np.take(a, picks, axis=dim))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.gather(dl.ones(3, 4), 0, dl.zeros(2, dtype=dl.int64)), RuntimeError,
         "Index tensor must have the same number of dimensions as input tensor"),
        (lambda: dl.gather(dl.ones(3, 4), 0, dl.zeros(2, 5, dtype=dl.int64)), RuntimeError,
         r"Size does not match at dimension 1 expected index \[2, 5\] to be no larger than self \[3, 4\] apart from dimension 0"),
        (lambda: dl.gather(dl.ones(3, 4), 0, dl.full((2, 2), 3)), RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: dl.gather(dl.ones(3, 4), 0, dl.full((2, 2), -1)), RuntimeError, "index -1 is out of bounds"),
        (lambda: dl.gather(dl.ones(3, 4), 0, dl.zeros(2, 2)), RuntimeError, "Expected dtype int32/int64 for index"),
        (lambda: dl.index_select(dl.ones(3, 4), 0, dl.zeros(2)), RuntimeError, "Expected dtype int32 or int64 for index"),
        (lambda: dl.index_select(dl.ones(3, 4), 0, dl.zeros(2, 2, dtype=dl.int64)), IndexError, "Index is supposed to be a vector"),
        (lambda: dl.index_select(dl.ones(3, 4), 0, dl.tensor([3])), IndexError, "index out of range in self"),
        (lambda: dl.index_select(dl.ones(3, 4), 0, dl.tensor([-1])), IndexError, "index out of range in self"),
    ],
)
def test_indexing_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_dims=1), layout=layouts, seed=seeds, dtype=st.sampled_from([np.float32, np.int64]))
def test_masked_fill(shape, layout, seed, dtype):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    mask = rng.integers(0, 2, shape[-1:]).astype(bool)
    result = x.masked_fill(from_array(mask), 7)
    assert result.dtype.numpy == dtype and result.is_contiguous()
    assert_close(result, np.where(mask, 7, a).astype(dtype))
    assert_close(dl.masked_fill(x, from_array(mask), dl.tensor(-1.5)), np.where(mask, -1.5, a).astype(dtype))
    version = x._version
    if layout != "expanded":
        assert x.masked_fill_(from_array(mask), 3) is x
        assert_close(x, np.where(mask, 3, a).astype(dtype))
        assert x._version == version + 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dl.ones(3).masked_fill(dl.ones(3), 1.0), "masked_fill_ only supports boolean masks, but got mask with dtype float"),
        (lambda: dl.ones(3).masked_fill(dl.ones(3, dtype=dl.bool), dl.ones(3)),
         r"only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)."),
        (lambda: dl.ones(3).masked_fill_(dl.ones(2, 3, dtype=dl.bool), 1.0),
         r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
    ],
)
def test_masked_fill_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_one_hot():
    labels = dl.tensor([[0, 3], [1, 2]])
    result = one_hot(labels, 4)
    assert result.dtype is dl.int64 and result.shape == (2, 2, 4)
    np.testing.assert_array_equal(to_numpy(result), np.eye(4, dtype=np.int64)[labels.numpy()])
    assert one_hot(dl.tensor([1, 4])).shape == (2, 5)  # the class count is read from the data
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        one_hot(dl.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        one_hot(dl.tensor([-1]), 3)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor."):
        one_hot(dl.ones(2), 3)


@settings(max_examples=20, deadline=None)
@given(shape=shapes(max_dims=3), layout=layouts, seed=seeds, data=st.data())
def test_repeat_and_tile(shape, layout, seed, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, np.float32, layout)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 2)))
    assert_close(x.repeat(*reps), np.tile(a, reps) if reps else a)
    assert_close(dl.tile(x, reps[-len(shape):] if shape else ()), np.tile(a, reps[-len(shape):] if shape else ()))
    if shape:
        with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
            x.repeat(*([2] * (len(shape) - 1)))


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=4), layout=layouts, seed=seeds, value=st.sampled_from([0, 1.5]), data=st.data())
def test_constant_pad_nd(shape, layout, seed, value, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, np.float32, layout)
    pads = []
    for size in reversed(shape[-data.draw(st.integers(1, len(shape))):]):
        pads += [data.draw(st.integers(-(size // 2), 2)), data.draw(st.integers(-(size // 2), 2))]
    result = dl.constant_pad_nd(x, pads, value)
    expected = a
    for i in range(len(pads) // 2):
        axis = len(shape) - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        expected = np.take(expected, range(max(-left, 0), expected.shape[axis] - max(-right, 0)), axis=axis)
        widths = [(0, 0)] * len(shape)
        widths[axis] = (max(left, 0), max(right, 0))
        expected = np.pad(expected, widths, constant_values=value)
    assert_close(result, expected)
    if x.suggest_memory_format() is dl.channels_last:
        assert result.is_contiguous(memory_format=dl.channels_last)


def test_pad_errors():
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        dl.constant_pad_nd(dl.ones(3, 3), (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times the input dimension"):
        dl.constant_pad_nd(dl.ones(3, 3), (1,) * 6)
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        dl.constant_pad_nd(dl.ones(3, 3), (-2, -2))
