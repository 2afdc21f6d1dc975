"""The native backend's avg_pool2d kernel vs eager, bit for bit (NOTE: [native avg_pool2d])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import needs_compiler
from tests.backends.test_native_conv import kernel_lines, run_compiled

F = dl.nn.functional
NCHW, NHWC = dl.contiguous_format, dl.channels_last

# (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, layout, dtype)
CASES = [
    ((2, 3, 8, 8), 2, None, 0, False, True, None, NCHW, dl.float32),  # CLIP ResNet's anti-aliasing pool
    ((2, 3, 9, 7), 3, 2, 1, False, True, None, NCHW, dl.float32),
    ((2, 3, 9, 7), 3, 2, 1, True, False, None, NHWC, dl.float32),  # ceil mode windows past the edge
    ((1, 4, 7, 10), (3, 2), (2, 1), (1, 0), True, True, None, NCHW, dl.float64),
    ((1, 4, 7, 10), 3, 1, 1, False, False, 5, NCHW, dl.float32),  # divisor_override: a float32 division
    ((1, 2, 5, 5), 2, 2, 1, True, False, 3, NHWC, dl.float64),
]


@needs_compiler
@pytest.mark.parametrize("shape, kernel, stride, padding, ceil_mode, include_pad, divisor, layout, dtype", CASES)
def test_avg_pool2d_has_eagers_bits(shape, kernel, stride, padding, ceil_mode, include_pad, divisor, layout, dtype):
    dl.manual_seed(0)
    x = dl.randn(*shape, dtype=dtype).contiguous(memory_format=layout)
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, 0, 0] = -0.0

    def fn(x):
        return F.avg_pool2d(x * 3, kernel, stride, padding, ceil_mode, include_pad, divisor)

    actual, recording = run_compiled(fn, x)
    expected = fn(x)
    assert actual.stride() == expected.stride()
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    assert np.signbit(actual.numpy()).tolist() == np.signbit(expected.numpy()).tolist()
    assert any(line.endswith(": avg_pool2d") for line in kernel_lines(recording))


@needs_compiler
def test_an_integer_image_keeps_the_registry_kernel():
    x = dl.arange(32).view(1, 2, 4, 4)
    fn = lambda x: F.avg_pool2d(x, 2)  # noqa: E731
    actual, recording = run_compiled(fn, x)
    np.testing.assert_array_equal(actual.numpy(), fn(x).numpy())
    assert not any("avg_pool2d" in line for line in kernel_lines(recording))
