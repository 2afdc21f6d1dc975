"""dl.autocast against torch's CPU autocast: the output dtype of each op in ``autocast_cases.py``,
recorded with PyTorch 2.13 (``fixtures/record_autocast.py``), and values equal to the same
computation with the casts written out by hand."""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import dynamo_lite as dl

from . import autocast_cases as C

DTYPES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "autocast_dtypes.json").read_text())


@pytest.mark.parametrize("key", sorted(DTYPES))
def test_output_dtype_matches_torch(key):
    low, variant, name = key.split("/")
    with dl.autocast("cpu", dtype=getattr(dl, low)):
        values = C.inputs(dl)
        out = C.CASES[name](dl, values if variant == "float32" else C.lowered(dl, values))
    assert out.dtype == getattr(dl, DTYPES[key]), key


def test_lowered_matmul_equals_explicit_casts():
    a, b = dl.randn(8, 16), dl.randn(16, 4)
    with dl.autocast("cpu"):
        result = a @ b
    np.testing.assert_array_equal(result.float().numpy(), (a.bfloat16() @ b.bfloat16()).float().numpy())


def test_float32_loss_equals_explicit_casts():
    a, b = dl.randn(4, 5), dl.randn(5, 3)
    target = dl.tensor([0, 2, 1, 1])
    with dl.autocast("cpu"):
        logits = a @ b
        loss = dl.nn.functional.cross_entropy(logits, target)
        module_loss = dl.nn.CrossEntropyLoss()(logits, target)
    expected = dl.nn.functional.cross_entropy((a.bfloat16() @ b.bfloat16()).float(), target)
    assert loss.dtype == module_loss.dtype == dl.float32
    np.testing.assert_array_equal(loss.numpy(), expected.numpy())
    np.testing.assert_array_equal(module_loss.numpy(), expected.numpy())


def test_gradients_reach_float32_parameters_in_float32():
    layer = dl.nn.Linear(5, 3)
    x = dl.randn(4, 5)
    with dl.autocast("cpu"):
        out = layer(x)
        loss = dl.nn.functional.mse_loss(out, dl.zeros(4, 3))
    loss.backward()
    assert out.dtype == dl.bfloat16 and loss.dtype == dl.float32
    assert layer.weight.grad.dtype == dl.float32 and layer.bias.grad.dtype == dl.float32
    w, bias = layer.weight.detach().bfloat16().requires_grad_(), layer.bias.detach().bfloat16().requires_grad_()
    reference = dl.nn.functional.mse_loss(dl.nn.functional.linear(x.bfloat16(), w, bias).float(), dl.zeros(4, 3))
    reference.backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), w.grad.float().numpy(), rtol=1e-6)


def test_state_queries_nesting_and_disabling():
    assert not dl.is_autocast_enabled("cpu") and dl.get_autocast_dtype("cpu") == dl.bfloat16
    assert dl.get_autocast_dtype("cuda") == dl.float16
    with dl.autocast("cpu", dtype=dl.float16):
        assert dl.is_autocast_enabled("cpu") and not dl.is_autocast_enabled()  # no argument: "cuda", as torch
        assert dl.get_autocast_dtype("cpu") == dl.float16
        with dl.autocast("cpu", enabled=False):
            assert not dl.is_autocast_enabled("cpu")
            assert (dl.ones(2, 2) @ dl.ones(2, 2)).dtype == dl.float32
        with dl.autocast("cpu"):  # no dtype: the enclosing block's (torch 2.13 prints float16 here too)
            assert dl.get_autocast_dtype("cpu") == dl.float16
        assert (dl.ones(2, 2) @ dl.ones(2, 2)).dtype == dl.float16
    assert not dl.is_autocast_enabled("cpu") and dl.get_autocast_dtype("cpu") == dl.bfloat16
    assert dl.is_autocast_available("cpu") and dl.amp.autocast is dl.autocast


def test_decorator_and_exception_restore_the_state():
    @dl.autocast("cpu")
    def matmul(a, b):
        return a @ b

    assert matmul(dl.ones(2, 2), dl.ones(2, 2)).dtype == dl.bfloat16
    with pytest.raises(ZeroDivisionError):
        with dl.autocast("cpu"):
            1 / 0
    assert not dl.is_autocast_enabled("cpu")


def test_bad_arguments_as_torch():
    """Messages and warnings recorded from torch 2.13 (their text names torch, as torch's does)."""
    with pytest.raises(ValueError, match=r"^Expected `device_type` of type `str`, got: `<class 'int'>`$"):
        dl.autocast(1)
    with pytest.raises(RuntimeError, match=r"^Expected one of cpu, cuda, .* device type at start of device string: xyz$"):
        dl.autocast("xyz")
    with pytest.raises(RuntimeError, match="device string: xyz"):
        dl.get_autocast_dtype("xyz")
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported. Disabling autocast."):
        with dl.autocast("cpu", dtype=dl.float32):
            assert not dl.is_autocast_enabled("cpu")


def test_cuda_autocast_without_a_device_disables_itself_with_torchs_warning():
    if dl.cuda.is_available():
        pytest.skip("a CUDA device is present: cuda autocast is enabled there")
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        with dl.autocast("cuda"):
            assert not dl.is_autocast_enabled("cuda")


def test_device_spellings_warn_as_torch():
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated. Please use "
                                           r"`torch.amp.autocast\('cpu', args...\)` instead."):
        context = dl.cpu.amp.autocast()
    with context:
        assert dl.is_autocast_enabled("cpu") and dl.get_autocast_dtype("cpu") == dl.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(dl.cuda.amp.autocast(), dl.autocast)
        assert dl.cpu.amp.GradScaler().is_enabled()
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is deprecated"):
        dl.cuda.amp.GradScaler(enabled=False)
