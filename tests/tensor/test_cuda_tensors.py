"""CUDA tensors: eager ops through the same registry (CuPy kernels), transfers and DLPack
zero-copy on a GPU (marked ``cuda``); device errors everywhere, with fake CUDA storage."""
import sys

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.ops.core import meta_rules
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.storage import Storage
from dynamo_lite.tensor.tensor import Tensor


def fake_cuda(values, dtype=dl.float32):
    """A tensor that says cuda:0 but holds host memory: enough for device checks, which
    run before any kernel, on machines without a GPU."""
    data = np.asarray(values, dtype=dtype.numpy)
    storage = Storage(data.view(np.uint8).copy(), device="cuda")
    return Tensor._make(storage, data.shape, tuple(s // data.itemsize for s in data.strides), 0, dtype)


# -- errors, everywhere ----------------------------------------------------------------------
def test_asking_for_cuda_without_cupy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    with pytest.raises(RuntimeError, match=r"install dynamo_lite with the 'cuda' extra"):
        dl.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match=r"'cuda' extra"):
        dl.ones(2).to("cuda")


def test_asking_for_cuda_without_a_device_says_so():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a CUDA device is present")
    except Exception:
        pass
    with pytest.raises(RuntimeError, match="CUDA tensors need a CUDA device, but none is usable"):
        dl.zeros(2, device="cuda")


@pytest.mark.parametrize("order", ["cpu_first", "cuda_first"])
def test_mixing_cpu_and_cuda_tensors_names_both_devices(order):
    cpu, cuda = dl.ones(3), fake_cuda([1.0, 2.0, 3.0])
    a, b = (cpu, cuda) if order == "cpu_first" else (cuda, cpu)
    message = r"^Expected all tensors to be on the same device, but found at least two devices, (cuda:0 and cpu|cpu and cuda:0)!$"
    with pytest.raises(RuntimeError, match=message):
        a + b
    with pytest.raises(RuntimeError, match=message):
        dl.matmul(a.view(1, 3), b.view(3, 1))
    with pytest.raises(RuntimeError, match=message):
        dl.where(cpu > 0, a, b)


def test_meta_rules_reject_mixed_devices():
    cpu, cuda = TensorMeta((2,), dl.float32), TensorMeta((2,), dl.float32, device="cuda")
    with pytest.raises(RuntimeError, match="found at least two devices, cpu and cuda:0"):
        meta_rules.pointwise_meta(cpu, cuda)


def test_compiled_code_raises_the_eager_device_error():
    def fn(a, b):
        return a * 2 + b

    cpu, cuda = dl.ones(3), fake_cuda([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError) as eager:
        fn(cpu, cuda)
    with pytest.raises(RuntimeError) as compiled:
        dl.compile(fn, backend="eager")(cpu, cuda)
    assert str(compiled.value) == str(eager.value)


def test_cuda_tensor_metadata_without_a_gpu():
    t = fake_cuda([[1.0, 2.0], [3.0, 4.0]])
    assert t.device == dl.device("cuda:0") and t.is_cuda
    assert t.to("cuda") is t and t.to("cuda:0") is t  # nothing to do: no copy
    assert t.__dlpack_device__() == (2, 0)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        t.numpy()


# -- on a GPU ----------------------------------------------------------------------------
cuda = pytest.mark.cuda


@cuda
def test_transfers_round_trip():
    host = dl.arange(12, dtype=dl.float32).view(3, 4)
    device = host.to("cuda")
    assert device.device == dl.device("cuda:0") and device.stride() == host.stride()
    assert device.cuda() is device
    np.testing.assert_array_equal(device.cpu().numpy(), host.numpy())
    transposed = host.t().to("cuda")  # strides kept (preserve_format)
    assert transposed.stride() == host.t().stride()
    np.testing.assert_array_equal(transposed.cpu().numpy(), host.t().numpy())


@cuda
def test_dlpack_is_zero_copy_both_ways():
    import cupy

    array = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    tensor = dl.from_dlpack(array)
    assert tensor.device == dl.device("cuda:0") and tensor.data_ptr() == array.data.ptr
    array[0, 0] = 42
    assert tensor[0, 0].item() == 42
    back = cupy.from_dlpack(tensor.t())
    assert back.data.ptr == tensor.data_ptr() and back.shape == (3, 2)
    back[1, 0] = -1
    assert tensor[0, 1].item() == -1


@cuda
def test_eager_ops_on_cuda_match_cpu():
    dl.manual_seed(0)
    x, w, b = dl.randn(4, 8), dl.randn(5, 8), dl.randn(5)
    image, kernel = dl.randn(2, 3, 8, 8), dl.randn(4, 3, 3, 3)
    programs = [
        lambda x, w, b: (x * 2 + 1).relu(),
        lambda x, w, b: dl.nn.functional.linear(x, w, b),
        lambda x, w, b: x @ w.t(),
        lambda x, w, b: (x.sum(1), x.mean(0), x.amax(1), x.argmax(1), x.var(0)),
        lambda x, w, b: (dl.softmax(x, 1), dl.layer_norm(x, (8,)), dl.nn.functional.gelu(x)),
        lambda x, w, b: (x[1:, ::2], x.t().contiguous(), dl.cat([x, x], 0), x > 0, dl.where(x > 0, x, b[0])),
    ]
    for program in programs:
        expected = program(x, w, b)
        actual = program(x.to("cuda"), w.to("cuda"), b.to("cuda"))
        for a, e in zip(actual if isinstance(actual, tuple) else (actual,),
                        expected if isinstance(expected, tuple) else (expected,)):
            assert a.device.type == "cuda" and (a.dtype, a.shape, a.stride()) == (e.dtype, e.shape, e.stride())
            np.testing.assert_allclose(a.cpu().numpy(), e.numpy(), rtol=1e-5, atol=1e-5)
    conv = dl.nn.functional.conv2d(image.to("cuda"), kernel.to("cuda"), padding=1)
    np.testing.assert_allclose(conv.cpu().numpy(), dl.nn.functional.conv2d(image, kernel, padding=1).numpy(),
                               rtol=1e-4, atol=1e-4)


@cuda
def test_factories_and_printing_on_cuda():
    z = dl.zeros(2, 3, device="cuda")
    assert z.device.type == "cuda" and z.sum().item() == 0
    assert dl.arange(5, device="cuda").cpu().tolist() == [0, 1, 2, 3, 4]
    assert "device='cuda:0'" in repr(dl.ones(2, device="cuda"))
