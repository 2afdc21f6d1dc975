"""A custom ``dl.autograd.Function`` compiles into the graph: its forward's ops are graph
nodes (in-place ops on strided views of its own buffers included) and its own backward
is traced into the backward graph, so a training step is one forward and one backward
graph whose gradients equal eager's (NOTE: [custom autograd.Function in the graph])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl


class Square(dl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class RoundThrough(dl.autograd.Function):
    """Straight-through rounding: its backward is not the derivative of its forward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return (x * scale).round() / scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class Scan(dl.autograd.Function):
    """``h[t] = a[t] * h[t-1] + x[t]`` along dim 1, written as mamba-style scans are: buffers
    cloned, then filled in place through strided views, in forward and in backward."""

    @staticmethod
    def forward(ctx, a, x):
        a = a.clone()
        h = x.clone()
        for t in range(1, h.size(1)):
            h[:, t].add_(a[:, t] * h[:, t - 1])
        ctx.save_for_backward(a, h)
        return h

    @staticmethod
    def backward(ctx, grad):
        a, h = ctx.saved_tensors
        gx = grad.clone()
        for t in range(gx.size(1) - 2, -1, -1):
            gx[:, t].add_(a[:, t + 1] * gx[:, t + 1])
        ga = dl.zeros_like(a)
        ga[:, 1:].copy_(gx[:, 1:] * h[:, :-1])
        return ga if ctx.needs_input_grad[0] else None, gx


class SplitSign(dl.autograd.Function):
    """Two outputs, one of them marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        sign = (x > 0).to(x.dtype)
        ctx.mark_non_differentiable(sign)
        ctx.save_for_backward(sign)
        return x.abs(), sign

    @staticmethod
    def backward(ctx, grad_abs, grad_sign):
        (sign,) = ctx.saved_tensors
        return grad_abs * (2 * sign - 1)


def _leaves(*shapes, seed=0):
    dl.manual_seed(seed)
    return [dl.randn(*shape, requires_grad=True) for shape in shapes]


def _run(fn, leaves):
    loss = fn(*leaves)
    loss.backward()
    return loss.detach().numpy(), [leaf.grad.numpy().copy() for leaf in leaves]


def _check(fn, shapes, backend, calls=3):
    expected_loss, expected_grads = _run(fn, _leaves(*shapes))
    compiled = dl.compile(fn, backend=backend)
    before = dl.stats()
    for _ in range(calls):
        loss, grads = _run(compiled, _leaves(*shapes))
        np.testing.assert_allclose(loss, expected_loss, rtol=1e-5, atol=1e-5)
        for got, want in zip(grads, expected_grads):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    after = dl.stats()
    assert not after.fallbacks[len(before.fallbacks):], after.fallbacks
    assert after.graph_breaks == before.graph_breaks
    assert after.cache_misses - before.cache_misses == 1
    report = dl.explain(fn, backend=backend)(*_leaves(*shapes))
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
    assert len(report.backward_graphs) == 1, str(report)
    return report


def test_square_uses_its_own_backward(backend):
    _check(lambda x: Square.apply(x + 1).sum(), [(5,)], backend)


def test_straight_through_gradient(backend):
    report = _check(lambda x, w: (RoundThrough.apply(x @ w, 4.0) ** 2).sum(), [(3, 4), (4, 2)], backend)
    assert "round" not in str(report.backward_graphs[0])  # the user's backward, not round's derivative


def test_scan_with_in_place_ops_on_strided_views(backend):
    def model(a, x, w):
        h = Scan.apply(dl.sigmoid(a), x @ w)
        return (h * h).mean()

    _check(model, [(2, 8, 4), (2, 8, 4), (4, 4)], backend)


def test_non_differentiable_output(backend):
    def f(x):
        magnitude, sign = SplitSign.apply(x * 3)
        return (magnitude * 2).sum() + sign.sum()

    _check(f, [(6,)], backend)


def test_grad_off_runs_forward_only(backend):
    def f(x):
        with dl.no_grad():
            return Square.apply(x)

    x = dl.randn(4, requires_grad=True)
    out = dl.compile(f, backend=backend)(x)
    np.testing.assert_allclose(out.numpy(), (x.detach() ** 2).numpy(), rtol=1e-6)
    assert not out.requires_grad and dl.stats().graph_breaks == 0


def test_second_order_gradient_is_refused_not_wrong():
    f = dl.compile(lambda x: Square.apply(x).sum(), backend="eager")
    x = dl.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="second-order gradient"):  # (eager supports it: documented gap)
        dl.autograd.grad(f(x), x, create_graph=True)
