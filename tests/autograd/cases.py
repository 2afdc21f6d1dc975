"""One or more gradcheck cases per differentiable registry op: ``op -> [(fn, args)]``.

Every case calls public API that dispatches the op with an argument that requires
grad; float64 inputs, small shapes (gradcheck's finite differences are per element).
"""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn.functional as F

_RNG = np.random.default_rng(1234)


def T(*shape, low=None, grad=True):
    """A float64 tensor of normal values (or uniform in ``[low, low+1)``) that requires grad."""
    values = _RNG.standard_normal(shape) if low is None else _RNG.random(shape) + low
    t = dl.from_numpy(np.asarray(values, dtype=np.float64).copy())
    return t.requires_grad_(grad)


def distinct(*shape):
    """Well-separated values: max/min/sort-like ops are differentiable there."""
    values = _RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.37 + 0.1
    return dl.from_numpy(values.astype(np.float64)).requires_grad_()


def idx(values):
    return dl.tensor(values, dtype=dl.int64)


def inplace(method, *args, **kwargs):
    """``x.clone().<method>(*args)``: an in-place op on a non-leaf (allowed, unlike on a leaf)."""
    return lambda x, *rest: getattr(x.clone(), method)(*(rest or args), **kwargs)


_POOLED = distinct(1, 2, 4, 4).detach()
_POOLED_INDICES = F.max_pool2d(_POOLED, 2, 1, return_indices=True)[1]
_DISJOINT_INDICES = F.max_pool2d(_POOLED, 2, 2, 1, ceil_mode=True, return_indices=True)[1]
_INF = dl.tensor([float("inf"), float("-inf"), float("nan")], dtype=dl.float64)
# A case whose second derivative goes through cumprod's formula, which divides by the input
# (exact only for non-zero inputs): gradchecked, not gradgradchecked.
FIRST_ORDER = {"gradgrad": False}

MASK = dl.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

