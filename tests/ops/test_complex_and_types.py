"""Complex dtypes and ops, dtype aliases/promotion/limits, type queries, Tensor.type/new, dl.device as a context.

Values and messages marked "torch 2.13" were recorded by making the same call in PyTorch
2.13.0 (CPU wheel) in a private venv.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array
from tests.helpers import assert_same

RNG = np.random.default_rng(5)


def c64(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


# -- complex --------------------------------------------------------------------------------
def test_complex_arithmetic_matches_numpy():
    a, b = c64(3, 4), c64(4, 2)
    x, y = from_array(a), from_array(b)
    np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=1e-5)
    np.testing.assert_allclose((x * x + 1).numpy(), a * a + 1, rtol=1e-6)
    np.testing.assert_allclose((x * 2j).numpy(), a * 2j, rtol=1e-6)
    np.testing.assert_allclose(x.abs().numpy(), np.abs(a), rtol=1e-6)
    assert x.abs().dtype is dl.float32 and x.sum().dtype is dl.complex64
    np.testing.assert_allclose(x.mean().item(), a.mean(), rtol=1e-5)
    np.testing.assert_allclose(dl.angle(x).numpy(), np.angle(a), rtol=1e-6)


def test_complex_promotion_like_torch():  # torch 2.13
    assert dl.promote_types(dl.complex64, dl.float64) is dl.complex128
    assert dl.promote_types(dl.complex64, dl.int64) is dl.complex64
    assert (dl.ones(2, dtype=dl.complex64) * dl.ones(2)).dtype is dl.complex64
    assert (dl.ones(2, dtype=dl.float64) * 1j).dtype is dl.complex128
    assert (dl.ones(2) * 1j).dtype is dl.complex64
    assert dl.tensor([1 + 2j]).dtype is dl.complex64
    assert dl.promote_types(dl.int32, dl.float16) is dl.float16 and dl.promote_types(dl.uint8, dl.int8) is dl.int16


def test_view_as_real_and_complex_share_storage():
    x = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = dl.view_as_complex(x)
    assert c.tolist() == [1 + 2j, 3 + 4j] and c.dtype is dl.complex64
    assert dl.view_as_real(c).data_ptr() == x.data_ptr()
    c.imag.mul_(10)  # writes through the views into x
    assert x.tolist() == [[1.0, 20.0], [3.0, 40.0]]
    assert c.real.tolist() == [1.0, 3.0] and c.real.dtype is dl.float32
    strided = dl.ones(3, dtype=dl.complex64)[::2]
    assert dl.view_as_real(strided).stride() == (4, 1)  # torch 2.13
    assert dl.view_as_complex(dl.ones(3, 2)[1:]).storage_offset() == 1
    plain = dl.ones(2)
    assert plain.real is plain


def test_complex_errors_like_torch():  # torch 2.13
    cases = [
        (lambda: dl.view_as_complex(dl.ones(3)), "Tensor must have a last dimension of size 2"),
        (lambda: dl.view_as_complex(dl.ones(3, 2, dtype=dl.int64)),
         "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: Long"),
        (lambda: dl.view_as_complex(dl.ones(2, 3)[:, :2]),
         "Tensor must have a stride divisible by 2 for all but last dimension"),
        (lambda: dl.view_as_complex(dl.ones(4, 2).t().contiguous().t()), "Tensor must have a last dimension with stride 1"),
        (lambda: dl.view_as_complex(dl.ones(7)[1:].view(3, 2)), "Tensor must have a storage_offset divisible by 2"),
        (lambda: dl.view_as_real(dl.ones(2)), "view_as_real is only supported for complex tensors"),
        (lambda: dl.ones(2).imag, "imag is not implemented for tensors with non-complex dtypes."),
        (lambda: dl.polar(dl.ones(2), dl.ones(2, dtype=dl.float64)),
         "Expected object of scalar type Float but got scalar type Double for second argument"),
        (lambda: dl.polar(dl.ones(2, dtype=dl.int64), dl.ones(2, dtype=dl.int64)),
         "Expected both inputs to be Half, Float or Double tensors but got Long and Long"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == message


def test_polar_complex_angle():  # torch 2.13
    got = dl.polar(dl.tensor([2.0, 1.0]), dl.tensor([0.0, math.pi / 2])).numpy()
    np.testing.assert_allclose(got, [2, 1j], atol=1e-7)
    assert dl.complex(dl.ones(2), dl.zeros(2)).tolist() == [1 + 0j, 1 + 0j]
    angles = dl.angle(dl.tensor([-1.0, 0.0, 1.0, float("nan")])).tolist()
    assert angles[:3] == [pytest.approx(math.pi), 0.0, 0.0] and math.isnan(angles[3])
    assert dl.angle(dl.tensor([-1, 2])).dtype is dl.float32


def _rotary(xq, freqs):
    # The LLaMA rotary embedding: pairs of features as complex numbers, rotated by freqs_cis.
    freqs_cis = dl.polar(dl.ones_like(freqs), freqs)
    xq_ = dl.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    rotated = dl.view_as_real(xq_ * freqs_cis.view(1, xq.shape[1], 1, -1)).flatten(3)
    return rotated.type_as(xq) + xq_.abs().sum() + dl.angle(xq_).mean()


def test_rotary_embedding_compiles_into_one_graph_and_matches_numpy(backend):
    xq, freqs = dl.randn(2, 5, 3, 8), dl.outer(dl.arange(5.0), dl.rand(4))
    report = dl.explain(_rotary)(xq, freqs)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    assert_same(_rotary, xq, freqs, backend=backend)
    q = xq.numpy().reshape(2, 5, 3, 4, 2)
    qc = q[..., 0] + 1j * q[..., 1]
    f = np.exp(1j * freqs.numpy())[None, :, None, :]
    rotated = qc * f
    expected = np.stack([rotated.real, rotated.imag], -1).reshape(2, 5, 3, 8) + np.abs(qc).sum() + np.angle(qc).mean()
    np.testing.assert_allclose(_rotary(xq, freqs).numpy(), expected, rtol=1e-4, atol=1e-4)


# -- dtypes, limits and type queries -------------------------------------------------------------
def test_dtype_aliases():
    assert (dl.float, dl.double, dl.half) == (dl.float32, dl.float64, dl.float16)
    assert (dl.long, dl.int, dl.short) == (dl.int64, dl.int32, dl.int16)
    assert (dl.cfloat, dl.cdouble) == (dl.complex64, dl.complex128)
    assert dl.tensor(range(3)).tolist() == [0, 1, 2] and dl.tensor(range(3)).dtype is dl.int64
    assert dl.tensor([range(2), range(2)]).shape == (2, 2)


def test_finfo_iinfo_like_torch():  # torch 2.13
    f = dl.finfo(dl.float32)
    assert (f.eps, f.max, f.tiny, f.resolution, f.bits) == (
        float(np.finfo(np.float32).eps), float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny), 1e-06, 32)
    assert dl.finfo(dl.float16).max == 65504.0 and dl.finfo(dl.float16).resolution == 0.001
    assert dl.finfo().dtype == "float32" and dl.finfo(dl.complex128).eps == float(np.finfo(np.float64).eps)
    assert (dl.iinfo(dl.int8).min, dl.iinfo(dl.int8).max, dl.iinfo(dl.uint8).bits) == (-128, 127, 8)
    with pytest.raises(TypeError, match="torch.finfo\\(\\) requires a floating point input type"):
        dl.finfo(dl.int32)
    with pytest.raises(TypeError, match="torch.iinfo\\(\\) requires an integer input type"):
        dl.iinfo(dl.float32)


def test_type_queries():  # torch 2.13
    x = dl.ones(2, 3, dtype=dl.int32)
    assert dl.is_tensor(x) and not dl.is_tensor([1]) and dl.numel(x) == 6
    assert not dl.is_floating_point(x) and dl.is_floating_point(dl.ones(1))
    assert dl.is_complex(dl.ones(1, dtype=dl.cfloat)) and not x.is_complex()
    assert x.ndimension() == 2
    with pytest.raises(TypeError, match="numel\\(\\): argument 'input' \\(position 1\\) must be Tensor, not int"):
        dl.numel(3)
    with pytest.raises(TypeError, match="is_floating_point\\(\\): argument 'input' \\(position 1\\) must be Tensor"):
        dl.is_floating_point(3)


def test_tensor_type_and_new():  # torch 2.13
    x = dl.ones(2, dtype=dl.int32)
    assert dl.ones(1).type() == "dynamo_lite.FloatTensor" and x.type() == "dynamo_lite.IntTensor"
    assert dl.ones(1, dtype=dl.bool).type() == "dynamo_lite.BoolTensor"
    assert x.type(dl.float64).dtype is dl.float64 and x.type("torch.LongTensor").dtype is dl.int64
    with pytest.raises(ValueError, match="invalid type: 'torch.NoTensor'"):
        x.type("torch.NoTensor")
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype is dl.int32
    assert x.new([2, 3]).tolist() == [2, 3] and x.new((2, 3)).tolist() == [2, 3]
    assert x.new(dl.Size([2, 3])).shape == (2, 3) and x.new().shape == (0,)


# -- the default device ------------------------------------------------------------------------
def test_device_context_sets_the_default_device_of_factories():
    assert dl.get_default_device() == dl.device("cpu")
    with dl.device("cpu") as dev:
        assert dl.get_default_device() is dev and dl.zeros(2).device == dev
        with dl.device("cpu:0") as inner:
            assert dl.get_default_device() is inner
        assert dl.get_default_device() is dev
    assert dl.get_default_device() == dl.device("cpu")
    dl.set_default_device("cpu")
    dl.set_default_device(None)
    assert dl.get_default_device() == dl.device("cpu")


def test_compiled_factories_are_guarded_on_the_default_device():
    def f(x):
        return x + dl.ones(3)

    compiled = dl.compile(f, backend="eager")
    compiled(dl.zeros(3))
    with dl.device("cpu:0"):  # a different default device: the entry must not be reused blindly
        assert compiled(dl.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    stats = dl.stats()
    assert stats.recompiles == 1 and "device" in str(stats.guard_failures[-1])


def test_inplace_abs_of_a_complex_tensor_raises_like_torch(backend):  # torch 2.13
    def absolute_in_place(t):
        t.abs_()
        return t

    x = dl.tensor([1 + 2j, -3j])
    with pytest.raises(RuntimeError, match=r"^In-place abs is not supported for complex tensors\.$"):
        x.abs_()
    with pytest.raises(RuntimeError, match=r"^In-place abs is not supported for complex tensors\.$"):
        dl.compile(absolute_in_place, backend=backend)(x)
    assert x.tolist() == [1 + 2j, -3j]  # untouched
    assert_same(absolute_in_place, dl.tensor([-1.5, 2.0]), backend=backend, copy_args=True)
