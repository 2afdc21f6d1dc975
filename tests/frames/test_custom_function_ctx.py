"""What ``ctx`` offers a custom ``dl.autograd.Function`` compiled into the graph, with eager's semantics:
``mark_dirty`` (forward changes an input in place and returns it), the ``forward(*args)`` +
``setup_context(ctx, inputs, output)`` form, ``mark_non_differentiable``, ``set_materialize_grads``
and ``needs_input_grad``. Each is one forward and one backward graph, no break, gradients equal to eager
(NOTE: [custom autograd.Function in the graph])."""
from __future__ import annotations

import dynamo_lite as dl

from tests.frames.test_custom_function_graph import _check


class DoubleInPlace(dl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class ShiftAddInPlace(dl.autograd.Function):
    """Writes its input through a strided view, marks it dirty, returns it with a second output."""

    @staticmethod
    def forward(ctx, x, a):
        x[:, 1:] += a[:, 1:] * x[:, :-1]
        ctx.mark_dirty(x)
        ctx.save_for_backward(a)
        return x, a * 3

    @staticmethod
    def backward(ctx, gx, ga3):
        (a,) = ctx.saved_tensors
        g = gx.clone()
        g[:, :-1] += a[:, 1:] * gx[:, 1:]
        return g, ga3 * 3


class MulSetup(dl.autograd.Function):
    """The new-style form: ``forward`` without ctx, ``setup_context`` saves what backward reads."""

    @staticmethod
    def forward(x, y, scale):
        return x * y * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, scale = inputs
        ctx.save_for_backward(x, y)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        gx = grad * y * ctx.scale if ctx.needs_input_grad[0] else None
        gy = grad * x * ctx.scale if ctx.needs_input_grad[1] else None
        return gx, gy, None


class SortedWithIndex(dl.autograd.Function):
    """An index output marked non-differentiable; grads not materialized (backward sees None)."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        values, index = x.sort(dim=-1)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(index)
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        (index,) = ctx.saved_tensors
        if grad_values is None:
            return None
        return dl.zeros_like(grad_values).scatter(-1, index, grad_values)


def test_mark_dirty_in_graph(backend):
    def f(x):
        y = x * 1.5
        z = DoubleInPlace.apply(y)
        return (z * z).sum() + y.sum()  # y is z: eager gives it the Function's history

    _check(f, [(5,)], backend)


def test_mark_dirty_through_a_strided_view(backend):
    def f(x, a):
        h, a3 = ShiftAddInPlace.apply(x * 2, dl.sigmoid(a))
        return (h * h).sum() + a3.mean()

    _check(f, [(3, 6), (3, 6)], backend)


def test_setup_context(backend):
    def f(x, y):
        return (MulSetup.apply(x + 1, y, 0.5) ** 2).sum()

    _check(f, [(4, 3), (4, 3)], backend)


def test_setup_context_input_without_grad(backend):
    def f(x):
        y = dl.ones(4, 3)  # needs_input_grad == (True, False, False)
        return MulSetup.apply(x * 2, y, 2.0).sum()

    _check(f, [(4, 3)], backend)


def test_non_differentiable_index_and_grads_not_materialized(backend):
    def f(x):
        values, index = SortedWithIndex.apply(x * 2)
        return (values[:, :2] ** 2).sum() + index.sum().to(x.dtype)

    _check(f, [(3, 5)], backend)


def test_unused_output_reaches_backward_as_none(backend):
    def f(x):
        values, index = SortedWithIndex.apply(x * 2)
        return index.to(x.dtype).sum() + (x * 0).sum()

    _check(f, [(3, 5)], backend)


class ScaleIfNeeded(dl.autograd.Function):
    """Reads ``needs_input_grad`` in forward: it is each argument's requires_grad, as in eager."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w + (1.0 if ctx.needs_input_grad[1] else 0.0)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w, grad * x


def test_needs_input_grad_in_forward_reads_requires_grad(backend):
    def f(x, w):
        return ScaleIfNeeded.apply(x, w).sum()

    w_frozen = dl.randn(4)
    for w in (w_frozen, w_frozen.clone().requires_grad_(True)):
        x = dl.randn(4, requires_grad=True)
        compiled = dl.compile(f, backend=backend)
        assert compiled(x, w).item() == f(x, w).item()
    assert not dl.stats().fallbacks and dl.stats().graph_breaks == 0