CASES = {
    "clone": [(lambda x: x.clone(), [T(3, 4)])],
    "_to_copy": [(lambda x: x.to(dl.float64, copy=True), [T(3)]),
                 (lambda x: x.to(memory_format=dl.channels_last), [T(1, 2, 3, 2)])],
    "copy_": [(lambda x, y: x.clone().copy_(y), [T(3, 4), T(4)])],
    "fill_": [(lambda x: x.clone().fill_(2.0) * x, [T(3)]), (lambda x, v: x.clone().fill_(v), [T(3), T()])],
    "zero_": [(lambda x: x.clone().zero_() + x, [T(3)])],
    "view": [(lambda x: x.view(4, 3), [T(3, 4)]), (lambda x: x.t().reshape(12), [T(3, 4)])],
    "transpose": [(lambda x: x.transpose(0, 2), [T(2, 3, 4)])],
    "permute": [(lambda x: x.permute(2, 0, 1), [T(2, 3, 4)])],
    "expand": [(lambda x: x.expand(2, 3, 4), [T(3, 1)])],
    "squeeze": [(lambda x: x.squeeze(1), [T(3, 1, 2)])],
    "unsqueeze": [(lambda x: x.unsqueeze(-1), [T(3, 2)])],
    "slice": [(lambda x: dl.ops.views.slice_dim(x, 1, 1, 4, 2), [T(3, 5)])],
    "narrow": [(lambda x: x.narrow(1, 1, 2), [T(3, 4)])],
    "select": [(lambda x: x.select(0, 1), [T(3, 4)])],
    "as_strided": [(lambda x: x.as_strided((2, 2), (1, 2), 1), [T(6)]),
                   (lambda x: x.as_strided((3, 2), (0, 1)), [T(4)])],
    "unfold": [(lambda x: x.unfold(1, 3, 2), [T(2, 7)])],
    "alias": [(lambda x: x.T, [T(3)])],
    "index_basic": [(lambda x: x[1, ..., None, ::2], [T(3, 4, 5)])],
    "index": [(lambda x: x[idx([0, 2, 0])], [T(3, 4)]), (lambda x: x[:, idx([[1, 1], [3, 0]])], [T(3, 4)]),
              (lambda x: x[MASK], [T(3, 4)])],
    "index_put_": [(lambda x, v: x.clone().index_put_((idx([0, 2]),), v), [T(3, 4), T(2, 4)]),
                   (lambda x, v: x.clone().index_put_((idx([0, 0]),), v, accumulate=True), [T(3, 4), T(4)]),
                   (lambda x, v: _setitem(x, v), [T(3, 4), T(2)])],
    "add": [(lambda a, b: dl.add(a, b, alpha=2), [T(3, 4), T(4)]), (lambda a: a + 1.5, [T(3)])],
    "add_": [(lambda a, b: a.clone().add_(b, alpha=-3), [T(3, 4), T(3, 1)])],
    "sub": [(lambda a, b: dl.sub(a, b, alpha=0.5), [T(3, 1), T(4)]), (lambda a: 1 - a, [T(3)])],
    "sub_": [(lambda a, b: a.clone().sub_(b), [T(3, 4), T(4)])],
    "mul": [(lambda a, b: a * b, [T(3, 4), T(3, 1)]), (lambda a: a * 3.0, [T(2)])],
    "mul_": [(lambda a, b: a.clone().mul_(b), [T(3, 4), T(4)]), (lambda a: (a * 1).mul_(a), [T(3)])],
    "div": [(lambda a, b: a / b, [T(3, 4), T(4, low=1)]), (lambda a: 2 / a, [T(3, low=1)]),
            (lambda a, b: dl.div(a, b, rounding_mode="floor") + a, [T(3), T(3, low=1)])],
    "div_": [(lambda a, b: a.clone().div_(b), [T(3, 4), T(4, low=1)])],
    "remainder": [(lambda a, b: a % b, [T(3, 4, low=0.3), T(4, low=1.1)]), (lambda a: a % 0.7, [T(3, low=0.05)])],
    "remainder_": [(lambda a, b: a.clone().remainder_(b), [T(3, low=0.3), T(3, low=1.1)])],
    "pow": [(lambda a, b: a ** b, [T(3, 4, low=0.5), T(4)]), (lambda a: a ** 3, [T(3)]),
            (lambda b: 2.5 ** b, [T(3)])],
    "pow_": [(lambda a: a.clone().pow_(2), [T(3)])],
    "minimum": [(lambda a, b: dl.minimum(a, b), [T(3, 4), T(4)])],
    "maximum": [(lambda a, b: dl.maximum(a, b), [T(3, 4), T(4)])],
    "where": [(lambda a, b: dl.where(MASK, a, b), [T(3, 4), T(4)])],
    "clamp": [(lambda a: a.clamp(-0.5, 0.5), [T(3, 4)]), (lambda a, lo: a.clamp(min=lo), [T(3, 4), T(4)]),
              (lambda a, hi: a.clamp(max=hi), [T(3, 4), T(4)])],
    "clamp_": [(lambda a: a.clone().clamp_(min=0.1), [T(3, 4)])],
    "masked_fill": [(lambda a: a.masked_fill(MASK, 2.0), [T(3, 4)]),
                    (lambda a, v: a.masked_fill(MASK, v), [T(3, 4), T()])],
    "masked_fill_": [(lambda a: a.clone().masked_fill_(MASK, -1.0), [T(3, 4)])],
    "gelu": [(lambda a: F.gelu(a), [T(3, 4)]), (lambda a: F.gelu(a, approximate="tanh"), [T(3, 4)])],
    "silu": [(lambda a: F.silu(a), [T(3, 4)])],
    "sum": [(lambda a: a.sum(), [T(3, 4)]), (lambda a: a.sum(dim=(0, 2), keepdim=True), [T(2, 3, 4)]),
            (lambda a: a.sum(-1), [T(3, 4)])],
    "mean": [(lambda a: a.mean(), [T(3, 4)]), (lambda a: a.mean(dim=1), [T(2, 3, 4)])],
    "prod": [(lambda a: a.prod(), [T(2, 3)]), (lambda a: a.prod(dim=1, keepdim=True), [T(3, 4)]),
             (lambda a: (a * dl.tensor([1.0, 0.0, 1.0], dtype=dl.float64)).prod(), [T(3)], FIRST_ORDER)],
    "amax": [(lambda a: a.amax(dim=1), [distinct(3, 4)]), (lambda a: a.amax(), [distinct(3, 4)])],
    "amin": [(lambda a: a.amin(dim=(0, 1), keepdim=True), [distinct(3, 4, 2)])],
    "max": [(lambda a: a.max(), [distinct(3, 4)])],
    "min": [(lambda a: a.min(), [distinct(3, 4)])],
    "max_dim": [(lambda a: a.max(dim=1)[0], [distinct(3, 4)]),
                (lambda a: a.max(dim=0, keepdim=True).values, [distinct(3, 4)])],
    "min_dim": [(lambda a: a.min(dim=-1)[0], [distinct(3, 4)])],
    "var": [(lambda a: a.var(), [T(3, 4)]), (lambda a: a.var(dim=1, correction=0, keepdim=True), [T(3, 4)])],
    "std": [(lambda a: a.std(dim=0), [T(3, 4)]), (lambda a: a.std(), [T(5)])],
    "var_mean": [(lambda a: dl.var_mean(a, dim=1), [T(3, 4)])],
    "softmax": [(lambda a: a.softmax(-1), [T(3, 4)]), (lambda a: a.softmax(0), [T(3, 4)])],
    "log_softmax": [(lambda a: a.log_softmax(1), [T(3, 4)])],
    "logsumexp": [(lambda a: a.logsumexp(1), [T(3, 4)]), (lambda a: a.logsumexp(0, keepdim=True), [T(3, 4)])],
    "cumsum": [(lambda a: a.cumsum(1), [T(3, 4)])],
    "cumprod": [(lambda a: a.cumprod(0), [T(3, 4, low=0.5)])],
    "matmul": [(lambda a, b: a @ b, [T(2, 3, 4), T(4, 2)]), (lambda a, b: a @ b, [T(4), T(4, 3)]),
               (lambda a, b: a @ b, [T(2, 4), T(4)]), (lambda a, b: a @ b, [T(4), T(4)]),
               (lambda a, b: a @ b, [T(2, 1, 3, 4), T(3, 4, 2)])],
    "mm": [(lambda a, b: dl.mm(a, b), [T(2, 3), T(3, 4)])],
    "bmm": [(lambda a, b: dl.bmm(a, b), [T(2, 2, 3), T(2, 3, 2)])],
    "addmm": [(lambda c, a, b: dl.addmm(c, a, b, beta=0.5, alpha=2.0), [T(4), T(2, 3), T(3, 4)])],
    "linear": [(lambda x, w, b: F.linear(x, w, b), [T(2, 3, 4), T(5, 4), T(5)]),
               (lambda x, w: F.linear(x, w), [T(4), T(2, 4)])],
    "cat": [(lambda a, b: dl.cat([a, b], 1), [T(2, 3), T(2, 2)]), (lambda a, b: dl.cat([a, b]), [T(1, 3), T(2, 3)])],
    "stack": [(lambda a, b: dl.stack([a, b], 1), [T(2, 3), T(2, 3)])],
    "flip": [(lambda a: a.flip(0, 1), [T(2, 3)])],
    "tril": [(lambda a: a.tril(), [T(3, 3)])],
    "triu": [(lambda a: a.triu(1), [T(3, 4)])],
    "gather": [(lambda a: a.gather(1, idx([[0, 0, 2], [1, 3, 3]])), [T(2, 4)])],
    "index_select": [(lambda a: a.index_select(1, idx([2, 0, 2])), [T(2, 4)])],
    "repeat": [(lambda a: a.repeat(2, 1, 3), [T(2, 3)])],
    "constant_pad_nd": [(lambda a: F.pad(a, (1, 2, 0, 1), value=0.5), [T(2, 3)]),
                        (lambda a: F.pad(a, (-1, 1)), [T(2, 4)])],
    "conv2d": [(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [T(1, 2, 5, 5), T(3, 2, 3, 3), T(3)]),
               (lambda x, w: F.conv2d(x, w, groups=2, dilation=2), [T(1, 4, 6, 6), T(2, 2, 2, 2)]),
               (lambda x, w: F.conv2d(x, w), [T(2, 4, 4), T(1, 2, 3, 3)])],
    "max_pool2d": [(lambda x: F.max_pool2d(x, 2), [distinct(1, 2, 4, 4)]),
                   (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), [distinct(1, 1, 5, 5)])],
    "max_pool2d_with_indices": [(lambda x: F.max_pool2d(x, 2, return_indices=True)[0], [distinct(1, 2, 4, 4)])],
    "avg_pool2d": [(lambda x: F.avg_pool2d(x, 2), [T(1, 2, 4, 4)]),
                   (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [T(1, 1, 5, 5)])],
    "layer_norm": [(lambda x, w, b: F.layer_norm(x, (4,), w, b), [T(2, 3, 4), T(4), T(4)]),
                   (lambda x: F.layer_norm(x, (3, 4)), [T(2, 3, 4)])],
    # (padding_idx rows get no gradient by definition: compared with torch in test_against_torch)
    "embedding": [(lambda w: F.embedding(idx([[0, 2], [2, 3]]), w), [T(4, 3)])],
    "conv2d_input_backward": [
        (lambda g, w: dl.ops.conv2d_input_backward(g, w, (1, 2, 5, 5), (2, 2), (1, 1), (1, 1), 1),
         [T(1, 3, 3, 3), T(3, 2, 3, 3)])],
    "conv2d_weight_backward": [
        (lambda g, x: dl.ops.conv2d_weight_backward(g, x, (3, 2, 3, 3), (2, 2), (1, 1), (1, 1), 1),
         [T(1, 3, 3, 3), T(1, 2, 5, 5)])],
    "avg_pool2d_backward": [
        (lambda g: dl.ops.avg_pool2d_backward(g, (1, 1, 5, 5), (3, 3), (2, 2), (1, 1), True, False, None),
         [T(1, 1, 3, 3)])],
    # overlapping windows (stride 1 < kernel 2: pixels picked twice add up) and disjoint ones
    "max_pool2d_with_indices_backward": [
        (lambda g: dl.ops.max_pool2d_with_indices_backward(g, _POOLED, (2, 2), (1, 1), (0, 0), (1, 1), False,
                                                           _POOLED_INDICES), [T(1, 2, 3, 3)]),
        (lambda g: dl.ops.max_pool2d_with_indices_backward(g, _POOLED, (2, 2), (2, 2), (1, 1), (1, 1), True,
                                                           _DISJOINT_INDICES), [T(1, 2, 3, 3)])],
    "max_pool2d_backward": [
        (lambda g: dl.ops.max_pool2d_backward(g, _POOLED, (2, 2), (1, 1), (0, 0), (1, 1), False), [T(1, 2, 3, 3)]),
        (lambda g: dl.ops.max_pool2d_backward(g, _POOLED, (3, 3), (2, 2), (1, 1), (1, 1), True), [T(1, 2, 3, 3)])],
}


