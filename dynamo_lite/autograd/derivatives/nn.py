"""Derivatives of matmul-like, window (conv/pool), normalization, embedding and dropout ops."""
from __future__ import annotations

from .helpers import OPS, scatter_add, transpose_last
from .table import derivative


@derivative("matmul", "mm", "bmm", saves=("a", "b"))
def matmul_backward(grad, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return OPS["mul"](grad, b), OPS["mul"](grad, a)
    a2 = OPS["unsqueeze"](a, 0) if a.ndim == 1 else a
    b2 = OPS["unsqueeze"](b, -1) if b.ndim == 1 else b
    g = OPS["unsqueeze"](grad, -2) if a.ndim == 1 else grad
    g = OPS["unsqueeze"](g, -1) if b.ndim == 1 else g
    grad_a, grad_b = OPS["matmul"](g, transpose_last(b2)), OPS["matmul"](transpose_last(a2), g)
    # drop the dims a 1-D operand was given, before the engine sums away broadcast batch dims
    return (OPS["squeeze"](grad_a, -2) if a.ndim == 1 else grad_a), (OPS["squeeze"](grad_b, -1) if b.ndim == 1 else grad_b)


@derivative("addmm", saves=("mat1", "mat2"))
def addmm_backward(grad, input, mat1, mat2, beta=1, alpha=1):
    scaled = grad if alpha == 1 else OPS["mul"](grad, alpha)
    return (grad if beta == 1 else OPS["mul"](grad, beta),
            OPS["mm"](scaled, transpose_last(mat2)), OPS["mm"](transpose_last(mat1), scaled))


@derivative("linear", saves=("input", "weight"))
def linear_backward(grad, input, weight, bias=None):
    out_features, in_features = weight._sizes
    rows = OPS["view"](grad.reshape(-1), (-1, out_features)) if grad.ndim else grad.reshape(1, 1)
    grad_weight = OPS["mm"](transpose_last(rows), input.reshape(-1, in_features))
    return OPS["matmul"](grad, weight), grad_weight, grad


# -- windows ------------------------------------------------------------------------------------
@derivative("conv2d", saves=("input", "weight"))
def conv2d_backward(grad, input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    geometry = (stride, padding, dilation, groups)
    grad_input = OPS["conv2d_input_backward"](grad, weight, tuple(input._sizes), *geometry)
    grad_weight = OPS["conv2d_weight_backward"](grad, input, tuple(weight._sizes), *geometry)
    grad_bias = None if bias is None else OPS["sum"](grad, dim=(0, 2, 3) if grad.ndim == 4 else (1, 2))
    return grad_input, grad_weight, grad_bias


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
    _, indices = OPS["max_pool2d_with_indices"](OPS["detach"](input), kernel_size, stride, padding, dilation,
                                                ceil_mode)
    return _max_pool_grad(grad, input, indices)


@derivative("max_pool2d_with_indices", saves=("result",))
def max_pool2d_with_indices_backward(grads, input, kernel_size, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False,
                            result=None):
    return _max_pool_grad(grads[0], input, result[1])


@derivative("avg_pool2d")
def avg_pool2d_backward_backward(grad, input, kernel_size, stride, padding=(0, 0), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return OPS["avg_pool2d_backward"](grad, tuple(input._sizes), kernel_size, stride, padding, ceil_mode,
                                      count_include_pad, divisor_override)


@derivative("avg_pool2d_backward")
def avg_pool2d_backward_backward(grad, grad_output, input_size, kernel_size, stride, padding=(0, 0), ceil_mode=False,
                        count_include_pad=True, divisor_override=None):
    return OPS["avg_pool2d"](grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# -- normalization, dropout --------------------------------------------------------------------
@derivative("layer_norm", saves=("input", "weight"))
def layer_norm_backward(grad, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    centered = OPS["sub"](input, OPS["mean"](input, dim=dims, keepdim=True))
    variance = OPS["mean"](OPS["mul"](centered, centered), dim=dims, keepdim=True)
    rstd = OPS["rsqrt"](OPS["add"](variance, eps))
    normalized = OPS["mul"](centered, rstd)
    scaled = grad if weight is None else OPS["mul"](grad, weight)
    grad_input = OPS["mul"](rstd, OPS["sub"](
        OPS["sub"](scaled, OPS["mean"](scaled, dim=dims, keepdim=True)),
        OPS["mul"](normalized, OPS["mean"](OPS["mul"](scaled, normalized), dim=dims, keepdim=True)),
    ))
    grad_weight = None if weight is None else OPS["mul"](grad, normalized)
    return grad_input, None, grad_weight, grad


@derivative("dropout", "dropout_")
def dropout_backward(grad, input, p, training=True, generator=None):
    # The kept-element mask is not an output of the op, so it cannot be recovered here;
    # dl.dropout / F.dropout route inputs that require grad through an explicit mask instead.
    raise RuntimeError("the dropout op has no gradient of its own: call dl.nn.functional.dropout, which "
                       "multiplies by an explicit mask when its input requires grad")
