"""The native backend's direct conv2d kernel (+ bias, relu, max_pool2d) vs eager (NOTE: [direct conv2d])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_compiled

F = dl.nn.functional
NAN, INF = float("nan"), float("inf")
NCHW, NHWC = dl.contiguous_format, dl.channels_last
EPS = {dl.float32: float(np.finfo(np.float32).eps), dl.float64: float(np.finfo(np.float64).eps)}


def epilogue_fn(stride, padding, dilation, relu: bool, pool: int):
    """conv2d, then optionally relu, then optionally max_pool2d(pool)."""
    def f(x, w, b):
        y = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation)
        y = y.relu() if relu else y
        return F.max_pool2d(y, pool) if pool > 1 else y
    return f


def assert_close_to_eager(actual, expected, bound):
    """Equal non-finite values where eager has them; elsewhere within ``bound``: the products summed in
    another order (NOTE: [direct conv2d]), each sum off by at most K * eps * (the sum of |products|)."""
    assert actual.dtype == expected.dtype and tuple(actual.shape) == tuple(expected.shape)
    assert actual.stride() == expected.stride()
    a, e, bound = actual.numpy(), expected.numpy(), bound.numpy()
    finite = np.isfinite(e)
    np.testing.assert_array_equal(a[~finite], e[~finite])
    assert np.all(np.abs(a[finite] - e[finite]) <= bound[finite]), np.max(np.abs(a[finite] - e[finite]) - bound[finite])


def error_bound(fn, x, w, b):
    """2 * K * eps times the epilogue of conv2d(|x|, |w|) + |b|: a bound on eager's error plus the kernel's."""
    k = w.shape[1] * w.shape[2] * w.shape[3]
    finite = lambda t: dl.where(dl.isfinite(t), t, dl.zeros_like(t)).abs()  # noqa: E731
    return fn(finite(x), finite(w), finite(b) if b is not None else None) * (2 * k * EPS[x.dtype]) + 1e-30


def run_compiled(fn, *args, **compile_kwargs):
    """``(compiled result, recording)``: checks a graph compiled without a fallback."""
    recording = Recording()
    before = dl.stats()
    actual = dl.compile(fn, backend=recording, **compile_kwargs)(*args)
    assert_compiled(before, dl.stats())
    return actual, recording


def kernel_lines(recording) -> list:
    """The ``native kernel`` comment line of each C kernel the graphs call."""
    return [line.strip() for code in recording.codes for line in code.splitlines() if "# native kernel dl_" in line]


def inputs(n, c, o, size, kernel, layout, dtype, seed=0):
    dl.manual_seed(seed)
    x = dl.randn(n, c, *size, dtype=dtype).contiguous(memory_format=layout)
    w = dl.randn(o, c, *kernel, dtype=dtype).contiguous(memory_format=layout)
    return x, w, dl.randn(o, dtype=dtype)


# (N, C, O, (H, W), (KH, KW), stride, padding, dilation, relu, pool, layout, dtype)
GRID = [
    (1, 3, 16, (17, 15), (3, 3), 1, 1, 1, True, 2, NCHW, dl.float32),  # small_cnn's first stage, odd sizes
    (2, 16, 32, (16, 16), (3, 3), 1, 1, 1, True, 2, NHWC, dl.float32),  # its second, channels_last
    (1, 1, 4, (5, 7), (1, 1), 1, 0, 1, False, 1, NCHW, dl.float32),  # one input channel, half a vector out
    (1, 2, 2, (6, 5), (3, 3), 1, 2, 1, True, 1, NHWC, dl.float64),
    (2, 5, 13, (11, 10), (5, 5), 2, 2, 1, True, 1, NHWC, dl.float32),  # 13 outputs: a vector and a partial one
    (3, 7, 9, (12, 13), (3, 3), 2, 0, 2, False, 3, NCHW, dl.float64),  # pooling without relu, window 3
    (1, 64, 64, (6, 6), (1, 1), 1, 0, 1, True, 2, NHWC, dl.float32),
    (2, 8, 24, (9, 9), (5, 5), 1, 2, 2, True, 2, NCHW, dl.float32),  # 3 vectors: a block of 2, then 1
    (1, 33, 40, (9, 8), (3, 3), 2, 1, 1, True, 3, NHWC, dl.float64),
    (1, 2, 8, (4, 3), (3, 3), 1, 1, 1, True, 2, NCHW, dl.float32),  # one pooled column: narrower than a tile
    (2, 4, 6, (10, 9), (3, 2), (2, 1), (1, 0), (1, 2), True, 2, NCHW, dl.float64),  # pairs differing per dim
    (1, 3, 20, (33, 31), (3, 3), 1, 1, 1, False, 1, NHWC, dl.float32),  # rows with a shifted last tile
]


@needs_compiler
@pytest.mark.parametrize("n, c, o, size, kernel, stride, padding, dilation, relu, pool, layout, dtype", GRID)
def test_direct_conv2d_with_its_epilogue_matches_eager(n, c, o, size, kernel, stride, padding, dilation, relu, pool,
                                                      layout, dtype):
    fn = epilogue_fn(stride, padding, dilation, relu, pool)
    x, w, b = inputs(n, c, o, size, kernel, layout, dtype)
    actual, recording = run_compiled(fn, x, w, b)
    assert_close_to_eager(actual, fn(x, w, b), error_bound(fn, x, w, b))
    names = ", ".join(["conv2d"] + ["relu"] * relu + ["max_pool2d"] * (pool > 1))
    assert [line.split(": ")[1] for line in kernel_lines(recording)] == [names]
    assert "gemm(" not in recording.codes[0]


@needs_compiler
@pytest.mark.parametrize("layout", [NCHW, NHWC])
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_nan_and_inf_propagate_as_in_eager(layout, dtype):
    fn = epilogue_fn(1, 1, 1, True, 2)
    x, w, b = inputs(2, 3, 16, (8, 9), (3, 3), layout, dtype, seed=4)
    x[0, 1, 2, 3] = NAN  # every window over it is NaN, relu and maximum keep it
    x[1, 0, 5, 5] = INF  # +-inf where the weights' signs agree, NaN where inf - inf
    x[1, 2, 0, 0] = -INF
    b[3] = -1e30  # relu's zeros, and the pooling of only zeros
    b[5], b[6] = INF, -INF  # NaN where a sum is inf of the other sign, in windows with infinite pixels
    actual, recording = run_compiled(fn, x, w, b)
    expected = fn(x, w, b)
    assert np.isnan(expected.numpy()).any() and np.isinf(expected.numpy()).any()
    assert_close_to_eager(actual, expected, error_bound(fn, x, w, b))
    assert kernel_lines(recording)[0].endswith("conv2d, relu, max_pool2d")


@needs_compiler
@pytest.mark.parametrize("layout", [NCHW, NHWC])
@pytest.mark.parametrize("size", [(8, 10), (7, 8)])
def test_a_conv2d_read_elsewhere_is_written_by_the_same_kernel(layout, size):
    # The pooled tiles cover every pixel of an even-sized result: one kernel writes both; an odd one
    # keeps the pooling in its own kernel.
    def f(x, w, b):
        y = F.conv2d(x, w, b, padding=1)
        return F.max_pool2d(y.relu(), 2), y * 2

    x, w, b = inputs(2, 5, 12, size, (3, 3), layout, dl.float32, seed=1)
    (pooled, kept), recording = run_compiled(f, x, w, b)
    expected_pooled, expected_kept = f(x, w, b)
    conv = lambda x, w, b: F.conv2d(x, w, b, padding=1)  # noqa: E731
    assert_close_to_eager(kept, expected_kept, error_bound(conv, x, w, b) * 2)
    assert_close_to_eager(pooled, expected_pooled, error_bound(lambda *a: F.max_pool2d(conv(*a), 2), x, w, b))
    lines = [line.split(": ")[1] for line in kernel_lines(recording)]
    fused = size[0] % 2 == 0 and size[1] % 2 == 0
    assert lines[0] == ("conv2d, relu, max_pool2d" if fused else "conv2d, relu")


@needs_compiler
def test_training_a_small_cnn_matches_eager():
    # Grad mode saves the conv2d's result for backward: the kernel writes it and the pooled one.
    class Net(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = dl.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = dl.nn.Linear(8 * 4 * 4, 3)

        def forward(self, x):
            return self.fc(F.max_pool2d(self.conv(x).relu(), 2).flatten(1))

    dl.manual_seed(2)
    model, x = Net(), dl.randn(2, 3, 8, 8)
    recording = Recording()
    compiled = dl.compile(model, backend=recording)
    grads = []
    before = dl.stats()
    for fn in (model, compiled):
        model.zero_grad()
        fn(x).square().sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    assert_compiled(before, dl.stats())
    for actual, expected in zip(*grads):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    assert "conv2d, relu, max_pool2d" in kernel_lines(recording)[0]


@needs_compiler
def test_sizes_at_run_time():
    def fn(x, w, b):  # literal sizes: with dynamic=True an int read from a closure is symbolic
        return F.max_pool2d(F.conv2d(x, w, b, padding=1).relu(), 2)

    recording = Recording()
    compiled = dl.compile(fn, backend=recording, dynamic=True)
    before = dl.stats()
    for size in (8, 11, 16):
        x, w, b = inputs(2, 3, 8, (size, size + 1), (3, 3), NCHW, dl.float32, seed=size)
        assert_close_to_eager(compiled(x, w, b), fn(x, w, b), error_bound(fn, x, w, b))
    assert_compiled(before, dl.stats())
    assert len(recording.codes) == 1 and kernel_lines(recording) == ["# native kernel dl_image0: conv2d, relu, max_pool2d"]


@needs_compiler
def test_other_convolutions_keep_their_kernels():
    # groups: the grouped kernel (test_native_conv_grouped.py); too few output channels for a vector: the
    # gather and eager's gemm, exact.
    x, w, b = inputs(1, 4, 6, (7, 7), (3, 3), NCHW, dl.float32)
    grouped = lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2).relu()  # noqa: E731
    actual, recording = run_compiled(grouped, x, w[:, :2].contiguous(), b)
    np.testing.assert_allclose(actual.numpy(), grouped(x, w[:, :2].contiguous(), b).numpy(), rtol=1e-5, atol=1e-5)
    assert "gemm(" not in recording.codes[0] and kernel_lines(recording)[0].endswith(": conv2d")
    few = epilogue_fn(1, 1, 1, True, 2)
    actual, recording = run_compiled(few, x, w[:3], b[:3])
    np.testing.assert_array_equal(actual.numpy(), few(x, w[:3], b[:3]).numpy())
    assert "gemm(" in recording.codes[0] and kernel_lines(recording)[1].endswith("relu, max_pool2d")


@needs_compiler
def test_a_batch_too_large_to_stage_keeps_the_gather_and_gemm(monkeypatch):
    from dynamo_lite.backends.native import conv_fusion
    fn = epilogue_fn(1, 1, 1, True, 2)
    x, w, b = inputs(2, 3, 8, (8, 8), (3, 3), NCHW, dl.float32)
    monkeypatch.setattr(conv_fusion, "MAX_STAGED_BYTES", 2 * 3 * 10 * 10 * 4)  # the weights no longer fit
    actual, recording = run_compiled(fn, x, w, b)
    np.testing.assert_array_equal(actual.numpy(), fn(x, w, b).numpy())
    assert "gemm(" in recording.codes[0] and kernel_lines(recording)[1].endswith("relu, max_pool2d")


@needs_compiler
def test_many_channel_weights_keep_the_gather_and_gemm():
    # 512 -> 512 channels (9 MiB of 3x3 weights) on 4 x 4: the direct kernel would reread them per pixel tile.
    fn = epilogue_fn(1, 1, 1, True, 1)
    x, w, b = inputs(1, 512, 512, (4, 4), (3, 3), NCHW, dl.float32)
    actual, recording = run_compiled(fn, x, w, b)
    np.testing.assert_array_equal(actual.numpy(), fn(x, w, b).numpy())
    assert "gemm(" in recording.codes[0] and kernel_lines(recording)[0].endswith("conv2d")  # relu: its own loop


@needs_compiler
def test_few_output_channels_over_a_large_image_run_the_direct_kernel():
    # 16 -> 3 channels, 9x9 taps on 72x72 (a style-transfer net's last conv): a 21 MiB im2col matrix.
    fn = epilogue_fn(1, 0, 1, False, 1)
    x, w, b = inputs(1, 16, 3, (72, 72), (9, 9), NCHW, dl.float32)
    actual, recording = run_compiled(fn, x, w, b)
    assert_close_to_eager(actual, fn(x, w, b), error_bound(fn, x, w, b))
    assert "gemm(" not in recording.codes[0] and kernel_lines(recording)[0].endswith(": conv2d")


@needs_compiler
def test_a_graph_with_an_inplace_op_runs_the_direct_conv2d_alone():
    # A mutation in the graph: nothing is computed at another node's step, the relu_ and pooling keep theirs.
    def f(x, w, b):
        y = F.conv2d(x, w, b, padding=1)
        y.relu_()
        return F.max_pool2d(y, 2)

    x, w, b = inputs(2, 3, 8, (8, 9), (3, 3), NHWC, dl.float32, seed=5)
    actual, recording = run_compiled(f, x, w, b)
    assert_close_to_eager(actual, f(x, w, b), error_bound(f, x, w, b))
    lines = [line.split(": ")[1] for line in kernel_lines(recording)]
    assert lines[0] == "conv2d" and "max_pool2d" in lines[-1]