def _setitem(x, v):
    y = x.clone()
    y[idx([0, 2]), 1] = v
    return y


def _unary(name, low=None):
    fn = getattr(dl, name)
    return [(lambda a: fn(a), [T(3, 4, low=low)])]


_UNARY_DOMAINS = {"log": 0.5, "log2": 0.5, "log1p": 0.5, "sqrt": 0.5, "rsqrt": 0.5, "reciprocal": 0.5}
for _name in ("neg", "abs", "sign", "square", "exp", "log", "log1p", "log2", "expm1", "sqrt", "rsqrt", "sin",
              "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal", "floor", "ceil", "round",
              "trunc", "relu"):
    CASES[_name] = _unary(_name, _UNARY_DOMAINS.get(_name))
    CASES[_name + "_"] = [(inplace(_name + "_"), [T(3, 4, low=_UNARY_DOMAINS.get(_name))])]

# Random ops cannot be finite-differenced: test_dropout_gradient_is_its_mask checks them.
RANDOM = {"dropout", "dropout_"}

# Random draws and fills: their output does not depend on the input's values (zero
# gradient); test_random_fills_have_zero_gradient checks them.
RANDOM_FILLS = {
    "bernoulli": lambda p: dl.bernoulli(p),
    "uniform_": lambda a: a.uniform_(),
    "normal_": lambda a: a.normal_(),
    "exponential_": lambda a: a.exponential_(),
    "bernoulli_": lambda a: a.bernoulli_(0.5),
    "random_": lambda a: a.random_(0, 5),
}
RANDOM |= set(RANDOM_FILLS)

