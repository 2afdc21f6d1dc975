"""apply_view_to_array: every view op applied to a bare array gives the eager view, sharing memory."""
import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.ops.shape import views
from dynamo_lite.ops.core.registry import REGISTRY

CASES = [
    ("view", ((2, 2, 3),), {}),
    ("transpose", (0, 1), {}),
    ("permute", ((1, 0),), {}),
    ("expand", ((2, 4, 3),), {}),
    ("squeeze", (None,), {}),
    ("unsqueeze", (1,), {}),
    ("slice", (1, 1, 3, 1), {}),
    ("narrow", (0, 1, 2), {}),
    ("select", (1, 2), {}),
    ("as_strided", ((2, 2), (1, 1)), {"storage_offset": 3}),
    ("unfold", (0, 2, 1), {}),
    ("alias", (), {}),
    ("detach", (), {}),
    ("index_basic", ((1, slice(None, None, 2), None),), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES)
@pytest.mark.parametrize("offset", [0, 2])
def test_apply_view_to_array_matches_eager(name, args, kwargs, offset):
    if name == "index_basic":
        import dynamo_lite.ops.shape.indexing  # noqa: F401  (registers index_basic)
    base = dl.arange(40.0)
    x = base.as_strided((4, 3), (3, 1), offset)
    op = REGISTRY[name]
    eager = op(x, *args, **kwargs)
    arr = x.numpy()
    out = views.apply_view_to_array(np, op, arr, args, kwargs, offset=offset)
    np.testing.assert_array_equal(out, eager.numpy())
    assert out.strides == eager.numpy().strides
    if out.size:
        assert out.ctypes.data == eager.data_ptr()
        assert np.shares_memory(out, base.numpy())
    assert out.flags.writeable


def test_apply_view_to_array_on_plain_numpy_and_read_only():
    a = np.arange(12.0).reshape(3, 4)[:, 1:]
    t = views.apply_view_to_array(np, REGISTRY["transpose"], a, (0, 1))
    np.testing.assert_array_equal(t, a.T)
    t[0, 0] = -1
    assert a[0, 0] == -1
    a.setflags(write=False)
    assert not views.apply_view_to_array(np, REGISTRY["alias"], a).flags.writeable
    empty = views.apply_view_to_array(np, REGISTRY["narrow"], a, (0, 0, 0))
    assert empty.shape == (0, 3)


def test_apply_view_to_array_keeps_owner_alive():
    import gc

    out = views.apply_view_to_array(np, REGISTRY["transpose"], np.arange(6.0).reshape(2, 3), (0, 1))
    gc.collect()
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(2, 3).T)


def test_view_metas_match_eager_geometry():
    x = dl.arange(24.0).view(2, 3, 4).transpose(0, 2)
    for name, args, kwargs in CASES:
        if name in ("view", "expand", "squeeze", "as_strided", "index_basic", "permute"):
            continue
        op = REGISTRY[name]
        eager = op(x, *args, **kwargs)
        meta = op.meta(dl.TensorMeta.of(x), *args, **kwargs)
        assert meta == dl.TensorMeta.of(eager) and meta.storage_offset() == eager.storage_offset()


try:
    import cupy

    HAS_CUDA = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, or no usable device
    HAS_CUDA = False


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs CuPy and a CUDA device")
def test_apply_view_to_cupy_array_shares_memory():
    a = cupy.arange(12.0).reshape(3, 4)
    out = views.apply_view_to_array(cupy, REGISTRY["select"], a, (1, 2))
    assert out.tolist() == [2.0, 6.0, 10.0]
    out[0] = -1
    assert float(a[0, 2]) == -1.0
