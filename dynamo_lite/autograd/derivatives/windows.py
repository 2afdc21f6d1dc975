"""Derivatives of sliding-window ops: conv2d/conv_transpose2d, pooling, upsampling, im2col/col2im."""
from __future__ import annotations

from .helpers import OPS, is_value, scatter_add, transpose_last
from .table import derivative


@derivative("conv2d", saves=("input", "weight"), only_for={"input": "weight", "weight": "input"})
def conv2d_backward(grad, input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    geometry = (stride, padding, dilation, groups)
    grad_input = grad_weight = None
    if is_value(weight):
        grad_input = _conv2d_input_grad(grad, weight, input, *geometry)
    if is_value(input):
        grad_weight = _conv2d_weight_grad(grad, input, weight, *geometry)
    grad_bias = None if bias is None else OPS["sum"](grad, dim=(0, 2, 3) if grad.ndim == 4 else (1, 2))
    return grad_input, grad_weight, grad_bias


def _conv2d_input_grad(grad, weight, input, stride, padding, dilation, groups):
    """conv2d's input gradient; without groups, ``col2im(weight^T @ grad)``: the columns each
    window receives, added back into the image (what conv2d_input_backward computes, as two
    ops a backend can lower: the product stays BLAS, col2im becomes one C loop)."""
    if groups != 1 or len(input._sizes) != 4:
        return OPS["conv2d_input_backward"](grad, weight, tuple(input._sizes), stride, padding, dilation, groups)
    n, o, oh, ow = grad._sizes
    kernel = tuple(weight._sizes[2:])
    columns = OPS["matmul"](OPS["transpose"](weight.reshape((o, -1)), 0, 1), grad.reshape((n, o, oh * ow)))
    return OPS["col2im"](columns, tuple(input._sizes[2:]), kernel, dilation, padding, stride)


def _conv2d_weight_grad(grad, input, weight, stride, padding, dilation, groups):
    """conv2d's weight gradient; without groups, the sum over images of ``grad @ im2col(input)^T``
    (the windows as columns: one gather a backend can lower, products in BLAS)."""
    if groups != 1 or len(input._sizes) != 4:
        return OPS["conv2d_weight_backward"](grad, input, tuple(weight._sizes), stride, padding, dilation, groups)
    n, o, oh, ow = grad._sizes
    columns = OPS["im2col"](input, tuple(weight._sizes[2:]), dilation, padding, stride)
    per_image = OPS["matmul"](grad.reshape((n, o, oh * ow)), OPS["transpose"](columns, 1, 2))
    return OPS["sum"](per_image, dim=(0,)).reshape(tuple(weight._sizes))


@derivative("conv2d_input_backward", saves=("grad_output", "weight"))
def conv2d_input_backward_backward(grad, grad_output, weight, input_size, stride, padding, dilation, groups):
    return (OPS["conv2d"](grad, weight, None, stride, padding, dilation, groups),
            OPS["conv2d_weight_backward"](grad_output, grad, tuple(weight._sizes), stride, padding, dilation, groups))


@derivative("conv2d_weight_backward", saves=("grad_output", "input"))
def conv2d_weight_backward_backward(grad, grad_output, input, weight_size, stride, padding, dilation, groups):
    return (OPS["conv2d"](input, grad, None, stride, padding, dilation, groups),
            OPS["conv2d_input_backward"](grad_output, grad, tuple(input._sizes), stride, padding, dilation, groups))


def _max_pool_grad(grad, input, indices):
    planes = input._sizes[:-2]
    flat = input._sizes[-2] * input._sizes[-1]
    spread = scatter_add(planes + (flat,), -1, indices.reshape(planes + (-1,)), grad.reshape(planes + (-1,)), grad)
    return spread.reshape(tuple(input._sizes))


@derivative("max_pool2d", saves=("input",))
def max_pool2d_backward(grad, input, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    return OPS["max_pool2d_backward"](grad, input, kernel_size, stride, padding, dilation, ceil_mode)


@derivative("max_pool2d_backward", saves=("input",))
def max_pool2d_backward_backward(grad, grad_output, input, kernel_size, stride, padding, dilation, ceil_mode):
    _, indices = OPS["max_pool2d_with_indices"](OPS["detach"](input), kernel_size, stride, padding, dilation, ceil_mode)
    return _gather_at(grad, indices), None, None, None, None, None, None


@derivative("max_pool2d_with_indices", saves=("input", "result"))
def max_pool2d_with_indices_backward(grads, input, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False,
                                     result=None):
    geometry = (kernel_size, stride, padding, dilation, ceil_mode)
    return OPS["max_pool2d_with_indices_backward"](grads[0], input, *geometry, result[1])


@derivative("max_pool2d_with_indices_backward", saves=("indices",))
def max_pool2d_with_indices_backward_backward(grad, grad_output, input, kernel_size, stride, padding, dilation,
                                              ceil_mode, indices):
    return _gather_at(grad, indices), None, None, None, None, None, None, None


def _gather_at(grad, indices):
    """The max-pool backward's adjoint: it copied each output's gradient to its chosen pixel, this reads them back."""
    planes = tuple(indices._sizes[:-2])
    picked = OPS["gather"](grad.reshape(planes + (-1,)), -1, indices.reshape(planes + (-1,)))
    return picked.reshape(tuple(indices._sizes))


@derivative("avg_pool2d")
def avg_pool2d_backward(grad, input, kernel_size, stride, padding=(0, 0), ceil_mode=False, count_include_pad=True,
                        divisor_override=None):
    return OPS["avg_pool2d_backward"](grad, tuple(input._sizes), kernel_size, stride, padding, ceil_mode,
                                      count_include_pad, divisor_override)


@derivative("avg_pool2d_backward")
def avg_pool2d_backward_backward(grad, grad_output, input_size, kernel_size, stride, padding=(0, 0), ceil_mode=False,
                                 count_include_pad=True, divisor_override=None):
    return OPS["avg_pool2d"](grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@derivative("conv_transpose2d", saves=("input", "weight"))
def conv_transpose2d_backward(grad, input, weight, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                              groups=1, dilation=(1, 1)):
    # conv_transpose2d is conv2d's input adjoint, so its adjoints are conv2d and conv2d's weight adjoint
    grad_input = OPS["conv2d"](grad, weight, None, stride, padding, dilation, groups)
    grad_weight = OPS["conv2d_weight_backward"](input, grad, tuple(weight._sizes), stride, padding, dilation, groups)
    grad_bias = None if bias is None else OPS["sum"](grad, dim=(0, 2, 3) if grad.ndim == 4 else (1, 2))
    return grad_input, grad_weight, grad_bias


@derivative("im2col")
def im2col_backward(grad, input, kernel_size, dilation, padding, stride):
    return OPS["col2im"](grad, tuple(input._sizes[-2:]), kernel_size, dilation, padding, stride)


@derivative("col2im")
def col2im_backward(grad, input, output_size, kernel_size, dilation, padding, stride):
    return OPS["im2col"](grad, kernel_size, dilation, padding, stride)


@derivative("adaptive_max_pool2d", saves=("result",))
def adaptive_max_pool2d_backward(grads, input, output_size, result=None):
    return _max_pool_grad(grads[0], input, result[1])


def _axis_matrix(forward, input, axis: int, out_size: int):
    """The (in, out) matrix of a separable linear op along one spatial axis: the op applied to a basis."""
    n = input._sizes[axis]
    spatial = len(input._sizes) - 2
    shape = [1, n] + [1] * spatial
    shape[2 + (axis - len(input._sizes)) % spatial] = n
    eye = OPS["eye"](n=n, m=n, dtype=input._dtype, device=input._device)
    basis = OPS["view"](eye, tuple(shape))
    sizes = [1] * spatial
    sizes[(axis - len(input._sizes)) % spatial] = out_size
    return OPS["view"](forward(basis, tuple(sizes), (axis - len(input._sizes)) % spatial), (n, out_size))


def _separable_vjp(grad, input, forward):
    """The gradient of a linear op that acts on each spatial axis separately (pooling, resampling)."""
    ndim = len(input._sizes)
    for axis in range(2, ndim):
        matrix = _axis_matrix(forward, input, axis - ndim, grad._sizes[axis])
        moved = OPS["transpose"](grad, axis, -1)
        grad = OPS["transpose"](OPS["matmul"](moved, transpose_last(matrix)), axis, -1)
    return grad


@derivative("adaptive_avg_pool2d")
def adaptive_avg_pool2d_backward(grad, input, output_size):
    return _separable_vjp(grad, input, lambda basis, sizes, _: OPS["adaptive_avg_pool2d"](basis, sizes))


def _axis_scales(scales, axis):
    return None if scales is None else tuple(s if i == axis else None for i, s in enumerate(scales))


@derivative("upsample_nearest")
def upsample_nearest_backward(grad, input, output_size, scales=None):
    return _separable_vjp(grad, input, lambda basis, sizes, axis: OPS["upsample_nearest"](
        basis, sizes, _axis_scales(scales, axis)))


@derivative("upsample_bilinear2d")
def upsample_bilinear2d_backward(grad, input, output_size, align_corners, scales=None):
    return _separable_vjp(grad, input, lambda basis, sizes, axis: OPS["upsample_bilinear2d"](
        basis, sizes, align_corners, _axis_scales(scales, axis)))
