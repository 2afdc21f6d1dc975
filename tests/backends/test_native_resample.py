"""The native backend's upsample_nearest / upsample_bilinear2d kernels vs eager, bit for bit (NOTE: [native upsampling])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler
from tests.backends.test_native_conv import kernel_lines, run_compiled
from tests.helpers import assert_compiled

F = dl.nn.functional
NCHW, NHWC = dl.contiguous_format, dl.channels_last

# (input shape, interpolate keywords, layout, dtype, kernel)
CASES = [
    ((1, 3, 8, 9), {"scale_factor": 2, "mode": "nearest"}, NCHW, dl.float32, "upsample_nearest"),
    ((2, 3, 7, 5), {"size": (10, 13), "mode": "nearest"}, NCHW, dl.float64, "upsample_nearest"),
    ((2, 3, 7, 5), {"scale_factor": 1.7, "mode": "nearest"}, NHWC, dl.float32, "upsample_nearest"),
    ((2, 4, 6, 6), {"size": (3, 4), "mode": "nearest"}, NCHW, dl.float32, "upsample_nearest"),  # a downsample
    ((2, 3, 7), {"scale_factor": 3, "mode": "nearest"}, None, dl.float32, "upsample_nearest"),  # 1-D
    ((2, 3, 7, 5), {"size": (10, 13), "mode": "bilinear", "align_corners": False}, NCHW, dl.float32,
     "upsample_bilinear2d"),
    ((2, 3, 7, 5), {"scale_factor": 2.3, "mode": "bilinear", "align_corners": False}, NCHW, dl.float64,
     "upsample_bilinear2d"),
    ((2, 3, 7, 5), {"size": (10, 13), "mode": "bilinear", "align_corners": True}, NHWC, dl.float32,
     "upsample_bilinear2d"),
    ((1, 2, 1, 1), {"size": (4, 3), "mode": "bilinear", "align_corners": True}, NCHW, dl.float32,
     "upsample_bilinear2d"),
]


@needs_compiler
@pytest.mark.parametrize("shape, keywords, layout, dtype, kernel", CASES)
def test_upsampling_has_eagers_bits(shape, keywords, layout, dtype, kernel):
    dl.manual_seed(0)
    x = dl.randn(*shape, dtype=dtype)
    x = x.contiguous(memory_format=layout) if layout is not None else x
    x[0, 0, 0] = float("nan")  # copied / spread by the weights as in eager

    def fn(x):
        return F.interpolate(x * 2, **keywords)

    actual, recording = run_compiled(fn, x)
    expected = fn(x)
    assert actual.stride() == expected.stride()
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    assert any(line.endswith(f": {kernel}") for line in kernel_lines(recording))


@needs_compiler
def test_sizes_at_run_time_get_their_own_tables():
    def fn(x):
        return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)

    recording = Recording()
    compiled = dl.compile(fn, backend=recording, dynamic=True)
    before = dl.stats()
    for size in (3, 5, 8):
        x = dl.randn(1, 2, size, size + 1)
        np.testing.assert_array_equal(compiled(x).numpy(), fn(x).numpy())
    assert_compiled(before, dl.stats())
    assert any(line.endswith(": upsample_bilinear2d") for line in kernel_lines(recording))


@needs_compiler
def test_an_integer_image_keeps_the_registry_kernel():
    x = dl.arange(24).view(1, 2, 3, 4)
    fn = lambda x: F.interpolate(x, scale_factor=2, mode="nearest")  # noqa: E731
    actual, recording = run_compiled(fn, x)
    np.testing.assert_array_equal(actual.numpy(), fn(x).numpy())
    assert not any("upsample" in line for line in kernel_lines(recording))
