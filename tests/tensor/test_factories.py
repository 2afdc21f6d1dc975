"""Factories: dtype inference as torch does it, values against NumPy, layouts, random state."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.ops.core.registry import REGISTRY


@pytest.mark.parametrize(
    "data, dtype, shape",
    [
        (1, dl.int64, ()),
        (2.5, dl.float32, ()),
        (True, dl.bool, ()),
        ([1, 2, 3], dl.int64, (3,)),
        ([1, 2.0], dl.float32, (2,)),
        ([True, 2], dl.int64, (2,)),
        ([[True], [False]], dl.bool, (2, 1)),
        ([], dl.float32, (0,)),
        ([[], []], dl.float32, (2, 0)),
        (((1, 2), (3, 4)), dl.int64, (2, 2)),
        (np.float64(1.0), dl.float64, ()),
        ([np.float64(1.0), 2.0], dl.float64, (2,)),
        ([np.int32(1), np.int8(2)], dl.int32, (2,)),
        (np.arange(6, dtype=np.int16).reshape(2, 3), dl.int16, (2, 3)),
        ([np.array([1.0, 2.0]), np.array([3.0, 4.0])], dl.float64, (2, 2)),
    ],
)
def test_tensor_infers_dtype_and_shape(data, dtype, shape):
    t = dl.tensor(data)
    assert t.dtype is dtype and t.shape == shape
    np.testing.assert_array_equal(t.numpy(), np.array(data))


def test_tensor_copies_and_converts():
    a = np.arange(3.0)
    t = dl.tensor(a)
    a[0] = 10
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert dl.tensor([1.7, -1.2], dtype=dl.int64).tolist() == [1, -1]
    src = dl.tensor([1, 2])
    c = dl.tensor(src, dtype=dl.float64)
    assert c.dtype is dl.float64 and c.untyped_storage() is not src.untyped_storage()
    assert dl.tensor([dl.tensor(1.5), dl.tensor(2.5)]).tolist() == [1.5, 2.5]
    with dl_default(dl.float64):
        assert dl.tensor([1.0]).dtype is dl.float64


@pytest.mark.parametrize(
    "data, exc, message",
    [
        ([[1, 2], [3]], ValueError, r"expected sequence of length 2 at dim 1 \(got 1\)"),
        ([[1, 2], 3], TypeError, "expected a sequence at dim 1"),
        (["a"], TypeError, "Could not infer dtype of str"),
        ([None], TypeError, "Could not infer dtype of NoneType"),
        ([dl.zeros(2)], ValueError, "only one element tensors"),
    ],
)
def test_tensor_bad_data(data, exc, message):
    with pytest.raises(exc, match=message):
        dl.tensor(data)


def test_tensor_overflow():
    with pytest.raises(RuntimeError, match="without overflow"):
        dl.tensor([300], dtype=dl.uint8)


class dl_default:
    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        self.old = dl.get_default_dtype()
        dl.set_default_dtype(self.dtype)

    def __exit__(self, *exc):
        dl.set_default_dtype(self.old)


def test_as_tensor_shares_when_it_can():
    a = np.zeros(3, dtype=np.float32)
    t = dl.as_tensor(a)
    a[1] = 4
    assert t.tolist() == [0.0, 4.0, 0.0]
    assert dl.as_tensor(t) is t
    converted = dl.as_tensor(a, dtype=dl.float64)
    a[2] = 1
    assert converted.tolist() == [0.0, 4.0, 0.0]
    assert dl.as_tensor([1, 2]).dtype is dl.int64


def test_shape_forms():
    for t in (dl.zeros(2, 3), dl.zeros((2, 3)), dl.zeros([2, 3]), dl.zeros(dl.Size([2, 3])), dl.zeros(size=(2, 3))):
        assert t.shape == (2, 3) and t.dtype is dl.float32
        np.testing.assert_array_equal(t.numpy(), np.zeros((2, 3)))
    assert dl.ones(()).shape == () and dl.ones(()).item() == 1.0
    np.testing.assert_array_equal(dl.ones(2, dtype=dl.int32).numpy(), np.ones(2, dtype=np.int32))
    assert dl.empty(4, 5).shape == (4, 5)
    assert dl.empty(2, 3, 4, 5, memory_format=dl.channels_last).stride() == (60, 1, 15, 3)
    e = dl.empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.untyped_storage().nbytes() == 6 * 4
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -1"):
        dl.zeros(2, -1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        dl.zeros(2, bogus=1)


@pytest.mark.parametrize(
    "value, dtype", [(True, dl.bool), (3, dl.int64), (2.5, dl.float32), (np.float64(1.0), dl.float32)]
)
def test_full_infers_dtype(value, dtype):
    t = dl.full((2, 2), value)
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), value))
    assert dl.full((2,), 1, dtype=dl.float16).dtype is dl.float16


@pytest.mark.parametrize(
    "args, kwargs, dtype, length",
    [
        ((5,), {}, dl.int64, 5),
        ((1, 4), {}, dl.int64, 3),
        ((0, 10, 3), {}, dl.int64, 4),
        ((10, 0, -3), {}, dl.int64, 4),
        ((5.0,), {}, dl.float32, 5),
        ((0, 1, 0.1), {}, dl.float32, 10),
        ((1, 2.5, 0.5), {}, dl.float32, 3),
        ((-1.0, 1.0, 0.3), {}, dl.float32, 7),
        ((0, 5), {"dtype": dl.float64}, dl.float64, 5),
        ((3, 3), {}, dl.int64, 0),
    ],
)
def test_arange(args, kwargs, dtype, length):
    t = dl.arange(*args, **kwargs)
    assert t.dtype is dtype and t.shape == (length,)
    np.testing.assert_allclose(t.numpy(), np.arange(*args).astype(dtype.numpy)[:length], rtol=1e-6)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        dl.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
        dl.arange(5, 0, 1)


@settings(max_examples=30, deadline=None)
@given(start=st.floats(-50, 50), span=st.floats(0.5, 50), steps=st.integers(0, 40))
def test_linspace_matches_numpy(start, span, steps):
    t = dl.linspace(start, start + span, steps, dtype=dl.float64)
    want = np.linspace(start, start + span, steps)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-12, atol=1e-12)
    if steps > 1:
        assert t[-1].item() == start + span and t[0].item() == start


def test_eye():
    np.testing.assert_array_equal(dl.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(dl.eye(2, 4, dtype=dl.int64).numpy(), np.eye(2, 4, dtype=np.int64))
    assert dl.eye(0).shape == (0, 0)


def test_like_factories_preserve_dense_layout():
    cl = dl.zeros(2, 3, 4, 5).contiguous(memory_format=dl.channels_last)
    for fn in (dl.zeros_like, dl.ones_like, dl.empty_like, dl.rand_like, dl.randn_like):
        out = fn(cl)
        assert out.stride() == cl.stride() and out.shape == cl.shape and out.dtype is cl.dtype
    t = dl.zeros(3, 4).t()
    assert dl.zeros_like(t).stride() == (1, 4)
    assert dl.zeros_like(t, memory_format=dl.contiguous_format).stride() == (3, 1)
    sliced = dl.zeros(4, 6).t()[::2]  # not dense: the dim order is kept in a dense layout
    assert dl.empty_like(sliced).stride() == (1, 3)
    assert dl.ones_like(dl.zeros(3).expand(4, 3)).stride() == (3, 1)
    f = dl.full_like(dl.zeros(2, dtype=dl.int32), 7)
    assert f.dtype is dl.int32 and f.tolist() == [7, 7]
    assert dl.zeros_like(t, dtype=dl.float64).dtype is dl.float64
    assert dl.zeros(2).new_ones(3, dtype=dl.int64).tolist() == [1, 1, 1]
    assert dl.zeros(2, dtype=dl.float64).new_tensor([1, 2]).dtype is dl.float64
    assert dl.zeros(2, dtype=dl.int32).new_full((2,), 3).tolist() == [3, 3]


def test_random_reproducible_and_in_range():
    dl.manual_seed(123)
    a = dl.rand(100)
    b = dl.randn(3, 4, dtype=dl.float64)
    c = dl.randint(-3, 3, (50,))
    dl.manual_seed(123)
    np.testing.assert_array_equal(a.numpy(), dl.rand(100).numpy())
    np.testing.assert_array_equal(b.numpy(), dl.randn(3, 4, dtype=dl.float64).numpy())
    np.testing.assert_array_equal(c.numpy(), dl.randint(-3, 3, (50,)).numpy())
    assert a.dtype is dl.float32 and 0 <= a.numpy().min() and a.numpy().max() < 1
    assert c.dtype is dl.int64 and c.numpy().min() >= -3 and c.numpy().max() < 3
    assert dl.randint(5, (2, 2)).shape == (2, 2)
    assert dl.rand(2, dtype=dl.float16).dtype is dl.float16
    assert sorted(dl.randperm(6).tolist()) == list(range(6))
    assert abs(float(dl.randn(10000).numpy().mean())) < 0.05


def test_generator_objects_and_state():
    g = dl.Generator().manual_seed(7)
    state = g.get_state()
    assert state.dtype is dl.uint8
    first = dl.rand(5, generator=g).tolist()
    g.set_state(state)
    assert dl.rand(5, generator=g).tolist() == first
    dl.manual_seed(7)
    assert dl.rand(5).tolist() == first  # same seed, same stream
    assert dl.initial_seed() == 7
    saved = dl.get_rng_state()
    x = dl.randn(4).tolist()
    dl.set_rng_state(saved)
    assert dl.randn(4).tolist() == x
    with pytest.raises(RuntimeError, match="state tensor of 40 bytes"):
        g.set_state(dl.zeros(3, dtype=dl.uint8))


def test_random_errors_and_tags():
    with pytest.raises(RuntimeError, match="expected a floating point dtype"):
        dl.rand(2, dtype=dl.int64)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        dl.randint(3, 3, (2,))
    for name in ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like"):
        assert "random" in REGISTRY[name].tags
    for name in ("zeros", "ones", "full", "arange", "tensor", "zeros_like"):
        assert REGISTRY[name].is_pure


def test_random_meta_does_not_draw():
    """Meta rules must not advance the generator (the tracer runs them without kernels)."""
    dl.manual_seed(0)
    REGISTRY["rand"].meta(size=(3,), dtype=dl.float32, device=dl.device("cpu"), generator=dl.default_generator)
    first = dl.rand(3).tolist()
    dl.manual_seed(0)
    assert dl.rand(3).tolist() == first


def test_arange_float_count_like_torch():
    # ceil((end - start) / step) computed in double
    assert dl.arange(0, 0.3, 0.1).shape == (math.ceil(0.3 / 0.1),)


try:
    import cupy

    HAS_CUDA = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, or no usable device
    HAS_CUDA = False


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs CuPy and a CUDA device")
def test_cuda_factories():
    t = dl.tensor([[1, 2], [3, 4]], device="cuda")
    assert t.device == dl.device("cuda:0") and t.tolist() == [[1, 2], [3, 4]]
    assert dl.arange(5, device="cuda").cpu().tolist() == [0, 1, 2, 3, 4]
    assert dl.eye(2, device="cuda").cpu().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    dl.manual_seed(3)
    a = dl.randn(4, device="cuda").cpu().tolist()
    dl.manual_seed(3)
    assert dl.randn(4, device="cuda").cpu().tolist() == a
    assert "device='cuda:0'" in repr(t)
    assert dl.zeros(2).cuda().to("cpu").tolist() == [0.0, 0.0]
