"""NumPy and DLPack interop: zero-copy both ways, strides kept, bad inputs rejected."""
import numpy as np
import pytest

import dynamo_lite as dl

try:
    import cupy

    HAS_CUDA = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, or no usable device
    HAS_CUDA = False


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (np.float16, dl.float16), (np.float32, dl.float32), (np.float64, dl.float64), (np.int8, dl.int8),
        (np.int16, dl.int16), (np.int32, dl.int32), (np.int64, dl.int64), (np.uint8, dl.uint8), (np.bool_, dl.bool),
    ],
)
def test_from_numpy_dtypes(dtype, expected):
    a = np.ones((2, 3), dtype=dtype)
    assert dl.from_numpy(a).dtype is expected


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((3, 4))
    t = dl.from_numpy(a)
    a[1, 2] = 5.0
    assert t[1, 2].item() == 5.0
    t[0, 0] = 7.0
    assert a[0, 0] == 7.0
    assert np.shares_memory(t.numpy(), a)
    assert np.shares_memory(np.asarray(t), a)
    assert t.data_ptr() == a.ctypes.data


def test_from_numpy_keeps_strides_of_views():
    base = np.arange(24.0).reshape(4, 6)
    for a in (base.T, base[::2, 1::3], base[1:, 2]):
        t = dl.from_numpy(a)
        assert t.stride() == tuple(s // 8 for s in a.strides)
        np.testing.assert_array_equal(t.numpy(), a)
        assert np.shares_memory(t.numpy(), base)


def test_from_numpy_errors():
    with pytest.raises(ValueError, match="negative"):
        dl.from_numpy(np.arange(3)[::-1])
    assert dl.from_numpy(np.zeros(2, dtype=np.complex128)).dtype is dl.complex128
    with pytest.raises(TypeError, match="can't convert np.ndarray of type uint16"):
        dl.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        dl.from_numpy([1, 2])


def test_read_only_arrays_share_memory_but_refuse_writes():
    a = np.arange(4.0)
    a.setflags(write=False)
    t = dl.from_numpy(a)
    assert np.shares_memory(t.numpy(), a)
    with pytest.raises(ValueError, match="read-only"):
        t.fill_(1.0)


def test_numpy_roundtrip_is_zero_copy():
    t = dl.arange(6.0).view(2, 3).t()
    n = t.numpy()
    assert n.strides == (4, 12)
    n[0, 1] = 100.0
    assert t[0, 1].item() == 100.0
    assert dl.from_numpy(n).untyped_storage() is not None


def test_dlpack_export_shares_memory():
    t = dl.arange(12.0).view(3, 4)[:, 1:3]
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, t.numpy())
    assert a.strides == t.numpy().strides
    t[0, 0] = -3.0
    assert a[0, 0] == -3.0


def test_from_dlpack_numpy_and_tensor():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = dl.from_dlpack(a)
    assert t.dtype is dl.int32 and t.shape == (2, 3)
    a[1, 1] = 42
    assert t[1, 1].item() == 42
    t2 = dl.from_dlpack(t)
    assert t2 is not t and t2.untyped_storage() is t.untyped_storage()
    back = dl.from_dlpack(np.from_dlpack(t))  # round trip through a capsule
    back[0, 0] = 9
    assert a[0, 0] == 9
    with pytest.raises(TypeError, match="__dlpack__"):
        dl.from_dlpack([1, 2])


def test_from_dlpack_read_only_source():
    a = np.arange(3.0)
    a.setflags(write=False)
    t = dl.from_dlpack(a)
    assert np.shares_memory(t.numpy(), a)


def test_empty_and_zero_dim():
    assert dl.from_numpy(np.zeros((0, 3))).shape == (0, 3)
    z = np.array(2.5)
    t = dl.from_numpy(z)
    assert t.shape == () and t.item() == 2.5
    assert np.from_dlpack(t).shape == ()


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs CuPy and a CUDA device")
def test_cuda_dlpack_roundtrip():
    c = cupy.arange(6, dtype=cupy.float32)
    t = dl.from_dlpack(c)
    assert t.device == dl.device("cuda:0")
    c[0] = 5
    assert t[0].item() == 5
    back = cupy.from_dlpack(t)
    back[1] = 7
    assert c[1] == 7
    assert t.__dlpack_device__() == (2, 0)
