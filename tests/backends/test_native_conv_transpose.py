"""The native backend's conv_transpose2d kernel (eager's gemm from C, then col2im) vs eager, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler
from tests.backends.test_native_conv import kernel_lines, run_compiled
from tests.helpers import assert_compiled

F = dl.nn.functional
NCHW, NHWC = dl.contiguous_format, dl.channels_last


def transposed_fn(stride, padding, output_padding, groups, dilation):
    def f(x, w, b):
        return F.conv_transpose2d(x, w, b, stride=stride, padding=padding, output_padding=output_padding,
                                  groups=groups, dilation=dilation)
    return f


# (N, C, Og, groups, (H, W), (KH, KW), stride, padding, output_padding, dilation, layout, dtype, bias)
GRID = [
    (1, 32, 16, 1, (8, 8), (2, 2), 2, 0, 0, 1, NCHW, dl.float32, True),  # U-Net's up-convolution
    (2, 6, 4, 2, (5, 7), (3, 3), 2, 1, 1, 1, NCHW, dl.float32, True),  # overlapping taps, output padding
    (2, 6, 4, 3, (5, 7), (3, 2), (2, 1), (1, 0), (1, 0), (1, 2), NCHW, dl.float64, True),
    (2, 6, 4, 1, (5, 7), (3, 3), 1, 1, 0, 1, NHWC, dl.float32, False),  # channels_last input: a dense copy
    (1, 4, 3, 1, (9, 2), (4, 4), 3, 2, 2, 1, NCHW, dl.float32, True),  # padding cropping whole taps
]


@needs_compiler
@pytest.mark.parametrize("n, c, og, groups, size, kernel, stride, padding, output_padding, dilation, layout, dtype, bias",
                         GRID)
def test_conv_transpose2d_has_eagers_bits(n, c, og, groups, size, kernel, stride, padding, output_padding, dilation,
                                          layout, dtype, bias):
    dl.manual_seed(0)
    x = dl.randn(n, c, *size, dtype=dtype).contiguous(memory_format=layout)
    w = dl.randn(c, og, *kernel, dtype=dtype)
    b = dl.randn(og * groups, dtype=dtype) if bias else None
    fn = transposed_fn(stride, padding, output_padding, groups, dilation)
    actual, recording = run_compiled(fn, x, w, b)
    expected = fn(x, w, b)
    assert actual.stride() == expected.stride()
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    assert kernel_lines(recording)[0].endswith(": conv_transpose2d")


@needs_compiler
def test_a_view_input_and_nan_match_eager():
    dl.manual_seed(1)
    x = dl.randn(2, 4, 6, 5).transpose(2, 3)
    x[0, 1, 2, 3] = float("nan")
    x[1, 0, 0, 0] = float("inf")
    w, b = dl.randn(4, 3, 3, 3), dl.randn(3)
    fn = transposed_fn(2, 1, 0, 1, 1)
    actual, recording = run_compiled(fn, x, w, b)
    np.testing.assert_array_equal(actual.numpy(), fn(x, w, b).numpy())
    assert kernel_lines(recording)[0].endswith(": conv_transpose2d")


@needs_compiler
def test_a_single_input_channel_keeps_the_registry_kernel():
    # A product with an inner dimension of 1: NumPy does not call gemm, so neither does the kernel.
    x, w = dl.randn(1, 1, 4, 4), dl.randn(1, 3, 2, 2)
    fn = transposed_fn(2, 0, 0, 1, 1)
    actual, recording = run_compiled(fn, x, w, None)
    np.testing.assert_array_equal(actual.numpy(), fn(x, w, None).numpy())
    assert not any("conv_transpose2d" in line for line in kernel_lines(recording))


@needs_compiler
def test_training_an_up_block_matches_eager():
    class Up(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = dl.nn.ConvTranspose2d(8, 4, 2, stride=2)
            self.conv = dl.nn.Conv2d(8, 4, 3, padding=1)

        def forward(self, x, skip):
            return self.conv(dl.cat([skip, self.up(x)], 1)).relu()

    dl.manual_seed(2)
    model, x, skip = Up(), dl.randn(2, 8, 4, 4, requires_grad=True), dl.randn(2, 4, 8, 8)
    recording = Recording()
    compiled = dl.compile(model, backend=recording)
    results = []
    before = dl.stats()
    for fn in (model, compiled):
        model.zero_grad()
        x.grad = None
        out = fn(x, skip)
        out.square().sum().backward()
        results.append([out.detach().clone(), x.grad.clone()] + [p.grad.clone() for p in model.parameters()])
    assert_compiled(before, dl.stats())
    for actual, expected in zip(*reversed(results)):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    assert any(line.endswith("conv_transpose2d") for line in kernel_lines(recording))