CASES.update({
    "lerp": [(lambda a, b, w: dl.lerp(a, b, w), [T(3, 4), T(4), T(3, 4)]), (lambda a, b: dl.lerp(a, b, 0.3), [T(3), T(3)])],
    "lerp_": [(lambda a, b: a.clone().lerp_(b, 0.25), [T(3), T(3)])],
    "hypot": [(lambda a, b: dl.hypot(a, b), [T(3, 4), T(4)])],
    "hypot_": [(lambda a, b: a.clone().hypot_(b), [T(3), T(3)])],
    "atan2": [(lambda a, b: dl.atan2(a, b), [T(3, 4), T(4)])],
    "atan2_": [(lambda a, b: a.clone().atan2_(b), [T(3), T(3)])],
    "fmod": [(lambda a, b: dl.fmod(a, b), [T(3, 4, low=0.3), T(4, low=1.1)]), (lambda a: dl.fmod(a, 0.7), [T(3, low=0.05)])],
    "fmod_": [(lambda a: a.clone().fmod_(0.7), [T(3, low=0.05)])],
    "frac": [(lambda a: dl.frac(a), [T(3, low=0.1)])],
    "frac_": [(lambda a: a.clone().frac_(), [T(3, low=0.1)])],
    "erfinv": [(lambda a: dl.erfinv(a), [T(3, low=-0.5)])],
    "erfinv_": [(lambda a: a.clone().erfinv_(), [T(3, low=-0.5)])],
    "nan_to_num": [(lambda a: dl.nan_to_num(dl.where(dl.tensor([False, True, True]), a, _INF), posinf=2.0),
                    [T(3)])],
    "nan_to_num_": [(lambda a: a.clone().nan_to_num_(), [T(3)])],
    "addcmul": [(lambda a, b, c: dl.addcmul(a, b, c, value=0.5), [T(4), T(3, 4), T(3, 4)])],
    "addcmul_": [(lambda a, b, c: a.clone().addcmul_(b, c), [T(3), T(3), T(3)])],
    "addcdiv": [(lambda a, b, c: dl.addcdiv(a, b, c, value=2.0), [T(4), T(3, 4), T(3, 4, low=1)])],
    "addcdiv_": [(lambda a, b, c: a.clone().addcdiv_(b, c), [T(3), T(3), T(3, low=1)])],
    "einsum": [(lambda a, b: dl.einsum("ij,jk->ik", a, b), [T(2, 3), T(3, 4)]),
               (lambda a, b: dl.einsum("bij,bj->bi", a, b), [T(2, 3, 4), T(2, 4)]),
               (lambda a: dl.einsum("ij->", a), [T(2, 3)]),
               (lambda a, b: dl.einsum("i,j->ij", a, b), [T(3), T(2)])],
    "diag": [(lambda a: dl.diag(a, 1), [T(3)]), (lambda a: dl.diag(a), [T(3, 4)]), (lambda a: dl.diag(a, -1), [T(4, 3)])],
    "baddbmm": [(lambda c, a, b: dl.baddbmm(c, a, b, beta=0.5, alpha=2.0), [T(2, 1, 4), T(2, 2, 3), T(2, 3, 4)])],
    "roll": [(lambda a: dl.roll(a, 1, 0), [T(3, 4)]), (lambda a: dl.roll(a, (1, -2), (0, 1)), [T(3, 4)]),
             (lambda a: dl.roll(a, 2), [T(3, 2)])],
    "repeat_interleave": [(lambda a: a.repeat_interleave(2, dim=1), [T(2, 3)]),
                          (lambda a: a.repeat_interleave(idx([1, 0, 2]), dim=0), [T(3, 2)]),
                          (lambda a: a.repeat_interleave(2), [T(2, 2)])],
    "adaptive_avg_pool2d": [(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [T(1, 2, 5, 4)])],
    "adaptive_max_pool2d": [(lambda x: F.adaptive_max_pool2d(x, (2, 2)), [distinct(1, 2, 5, 4)])],
    "conv_transpose2d": [(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
                          [T(1, 2, 3, 3), T(2, 3, 3, 3), T(3)]),
                         (lambda x, w: F.conv_transpose2d(x, w, groups=2, dilation=2), [T(1, 4, 3, 3), T(4, 1, 2, 2)])],
    "embedding_bag": [(lambda w: F.embedding_bag(idx([0, 2, 2, 1, 3]), w, idx([0, 2]), mode="mean"), [T(4, 3)]),
                      (lambda w, s: F.embedding_bag(idx([0, 2, 2, 1]), w, idx([0, 1]), mode="sum",
                                                    per_sample_weights=s), [T(4, 3), T(4)])],
    "upsample_nearest": [(lambda x: F.interpolate(x, size=(5, 3), mode="nearest"), [T(1, 2, 3, 2)]),
                         (lambda x: F.interpolate(x, scale_factor=2.0, mode="nearest"), [T(1, 1, 3)])],
    "upsample_bilinear2d": [(lambda x: F.interpolate(x, size=(5, 3), mode="bilinear"), [T(1, 2, 3, 2)]),
                            (lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True),
                             [T(1, 1, 2, 3)])],
    "im2col": [(lambda x: F.unfold(x, 2, padding=1, stride=2), [T(1, 2, 3, 3)])],
    "col2im": [(lambda x: F.fold(x, (3, 3), 2, padding=1, stride=2), [T(1, 8, 4)])],
})

