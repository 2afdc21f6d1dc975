"""The autograd API: leaves, grad accumulation, grad modes, hooks, Function, and torch's errors."""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.autograd.gradcheck import GradcheckError

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
         "you need to access saved tensors after calling backward.")


def leaf(*values):
    return dl.tensor(list(values), dtype=dl.float64, requires_grad=True)


def test_leaves_grad_fn_and_next_functions():
    w = leaf(1.0, 2.0)
    y = w * 3
    z = y.sum()
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    accumulate = y.grad_fn.next_functions[0][0]
    assert accumulate.name() == "AccumulateGrad" and accumulate.variable is w
    assert repr(z) == "tensor(9., dtype=dynamo_lite.float64, grad_fn=<SumBackward0>)"


def test_grad_accumulates_and_broadcasting_reduces_to_the_input_shape():
    w = dl.ones(3, 1, requires_grad=True)
    b = dl.ones(4, requires_grad=True)
    (w * b).sum().backward()
    (w * b).sum().backward()
    assert w.grad.shape == (3, 1) and w.grad.tolist() == [[8.0]] * 3
    assert b.grad.tolist() == [6.0] * 4


def test_gradient_dtype_follows_the_input():
    w = dl.ones(2, dtype=dl.float32, requires_grad=True)
    (w * dl.ones(2, dtype=dl.float64)).sum().backward()
    assert w.grad.dtype == dl.float32


def test_factories_and_parameters_require_grad():
    assert dl.zeros(2, requires_grad=True).requires_grad
    assert dl.randn(2, requires_grad=True).is_leaf
    assert nn.Parameter(dl.ones(2)).requires_grad
    assert not nn.Parameter(dl.ones(2), requires_grad=False).requires_grad
    assert all(p.requires_grad for p in nn.Linear(2, 3).parameters())
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        dl.ones(2, dtype=dl.int64, requires_grad=True)


def test_backward_twice_without_retain_graph():
    w = leaf(1.0, 2.0)
    y = (w.exp() * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert np.allclose(w.grad.numpy(), 2 * np.exp([1.0, 2.0]) * np.array([2.0, 3.0]))
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert str(info.value) == FREED


def test_backward_errors():
    w = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (w * 2).backward()
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn$"):
        dl.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("Mismatch in shape: grad_output[0] has a shape of")):
        (w * 2).backward(dl.ones(3, dtype=dl.float64))
    (w * 2).backward(dl.tensor([1.0, 10.0], dtype=dl.float64))
    assert w.grad.tolist() == [2.0, 20.0]


def test_inplace_on_leaves_and_their_views():
    w = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place operation.$"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an in-place"):
        w[0].mul_(2)
    with dl.no_grad():
        w.add_(1)
    assert w.tolist() == [2.0, 3.0] and w.is_leaf


def test_saved_tensor_modified_in_place_raises_torchs_error():
    w = leaf(1.0, 2.0)
    y = w.exp()
    z = y.sum()
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        z.backward()
    assert str(info.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[dl.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead."
    )


def test_inplace_that_does_not_touch_saved_values_is_fine():
    w = leaf(1.0, 2.0)
    y = w + 1
    z = (y * 2).sum()  # saves only the scalar
    y.mul_(3)
    (z + y.sum()).backward()
    assert w.grad.tolist() == [5.0, 5.0]


def test_requires_grad_flags():
    w = leaf(1.0)
    y = w * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    t = dl.ones(2)
    assert t.requires_grad_() is t and t.requires_grad
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.data_ptr() == y.data_ptr()
    y2 = w * 3
    assert y2.detach_() is y2 and y2.is_leaf and not y2.requires_grad
    assert not w.data.requires_grad and w.data.data_ptr() == w.data_ptr()


def test_grad_modes_as_context_managers_and_decorators():
    w = leaf(1.0)
    with dl.no_grad():
        assert not (w * 2).requires_grad and not dl.is_grad_enabled()
        with dl.enable_grad():
            assert (w * 2).requires_grad
    with dl.inference_mode():
        assert not (w * 2).requires_grad and dl.is_inference_mode_enabled()
    with dl.inference_mode(False):
        assert (w * 2).requires_grad
    with dl.set_grad_enabled(False):
        assert not (w * 2).requires_grad
    assert dl.is_grad_enabled()
    dl.set_grad_enabled(False)
    assert not dl.is_grad_enabled()
    dl.set_grad_enabled(True)

    @dl.no_grad()
    def double(x):
        return x * 2

    @dl.no_grad
    def triple(x):
        return x * 3

    @dl.set_grad_enabled(False)
    def quadruple(x):
        return x * 4

    assert not double(w).requires_grad and not triple(w).requires_grad and not quadruple(w).requires_grad
    assert dl.is_grad_enabled()

    @dl.no_grad()
    def gen(x):
        yield x * 2
        yield dl.is_grad_enabled()

    first, mode = list(gen(w))
    assert not first.requires_grad and mode is False


def test_retain_grad_and_hooks():
    w = leaf(1.0, 2.0)
    y = w * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    handle = w.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    assert y.retains_grad and y.grad.tolist() == [4.0, 8.0] and seen == [[4.0, 8.0]]
    assert w.grad.tolist() == [80.0, 160.0]
    handle.remove()
    w.grad = None
    (w * 1).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]


