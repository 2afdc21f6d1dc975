"""The native backend's grouped and depthwise conv2d kernel vs eager (NOTE: [grouped conv2d])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler
from tests.backends.test_native_conv import assert_close_to_eager, kernel_lines, run_compiled
from tests.helpers import assert_compiled

F = dl.nn.functional
NAN, INF = float("nan"), float("inf")
NCHW, NHWC = dl.contiguous_format, dl.channels_last
EPS = {dl.float32: float(np.finfo(np.float32).eps), dl.float64: float(np.finfo(np.float64).eps)}


def conv_fn(stride, padding, dilation, groups):
    def f(x, w, b):
        return F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    return f


def grouped_inputs(n, c, o, groups, size, kernel, layout, dtype, bias=True, seed=0):
    dl.manual_seed(seed)
    x = dl.randn(n, c, *size, dtype=dtype).contiguous(memory_format=layout)
    w = dl.randn(o, c // groups, *kernel, dtype=dtype)
    return x, w, (dl.randn(o, dtype=dtype) if bias else None)


def error_bound(fn, x, w, b):
    """2 * K * eps times conv2d(|x|, |w|) + |b| (finite parts): eager's error plus the kernel's, K the products per sum."""
    k = w.shape[1] * w.shape[2] * w.shape[3]
    finite = lambda t: dl.where(dl.isfinite(t), t, dl.zeros_like(t)).abs()  # noqa: E731
    return fn(finite(x), finite(w), finite(b) if b is not None else None) * (2 * k * EPS[x.dtype]) + 1e-30


# (N, C, O, groups, (H, W), (KH, KW), stride, padding, dilation, layout, dtype, bias)
GRID = [
    (2, 8, 8, 8, (9, 7), (3, 3), 1, 1, 1, NCHW, dl.float32, True),  # depthwise, odd sizes
    (2, 8, 8, 8, (9, 7), (3, 3), 1, 1, 1, NHWC, dl.float32, True),
    (2, 12, 12, 12, (16, 16), (3, 3), 2, 1, 1, NCHW, dl.float32, False),  # MobileNet's strided depthwise
    (2, 12, 12, 12, (15, 17), (3, 3), 2, 1, 1, NHWC, dl.float64, False),
    (1, 6, 12, 6, (8, 9), (5, 5), 1, 2, 1, NCHW, dl.float64, True),  # depth multiplier 2
    (1, 6, 12, 6, (8, 9), (5, 5), 1, 2, 1, NHWC, dl.float32, True),
    (1, 6, 9, 3, (10, 11), (3, 2), (2, 1), (1, 0), (1, 2), NCHW, dl.float64, True),  # 2 inputs, 3 outputs per group
    (1, 6, 9, 3, (10, 11), (3, 2), (2, 1), (1, 0), (1, 2), NHWC, dl.float32, True),
    (3, 10, 20, 2, (6, 5), (3, 3), 1, 0, 2, NCHW, dl.float32, True),  # 5 inputs per group, dilation 2
    (3, 10, 20, 2, (6, 5), (3, 3), 1, 0, 2, NHWC, dl.float32, False),
    (1, 4, 4, 4, (1, 1), (1, 1), 1, 0, 1, NCHW, dl.float32, True),  # one pixel
    (2, 5, 5, 5, (2, 3), (3, 3), 1, 1, 1, NCHW, dl.float32, True),  # planes smaller than the kernel
    (1, 3, 3, 3, (40, 200), (9, 9), 1, 4, 1, NCHW, dl.float32, True),  # 9x9: taps in a loop; rows in bands
    (1, 16, 16, 16, (4, 4), (3, 3), 1, 1, 1, NHWC, dl.float64, True),
]


@needs_compiler
@pytest.mark.parametrize("n, c, o, groups, size, kernel, stride, padding, dilation, layout, dtype, bias", GRID)
def test_grouped_conv2d_matches_eager(n, c, o, groups, size, kernel, stride, padding, dilation, layout, dtype, bias):
    fn = conv_fn(stride, padding, dilation, groups)
    x, w, b = grouped_inputs(n, c, o, groups, size, kernel, layout, dtype, bias)
    actual, recording = run_compiled(fn, x, w, b)
    assert_close_to_eager(actual, fn(x, w, b), error_bound(fn, x, w, b))
    assert [line.split(": ")[1] for line in kernel_lines(recording)] == ["conv2d"]
    assert "conv2d_kernel" not in recording.codes[0]  # the registry kernel is not called


@needs_compiler
def test_a_depthwise_conv2d_of_a_view_reads_its_strides():
    # A transposed view (neither layout) as input: the kernel reads it through its strides.
    fn = conv_fn(1, 1, 1, 6)
    x, w, b = grouped_inputs(2, 6, 6, 6, (7, 9), (3, 3), NCHW, dl.float32)
    view = x.transpose(2, 3)
    actual, recording = run_compiled(fn, view, w, b)
    assert_close_to_eager(actual, fn(view, w, b), error_bound(fn, view, w, b))
    assert kernel_lines(recording)[0].endswith("conv2d")


@needs_compiler
@pytest.mark.parametrize("layout", [NCHW, NHWC])
def test_nan_and_inf_propagate_as_in_eager(layout):
    fn = conv_fn(1, 1, 1, 4)
    x, w, b = grouped_inputs(2, 4, 8, 4, (6, 7), (3, 3), layout, dl.float32, seed=3)
    x[0, 1, 2, 3] = NAN
    x[1, 0, 4, 4] = INF
    x[1, 2, 0, 0] = -INF
    w[5, 0, 0, 0] = INF  # a tap in the padding multiplies it by 0: NaN on the border, as in eager
    b[6] = -INF
    actual, _ = run_compiled(fn, x, w, b)
    expected = fn(x, w, b)
    assert np.isnan(expected.numpy()).any() and np.isinf(expected.numpy()).any()
    assert_close_to_eager(actual, expected, error_bound(fn, x, w, b))


@needs_compiler
def test_groups_of_many_input_channels_keep_the_registry_kernel():
    from dynamo_lite.backends.native import conv_grouped
    cg = conv_grouped.MAX_GROUP_INPUTS + 1
    fn = conv_fn(1, 1, 1, 2)
    x, w, b = grouped_inputs(1, 2 * cg, 4, 2, (5, 5), (3, 3), NCHW, dl.float32)
    actual, recording = run_compiled(fn, x, w, b)
    np.testing.assert_array_equal(actual.numpy(), fn(x, w, b).numpy())
    assert not any("conv2d" in line for line in kernel_lines(recording))


@needs_compiler
def test_training_a_depthwise_block_matches_eager():
    # The forward's grouped conv2d runs the kernel; the backward's gradients are eager's formulas.
    class Block(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.dw = dl.nn.Conv2d(8, 8, 3, 2, 1, groups=8)
            self.pw = dl.nn.Conv2d(8, 4, 1)

        def forward(self, x):
            return self.pw(F.relu6(self.dw(x))).mean((2, 3))

    dl.manual_seed(1)
    model, x = Block(), dl.randn(2, 8, 9, 9, requires_grad=True)
    recording = Recording()
    compiled = dl.compile(model, backend=recording)
    results = []
    before = dl.stats()
    for fn in (model, compiled):
        model.zero_grad()
        x.grad = None
        out = fn(x)
        out.square().sum().backward()
        results.append([out.detach().clone(), x.grad.clone()] + [p.grad.clone() for p in model.parameters()])
    assert_compiled(before, dl.stats())
    for actual, expected in zip(*reversed(results)):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    assert any(line.endswith(": conv2d") for line in kernel_lines(recording))


@needs_compiler
def test_sizes_at_run_time():
    def fn(x, w, b):
        return F.conv2d(x, w, b, padding=1, groups=4)

    recording = Recording()
    compiled = dl.compile(fn, backend=recording, dynamic=True)
    before = dl.stats()
    for size in (5, 8, 13):
        x, w, b = grouped_inputs(2, 4, 4, 4, (size, size + 2), (3, 3), NCHW, dl.float32, seed=size)
        assert_close_to_eager(compiled(x, w, b), fn(x, w, b), error_bound(fn, x, w, b))
    assert_compiled(before, dl.stats())
    assert len(recording.codes) == 1 and kernel_lines(recording)[0].endswith(": conv2d")