CASES.update({
    "sort": [(lambda a: dl.sort(a, dim=1, descending=True)[0], [distinct(3, 4)])],
    "topk": [(lambda a: dl.topk(a, 2, dim=0)[0], [distinct(3, 4)])],
    "scatter": [(lambda a, s: a.scatter(1, idx([[0, 2], [3, 1], [1, 0]]), s), [T(3, 4), T(3, 2)]),
                (lambda a: a.scatter(0, idx([[2, 0, 1, 0]]), 1.5), [T(3, 4)])],
    "scatter_": [(lambda a, s: a.clone().scatter_(1, idx([[0, 2], [3, 1], [1, 0]]), s), [T(3, 4), T(3, 2)])],
    "scatter_add": [(lambda a, s: a.scatter_add(1, idx([[0, 0], [3, 1], [1, 1]]), s), [T(3, 4), T(3, 2)])],
    "scatter_add_": [(lambda a, s: a.clone().scatter_add_(0, idx([[0, 0, 2, 2]]), s), [T(3, 4), T(1, 4)])],
    "scatter_reduce": [(lambda a, s: a.scatter_reduce(1, idx([[0, 0], [3, 1], [1, 1]]), s, "sum", include_self=False),
                        [T(3, 4), T(3, 2)]),
                       (lambda a, s: a.scatter_reduce(1, idx([[0, 0], [3, 1], [1, 1]]), s, "mean"), [T(3, 4), T(3, 2)]),
                       (lambda a, s: a.scatter_reduce(1, idx([[0, 0], [3, 1], [1, 1]]), s, "amax", include_self=False),
                        [distinct(3, 4), distinct(3, 2)])],
    "scatter_reduce_": [(lambda a, s: a.clone().scatter_reduce_(1, idx([[0, 0], [2, 1], [1, 1]]), s, "mean",
                                                                include_self=False), [T(3, 4), T(3, 2)])],
    "index_fill": [(lambda a: a.index_fill(1, idx([0, 2]), -1.0), [T(3, 4)]),
                   (lambda a, v: a.index_fill(0, idx([1]), v), [T(3, 4), T()])],
    "index_fill_": [(lambda a: a.clone().index_fill_(1, idx([3]), 2.0), [T(3, 4)])],
    "masked_select": [(lambda a: a.masked_select(MASK), [T(3, 4)]), (lambda a: a.masked_select(MASK), [T(4)])],
})