def test_autograd_grad_create_graph_and_unused_inputs():
    x = leaf(2.0)
    u = leaf(5.0)
    (g,) = dl.autograd.grad(x ** 3, x, create_graph=True)
    assert g.tolist() == [12.0] and g.requires_grad
    (gg,) = dl.autograd.grad(g, x)
    assert gg.tolist() == [12.0] and x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        dl.autograd.grad((x * 2).sum(), [x, u])
    gx, gu = dl.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        dl.autograd.grad((x * 2).sum(), dl.ones(1))


def test_backward_inputs_accumulates_only_into_them():
    a, b = leaf(1.0), leaf(2.0)
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


class Cube(dl.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return grad * 3 * x ** 2 * ctx.scale, None


def test_custom_function():
    x = leaf(1.0, 2.0)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward" and y.tolist() == [2.0, 16.0]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert dl.autograd.gradcheck(lambda t: Cube.apply(t, 0.5), (dl.randn(3, dtype=dl.float64, requires_grad=True),))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x, None


def test_gradcheck_catches_a_wrong_gradient():
    x = dl.randn(3, dtype=dl.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        dl.autograd.gradcheck(lambda t: WrongCube.apply(t, 1.0), (x,))
    assert dl.autograd.gradcheck(lambda t: WrongCube.apply(t, 1.0), (x,), raise_exception=False) is False


def test_deepcopy_and_pickle_keep_leaves():
    w = leaf(1.0, 2.0)
    (w * 2).sum().backward()
    c = copy.deepcopy(w)
    assert c.requires_grad and c.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(w * 2)


def test_ops_without_grad_stay_plain_tensors():
    x = dl.ones(3)
    y = x + 1
    assert not y.requires_grad and y.grad_fn is None
    w = leaf(1.0, 2.0)
    assert not (w > 1).requires_grad and not w.argmax().requires_grad


def test_a_view_taken_under_no_grad_whose_base_changes_is_an_error():
    w = leaf(1.0, 2.0)
    x = w * 1
    with dl.no_grad():
        v = x[0]
    assert not v.requires_grad
    x.mul_(3)
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and its base or another view"):
        v * leaf(5.0)


def test_views_recorded_by_autograd_follow_in_place_writes_to_their_base():
    w = leaf(1.0, 2.0)
    x = w * 1
    v = x[1:]
    x.mul_(3)
    (v * v).sum().backward()  # v is now 3 * w[1]
    assert w.grad.tolist() == [0.0, 36.0]


def test_graphs_are_freed_without_the_garbage_collector():
    import gc
    import weakref

    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 3))
    x, target = dl.randn(5, 4), dl.tensor([0, 1, 2, 0, 1])
    gc.disable()
    try:
        out = model(x) * 1
        out[:, 0].mul_(2)
        loss = nn.functional.cross_entropy(out, target, label_smoothing=0.1)
        node = weakref.ref(out.grad_fn)
        loss.backward()
        del out, loss
        assert node() is None  # no reference cycle keeps the graph (and its saved tensors) alive
    finally:
        gc.enable()
