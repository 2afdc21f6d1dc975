"""The native backend's max-pool gradient kernels: one C pass per plane, eager's bits (NOTE: [native window grads])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler

F = dl.nn.functional
NAN, INF = float("nan"), float("inf")


def _input(layout, shape=(2, 3, 9, 8)):
    dl.manual_seed(0)
    x = dl.randn(*shape).round()  # few distinct values: ties in many windows
    x[0, 1, 2, 2] = x[0, 1, 2, 3] = NAN  # two NaN in a window: the last one is picked
    x[1, 0, :3, :3] = -INF  # a window of -inf (with padding: its first real pixel)
    x[1, 2, 4, 4] = -0.0
    return x.contiguous(memory_format=layout)


@needs_compiler
@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", [
    (2, 2, 0, 1, False), (3, 2, 1, 1, True), (3, 1, 1, 1, False), (2, 1, 1, 2, True)])
@pytest.mark.parametrize("layout", [dl.contiguous_format, dl.channels_last])
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool_gradient_kernel_has_eager_bits(kernel, stride, padding, dilation, ceil_mode, layout, return_indices):
    def pool(x):
        out = F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices=return_indices)
        return out[0] if return_indices else out

    x = _input(layout)
    grad = dl.randn(*pool(x).shape)
    grad[0, 0, 0, 0] = -0.0  # 0 + (-0.0) is +0.0 in eager's scatter
    results = []
    recording = Recording()
    for fn in (pool, dl.compile(pool, backend=recording, fullgraph=True)):
        leaf = x.detach().requires_grad_()
        fn(leaf).backward(grad)
        results.append(leaf.grad.numpy().tobytes())
    assert results[0] == results[1]
    # with indices, the backward scatters at them (as eager); without, it finds the maxima again
    kernel = "max_pool2d_with_indices_backward" if return_indices else "max_pool2d_backward"
    assert any(f"native kernel dl_image0: {kernel}" in code for code in recording.codes), recording.codes


@needs_compiler
@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", [(2, 2, 0, 1, False), (3, 1, 1, 1, True)])
@pytest.mark.parametrize("layout", [dl.contiguous_format, dl.channels_last])
def test_scatter_at_saved_indices_has_eager_bits(kernel, stride, padding, dilation, ceil_mode, layout):
    geometry = ((kernel,) * 2, (stride,) * 2, (padding,) * 2, (dilation,) * 2, ceil_mode)

    def scatter(grad, x, indices):
        return dl.ops.max_pool2d_with_indices_backward(grad, x, *geometry, indices)

    x = _input(layout)
    _, indices = dl.ops.max_pool2d_with_indices(x, *geometry)
    grad = dl.randn(*indices.shape).contiguous(memory_format=layout)
    grad[0, 0, 0, 0] = -0.0
    recording = Recording()
    actual = dl.compile(scatter, backend=recording, fullgraph=True)(grad, x, indices)
    assert actual.numpy().tobytes() == scatter(grad, x, indices).numpy().tobytes()
    assert recording.count("image") == 1, recording.codes


@needs_compiler
def test_train_step_backward_runs_the_pool_gradient_in_c():
    class Net(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = dl.nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            return F.max_pool2d(self.conv(x).relu(), 2).sum()

    dl.manual_seed(1)
    eager_net, x = Net(), dl.randn(2, 3, 8, 8)
    compiled_net = Net()
    compiled_net.load_state_dict(eager_net.state_dict())
    recording = Recording()
    eager_net(x).backward()
    dl.compile(compiled_net, backend=recording)(x).backward()
    for (name, p), q in zip(eager_net.named_parameters(), compiled_net.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy(), err_msg=name)
    assert any(": max_pool2d_backward" in code for code in recording.codes)


@needs_compiler
@pytest.mark.parametrize("stride, padding, dilation", [(1, 1, 1), (2, 1, 2), (3, 0, 1)])
@pytest.mark.parametrize("layout", [dl.contiguous_format, dl.channels_last])
def test_conv2d_gradients_are_products_around_c_col2im_and_im2col_with_eager_bits(stride, padding, dilation, layout):
    def conv(x, w):
        return F.conv2d(x, w, stride=stride, padding=padding, dilation=dilation)

    dl.manual_seed(2)
    x, w = dl.randn(2, 3, 11, 9).contiguous(memory_format=layout), dl.randn(4, 3, 3, 2)
    grad = dl.randn(*conv(x, w).shape)
    results, recording = [], Recording()
    for fn in (conv, dl.compile(conv, backend=recording, fullgraph=True)):
        leaf, weight = x.detach().requires_grad_(), w.detach().requires_grad_()
        fn(leaf, weight).backward(grad)
        results.append((leaf.grad.numpy().tobytes(), weight.grad.numpy().tobytes()))
    assert results[0] == results[1]
    assert any(": col2im" in code and ": im2col" in code for code in recording.codes), recording.codes


@needs_compiler
def test_unfold_is_the_c_im2col():
    def unfold(x):
        return F.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))

    dl.manual_seed(4)
    x = dl.randn(2, 3, 7, 6).contiguous(memory_format=dl.channels_last)
    recording = Recording()
    assert dl.compile(unfold, backend=recording)(x).numpy().tobytes() == unfold(x).numpy().tobytes()
    assert recording.count("image") == 1


@needs_compiler
def test_fold_is_the_c_col2im():
    def fold(cols):
        return F.fold(cols, (7, 6), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))

    dl.manual_seed(3)
    cols = dl.randn(2, 3 * 6, 4 * 6)
    recording = Recording()
    assert dl.compile(fold, backend=recording)(cols).numpy().tobytes() == fold(cols).numpy().tobytes()
    assert recording.count("image") == 1