# Complex numbers: real functions of real inputs through the complex ops (torch's convention,
# see dynamo_lite/autograd/derivatives/complex_numbers.py).
CASES.update({
    "view_as_complex": [(lambda x: dl.view_as_real(dl.view_as_complex(x) * 2.0), [T(3, 2)])],
    "view_as_real": [(lambda x: dl.view_as_real(dl.view_as_complex(x)).sum(-1), [T(2, 3, 2)])],
    "complex": [(lambda x, y: dl.view_as_real(dl.complex(x, y)), [T(3), T(3)])],
    "polar": [(lambda r, t: dl.view_as_real(dl.polar(r, t)), [T(3, low=0.5), T(3)])],
    "angle": [(lambda x: dl.angle(dl.view_as_complex(x)), [T(3, 2)]), (lambda x: dl.angle(x), [T(3, low=0.5)])],
})

# The porting ops (order statistics, linear solves, erfc).
_WELL_CONDITIONED = (dl.eye(3, dtype=dl.float64) * 3).detach()
CASES.update({
    "kthvalue": [(lambda a: dl.kthvalue(a, 2, dim=1)[0], [distinct(3, 4)]),
                 (lambda a: dl.median(a), [distinct(3, 3)]),
                 (lambda a: dl.median(a, 0, keepdim=True)[0], [distinct(3, 4)])],
    "linalg_inv": [(lambda a: dl.linalg.inv(a + _WELL_CONDITIONED), [T(3, 3)])],
    "linalg_solve": [(lambda a, b: dl.linalg.solve(a + _WELL_CONDITIONED, b), [T(3, 3), T(3, 2)]),
                     (lambda a, b: dl.linalg.solve(a + _WELL_CONDITIONED, b), [T(2, 3, 3), T(3)])],
    "erfc": [(lambda x: dl.erfc(x), [T(3, 4)])],
})

