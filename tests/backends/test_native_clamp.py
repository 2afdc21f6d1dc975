"""clamp with scalar bounds (relu6, hardtanh-style clips) as a member of fused native kernels, bit for bit eager's."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_compiled

CASES = {
    "relu6": lambda x: dl.nn.functional.relu6(x * 2),
    "min only": lambda x: (x * 2).clamp(min=-1),
    "max only": lambda x: (x + 1).clamp(max=0.5),
    "both": lambda x: (x - 1).clamp(-1, 1),
    "integer bounds": lambda x: (x * 3).clamp(-2, 2),
    "min above max": lambda x: (x * 3).clamp(min=1.0, max=-1.0),
}


@needs_compiler
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_clamp_lowers_with_eagers_bits(name, dtype):
    fn = CASES[name]
    dl.manual_seed(0)
    x = dl.randn(1031, dtype=dtype) * 4
    x[3], x[4], x[5], x[6] = float("nan"), float("inf"), -0.0, -float("inf")
    recording = Recording()
    before = dl.stats()
    actual = dl.compile(fn, backend=recording)(x)
    assert_compiled(before, dl.stats())
    np.testing.assert_array_equal(actual.numpy(), fn(x).numpy())
    assert np.signbit(actual.numpy()).tolist() == np.signbit(fn(x).numpy()).tolist()
    kernels = [line for line in recording.codes[0].splitlines() if "native kernel" in line]
    assert len(kernels) == 1 and kernels[0].endswith(", clamp")


@needs_compiler
def test_a_tensor_bound_keeps_the_registry_kernel():
    fn = lambda x, lo: (x * 2).clamp(min=lo)  # noqa: E731
    x, lo = dl.randn(64), dl.tensor(0.25)
    recording = Recording()
    actual = dl.compile(fn, backend=recording)(x, lo)
    np.testing.assert_array_equal(actual.numpy(), fn(x, lo).numpy())
    assert not any("clamp" in line for line in recording.codes[0].splitlines() if "native kernel" in line)
