"""Indexing against NumPy: basic indexing is a view, advanced indexing copies, setitem writes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.ops.core.registry import REGISTRY


def pair(shape, dtype=np.float64):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return dl.from_numpy(a.copy()), a


def same_storage(a, b):
    return a.untyped_storage() is b.untyped_storage()


@st.composite
def basic_index(draw, shape):
    """A basic index (ints, positive-step slices, None, at most one Ellipsis) valid for ``shape``."""
    per_dim = []
    for size in shape:
        entry = [None] if draw(st.integers(0, 3)) == 0 else []
        if draw(st.booleans()):
            entry.append(draw(st.integers(-size, size - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
            entry.append(slice(start, stop, draw(st.one_of(st.none(), st.integers(1, 3)))))
        per_dim.append(entry)
    n = len(shape)
    lo = draw(st.integers(0, n))
    hi = draw(st.integers(lo, n))
    if draw(st.booleans()):  # an Ellipsis stands for dims lo..hi-1
        items = [i for e in per_dim[:lo] for i in e] + [Ellipsis] + [i for e in per_dim[hi:] for i in e]
    else:  # dims from lo on are left out (implicitly full)
        items = [i for e in per_dim[:lo] for i in e]
    return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


@settings(max_examples=50, deadline=None)
@given(data=st.data(), shape=shapes, transposed=st.booleans())
def test_basic_indexing_is_a_view_matching_numpy(data, shape, transposed):
    t, a = pair(shape)
    if transposed:
        t, a = t.permute(*range(len(shape) - 1, -1, -1)), a.T
    index = data.draw(basic_index(a.shape))
    got, want = t[index], a[index]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    assert same_storage(got, t)
    if got.numel() and isinstance(want, np.ndarray):
        assert got.data_ptr() == t.data_ptr() + (want.ctypes.data - a.ctypes.data)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), shape=shapes)
def test_basic_setitem_writes_through(data, shape):
    t, a = pair(shape)
    a = a.copy()
    index = data.draw(basic_index(shape))
    version = t._version
    t[index] = -1.0
    a[index] = -1.0
    np.testing.assert_array_equal(t.numpy(), a)
    assert t._version == version + 1


def test_known_index_geometry():
    x = dl.arange(12).view(3, 4)
    assert x[1].stride() == (1,) and x[1].storage_offset() == 4
    assert x[:, None].stride() == (4, 4, 1)
    assert x[..., 1:3].storage_offset() == 1 and x[..., 1:3].stride() == (4, 1)
    assert x[::2, ::3].stride() == (8, 3)
    assert x[5:].shape == (0, 4)
    assert x[None, ..., None].shape == (1, 3, 4, 1)
    assert x[...] is not x and same_storage(x[...], x)
    assert x[1, 2].shape == () and x[1, 2].item() == 6


@pytest.mark.parametrize(
    "index",
    [
        [0, 2], [[0, 1], [2, 0]], np.array([2, 0]), (slice(None), [1, 3]), ([0, 2], [1, 3]),
        ([0, 2], slice(1, 3)), (Ellipsis, [0, 0, 3]), ([[0], [2]], [1, 2]), (None, [1, 0]),
        (1, [0, 3]), ([True, False, True],), (slice(None), [True, False, True, False]),
    ],
)
def test_advanced_indexing_copies_and_matches_numpy(index):
    t, a = pair((3, 4))
    got = t[index]
    want = a[index if not isinstance(index, list) else np.array(index)]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    assert not same_storage(got, t)


def test_tensor_indices_and_masks():
    t, a = pair((4, 5, 6))
    idx = dl.tensor([3, 0, 3])
    np.testing.assert_array_equal(t[idx].numpy(), a[[3, 0, 3]])
    np.testing.assert_array_equal(t[:, idx.to(dl.int32)].numpy(), a[:, [3, 0, 3]])
    mask = dl.from_numpy(a[..., 0] > 10)
    np.testing.assert_array_equal(t[mask].numpy(), a[a[..., 0] > 10])
    np.testing.assert_array_equal(t[1:, dl.tensor([True, False, True, True, False])].numpy(), a[1:, [0, 2, 3]])
    assert t[dl.tensor(2)].shape == (5, 6)
    np.testing.assert_array_equal(t[True].numpy(), a[None])
    assert t[False].shape == (0, 4, 5, 6)


def test_torch_placement_differs_from_numpy_for_separated_int():
    """Ints are applied as views first (torch), so a lone tensor index stays in place."""
    t, a = pair((5, 6, 7))
    got = t[0, :, [1, 2]]
    assert got.shape == (6, 2)  # NumPy would give (2, 6)
    np.testing.assert_array_equal(got.numpy(), a[0][:, [1, 2]])
    assert t[[0, 1], :, [1, 2]].shape == (2, 6)  # separated tensors: broadcast dims first


def test_advanced_setitem():
    t, a = pair((3, 4))
    a = a.copy()
    t[[0, 2], 1] = 100.0
    a[[0, 2], 1] = 100.0
    t[dl.tensor([1]), :] = dl.tensor([1.0, 2.0, 3.0, 4.0])
    a[[1], :] = [1.0, 2.0, 3.0, 4.0]
    mask = dl.from_numpy(t.numpy() > 50)
    t[mask] = 0.0
    a[a > 50] = 0.0
    np.testing.assert_array_equal(t.numpy(), a)
    assert t._version == 3
    t.index_put_((dl.tensor([0, 0]),), dl.tensor(1.0), accumulate=True)
    a[0] += 2.0
    np.testing.assert_array_equal(t.numpy(), a)


def test_setitem_values():
    t = dl.zeros(2, 3)
    t[0] = dl.tensor([1, 2, 3])  # int values converted to the target dtype
    t[1] = [[4.0, 5.0, 6.0]]  # leading size-1 dims of the value are dropped
    t[:, 0] = dl.tensor(9.5)
    np.testing.assert_array_equal(t.numpy(), [[9.5, 2, 3], [9.5, 5, 6]])
    i = dl.zeros(3, dtype=dl.int64)
    i[1] = 2.7
    assert i.tolist() == [0, 2, 0]
    view = t[1]
    t[1, 1] = -1.0
    assert view[1].item() == -1.0 and view._version == t._version
    with pytest.raises(RuntimeError, match="must match the existing size"):
        t[0] = dl.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape \\[2\\] cannot be broadcast"):
        t[[0, 1, 1]] = dl.zeros(2)


@pytest.mark.parametrize(
    "index, exc, message",
    [
        (5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        ((0, -5), IndexError, "index -5 is out of bounds for dimension 1 with size 4"),
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
        ((Ellipsis, 0, Ellipsis), IndexError, "an index can only have a single ellipsis"),
        ("a", IndexError, "only integers, slices"),
        (1.5, IndexError, "only integers, slices"),
        ([0, 5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (([0, 1], [0, 1, 2]), IndexError, "shape mismatch: indexing tensors could not be broadcast together"),
        ([True, False], IndexError, r"The shape of the mask \[2\] at index 0 does not match"),
    ],
)
def test_index_errors(index, exc, message):
    t, _ = pair((3, 4))
    with pytest.raises(exc, match=message):
        t[index]


def test_float_index_tensor_rejected():
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        dl.zeros(3)[dl.tensor([0.0])]


def test_index_ops_registered():
    assert REGISTRY["index_basic"].view is not None
    assert REGISTRY["index"].kernel is not None
    assert "inplace" in REGISTRY["index_put_"].tags