# dl.linalg.cholesky reads the lower triangle only: symmetrize first, so that every entry's
# numerical derivative is defined (the analytical one is the symmetric gradient).
CASES.update({
    "linalg_cholesky": [(lambda a: dl.linalg.cholesky((a + a.mT) * 0.5 + _WELL_CONDITIONED * 2), [T(3, 3)]),
                        (lambda a: dl.linalg.cholesky((a + a.mT) * 0.5 + _WELL_CONDITIONED * 2, upper=True),
                         [T(2, 3, 3)])],
})

# The ops ported from torch for porting (group 1: elementwise, gamma family, scans).
CASES.update({
    "logaddexp": [(lambda x, y: dl.logaddexp(x, y), [T(3, 4), T(4)])],
    "logaddexp2": [(lambda x, y: dl.logaddexp2(x, y), [T(3, 4), T(3, 4)])],
    "copysign": [(lambda x, y: dl.copysign(x, y), [T(3, 4), T(3, 4)]), (lambda x: dl.copysign(x, -2.0), [T(5)])],
    "copysign_": [(inplace("copysign_", -1.0), [T(4)])],
    "fmax": [(lambda x, y: dl.fmax(x, y), [T(3, 4), T(4)])],
    "fmin": [(lambda x, y: dl.fmin(x, y), [T(3, 4), T(3, 4)])],
    "frexp": [(lambda x: dl.frexp(x)[0], [T(3, 4)])],
    "lgamma": [(lambda x: dl.lgamma(x), [T(3, 4, low=0.2)]), (lambda x: dl.lgamma(x), [T(4, low=-2.8)]),
               ],
    "lgamma_": [(inplace("lgamma_"), [T(4, low=1.5)])],
    "digamma_": [(inplace("digamma_"), [T(4, low=1.5)])],
    "digamma": [(lambda x: dl.digamma(x), [T(3, 4, low=0.3)]), (lambda x: dl.digamma(x), [T(4, low=-0.9)])],
    "polygamma": [(lambda x: dl.polygamma(1, x), [T(3, 4, low=0.5)]), (lambda x: dl.polygamma(3, x), [T(4, low=2.0)])],
    "i0": [(lambda x: dl.i0(x), [T(3, 4)])],
    "i0_": [(inplace("i0_"), [T(4)])],
    "i1": [(lambda x: dl.autograd.grad(dl.i0(x).sum(), x, create_graph=True)[0], [T(3, 4)])],
    "cummax": [(lambda x: dl.cummax(x, 1)[0], [distinct(3, 4)]), (lambda x: dl.cummax(x, 0).values, [distinct(5)])],
    "cummin": [(lambda x: dl.cummin(x, 0)[0], [distinct(3, 4)])],
    "logcumsumexp": [(lambda x: dl.logcumsumexp(x, 1), [T(3, 4)]), (lambda x: dl.logcumsumexp(x, 0), [T(5)])],
})

