"""The adjoints of conv2d and the pools as ops (what their derivative formulas call).

Each is linear in its gradient argument, so its own derivative is again conv2d,
avg_pool2d, the other adjoint or a gather at the max-pool indices (see
dynamo_lite/autograd/derivatives/windows.py).
"""
from __future__ import annotations

from ..core import meta_rules as mr
from .conv import _padded, _window_counts, _windows
from .max_pool import max_pool2d_backward_kernel, max_pool2d_with_indices_backward_kernel
from ..core.registry import register_op


def _batched(*arrays):
    """(N, C, H, W) views of possibly unbatched (C, H, W) arrays, and whether they were."""
    unbatched = arrays[0].ndim == 3
    return [a[None] if unbatched else a for a in arrays], unbatched


def _grad_input_meta(grad, weight, input_size, stride, padding, dilation, groups):
    return mr.make_meta(tuple(input_size), grad._dtype, None, grad._device)


def _grad_weight_meta(grad, input, weight_size, stride, padding, dilation, groups):
    return mr.make_meta(tuple(weight_size), grad._dtype, None, grad._device)


def conv2d_input_backward_kernel(xp, grad, weight, input_size, stride, padding, dilation, groups, *, out):
    (grad,), unbatched = _batched(grad)
    n, o, oh, ow = grad.shape
    _, cg, kh, kw = weight.shape
    g = groups
    h, w = input_size[-2:]
    # cols[n, g, (c, i, j), (y, x)]: what each window element of the padded input receives, as
    # one product per group (a matmul, not an einsum: same sums, no generic contraction)
    wmat = weight.reshape(g, o // g, cg * kh * kw).transpose(0, 2, 1)
    cols = xp.matmul(wmat, grad.reshape(n, g, o // g, oh * ow)).reshape(n, g * cg, kh, kw, oh, ow)
    padded = xp.zeros((n, g * cg, h + 2 * padding[0], w + 2 * padding[1]), dtype=grad.dtype)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dilation[0], j * dilation[1]
            padded[:, :, top:top + stride[0] * (oh - 1) + 1:stride[0], left:left + stride[1] * (ow - 1) + 1:stride[1]] \
                += cols[:, :, i, j]
    result = padded[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w]
    out[...] = result[0] if unbatched else result
    return out


def conv2d_weight_backward_kernel(xp, grad, input, weight_size, stride, padding, dilation, groups, *, out):
    (grad, input), _ = _batched(grad, input)
    n, o, oh, ow = grad.shape
    _, cg, kh, kw = weight_size
    g = groups
    source = _padded(xp, input, (padding[0],) * 2, (padding[1],) * 2, 0, False)
    win = _windows(xp, source, (kh, kw), stride, dilation, (oh, ow))
    # one product per group over every (image, output pixel): (Og, N*OH*OW) @ (N*OH*OW, Cg*KH*KW)
    cols = win.reshape(n, g, cg, oh, ow, kh, kw).transpose(1, 2, 5, 6, 0, 3, 4).reshape(g, cg * kh * kw, n * oh * ow)
    rows = grad.reshape(n, g, o // g, oh * ow).transpose(1, 2, 0, 3).reshape(g, o // g, n * oh * ow)
    product = xp.matmul(rows, cols.transpose(0, 2, 1))
    out[...] = product.reshape(weight_size)
    return out


def _avg_pool_grad_meta(grad, input_size, kernel_size, stride, padding=(0, 0), ceil_mode=False,
                        count_include_pad=True, divisor_override=None):
    return mr.make_meta(tuple(input_size), grad._dtype, None, grad._device)


def avg_pool2d_backward_kernel(xp, grad, input_size, kernel_size, stride, padding=(0, 0), ceil_mode=False,
                               count_include_pad=True, divisor_override=None, *, out):
    (grad,), unbatched = _batched(grad)
    n, c, oh, ow = grad.shape
    h, w = input_size[-2:]
    if divisor_override is not None:
        divisor = divisor_override
    else:
        dh = _window_counts(xp, h, oh, kernel_size[0], stride[0], padding[0], count_include_pad)
        dw = _window_counts(xp, w, ow, kernel_size[1], stride[1], padding[1], count_include_pad)
        divisor = dh[:, None] * dw[None, :]
    share = grad / divisor
    # windows may run past the padded border with ceil_mode: leave room for them
    height = max(h + 2 * padding[0], stride[0] * (oh - 1) + kernel_size[0])
    width = max(w + 2 * padding[1], stride[1] * (ow - 1) + kernel_size[1])
    padded = xp.zeros((n, c, height, width), dtype=grad.dtype)
    for i in range(kernel_size[0]):
        for j in range(kernel_size[1]):
            padded[:, :, i:i + stride[0] * (oh - 1) + 1:stride[0], j:j + stride[1] * (ow - 1) + 1:stride[1]] += share
    result = padded[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w]
    out[...] = result[0] if unbatched else result
    return out


def _max_pool_grad_meta(grad, input, kernel_size, stride, padding, dilation, ceil_mode, indices=None):
    return mr.make_meta(tuple(input._sizes), grad._dtype, None, grad._device)


WINDOW_GRAD_OPS = {
    "conv2d_input_backward": (_grad_input_meta, conv2d_input_backward_kernel),
    "conv2d_weight_backward": (_grad_weight_meta, conv2d_weight_backward_kernel),
    "avg_pool2d_backward": (_avg_pool_grad_meta, avg_pool2d_backward_kernel),
    "max_pool2d_with_indices_backward": (_max_pool_grad_meta, max_pool2d_with_indices_backward_kernel),
    # max_pool2d's own: finds each window's max again (a backend computes it in the same pass)
    "max_pool2d_backward": (_max_pool_grad_meta, max_pool2d_backward_kernel),
}
OPS = {name: register_op(name, meta=meta, kernel=kernel, tags=("window",))
       for name, (meta, kernel) in WINDOW_GRAD_OPS.items()}