# The matrix decompositions: functions of the factors that do not depend on their sign choices.
CASES.update({
    "linalg_svd": [(lambda a: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh + u[..., :1] * vh[..., :1, :])(
        *dl.linalg.svd(a, full_matrices=False)), [T(4, 3)]),
        (lambda a: dl.linalg.svdvals(a), [T(2, 3, 4)])],
    "linalg_eigh": [(lambda a: (lambda l, q: (q[:, :1] @ q[:, :1].T) * l.sum())(*dl.linalg.eigh(a + a.T)), [T(3, 3)])],
    "linalg_qr": [(lambda a: (lambda q, r: q + r.sum(0))(*dl.linalg.qr(a)), [T(4, 3)])],
    "linalg_slogdet": [(lambda a: dl.linalg.slogdet(a + _WELL_CONDITIONED).logabsdet, [T(2, 3, 3)])],
    "linalg_det": [(lambda a: dl.linalg.det(a + _WELL_CONDITIONED), [T(3, 3)])],
})

# dl.fft: real losses of complex spectra through view_as_real (complex gradients, torch's convention).
CASES.update({
    "fft_c2c": [(lambda x: dl.view_as_real(dl.fft.fft(x, norm="ortho")), [T(3, 5)]),
                (lambda z: dl.view_as_real(dl.fft.ifft2(dl.view_as_complex(z))), [T(2, 3, 2)])],
    "fft_r2c": [(lambda x: dl.view_as_real(dl.fft.rfft(x)), [T(3, 6)]),
                (lambda x: dl.view_as_real(dl.fft.rfftn(x, norm="forward")), [T(3, 5)])],
    "fft_c2r": [(lambda z: dl.fft.irfft(dl.view_as_complex(z)), [T(3, 4, 2)]),
                (lambda z: dl.fft.irfft(dl.view_as_complex(z), n=7, norm="ortho"), [T(4, 2)])],
})

# The group-2 porting ops: diagonal is a view op; the others are compositions.
CASES.update({
    "diagonal": [(lambda x: dl.diagonal(x, 1), [T(3, 4)]), (lambda x: x.diagonal(-1, 2, 0), [T(3, 2, 4)])],
})

# The group-3 porting ops: matrix_exp is a registry op; the others are compositions.
CASES.update({
    "matrix_exp": [(lambda a: dl.matrix_exp(a), [T(3, 3)]), (lambda a: dl.matrix_exp(a * 3), [T(2, 2, 2)])],
})
