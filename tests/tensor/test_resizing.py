"""``resize_``/``resize_as_`` and ``share_memory_``/``is_shared``, eager and around compiled code.

Expected values follow torch's documented behaviour: ``resize_`` keeps the leading elements in
row-major order, gives contiguous (or channels_last) strides, refuses tensors that require grad
("cannot resize variables that require grad") and negative sizes; ``share_memory_`` returns the
tensor and a forked process then writes the same memory.
"""
from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import dynamo_lite as dl


def test_resize_within_the_storage_keeps_the_leading_elements():
    t = dl.arange(6.0)
    assert t.resize_(2, 2) is t
    assert t.shape == (2, 2) and t.stride() == (2, 1)
    np.testing.assert_array_equal(t.numpy(), [[0, 1], [2, 3]])
    t.resize_((6,))
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0))


def test_resize_growing_keeps_the_old_elements_in_front():
    t = dl.arange(4, dtype=dl.int64)
    t.resize_(3, 3)
    assert t.shape == (3, 3)
    np.testing.assert_array_equal(t.reshape(-1)[:4].numpy(), [0, 1, 2, 3])
    t.fill_(7)
    assert int(t.sum()) == 63


def test_resize_as_and_channels_last():
    t = dl.zeros(5)
    t.resize_as_(dl.ones(2, 3, 4, 5), memory_format=dl.channels_last)
    assert t.shape == (2, 3, 4, 5) and t.stride() == (60, 1, 15, 3)


def test_resize_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        dl.zeros(3, requires_grad=True).resize_(4)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        dl.zeros(3).resize_(2, -1)


def test_growing_a_storage_other_tensors_view_is_refused_not_left_stale():
    t = dl.arange(4.0)
    view = t[1:]
    with pytest.raises(RuntimeError, match="other tensors view"):
        t.resize_(10)
    assert t.shape == (4,)
    np.testing.assert_array_equal(view.numpy(), [1, 2, 3])
    del view
    gc.collect()
    t.resize_(10)
    np.testing.assert_array_equal(t[:4].numpy(), [0, 1, 2, 3])


def test_shrinking_with_views_alive_only_changes_this_tensor():
    t = dl.arange(6.0)
    view = t[3:]
    t.resize_(2)
    t.add_(10)
    np.testing.assert_array_equal(view.numpy(), [3, 4, 5])
    np.testing.assert_array_equal(t.numpy(), [10, 11])


def test_a_compiled_function_sees_the_resized_tensor():
    def f(x):
        return x * 2

    dl.reset()
    compiled = dl.compile(f, backend="numpy")
    t = dl.arange(4.0)
    np.testing.assert_array_equal(compiled(t).numpy(), f(t).numpy())
    t.resize_(2, 3)
    t.copy_(dl.ones(2, 3))
    np.testing.assert_array_equal(compiled(t).numpy(), f(t).numpy())
    assert compiled(t).shape == (2, 3)
    assert dl.stats().graph_count == 2 and not dl.stats().fallbacks  # the new shape compiled anew


def test_resize_inside_compiled_code_equals_eager():
    def f(x):
        y = x.clone()
        y.resize_(2, 2)
        return y + 1

    compiled = dl.compile(f, backend="numpy")
    for n in (6, 8):
        expected, actual = f(dl.arange(float(n))), compiled(dl.arange(float(n)))
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    report = dl.explain(f, backend="numpy")(dl.arange(6.0))
    assert report.graph_count == 2 and report.graph_break_count == 1  # clone, then `y + 1` after the break
    assert "replace a tensor's storage memory" in str(report.break_reasons[0])


def test_share_memory_is_seen_by_a_forked_process():
    t = dl.ones(4)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    assert t.share_memory_() is t  # already shared: nothing moves
    pid = os.fork()
    if pid == 0:  # the child writes the shared memory and leaves without running the test harness
        t.add_(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    np.testing.assert_array_equal(t.numpy(), [2, 2, 2, 2])


def test_module_share_memory_keeps_parameters_and_their_values():
    model = dl.nn.Linear(3, 2)
    weight, before = model.weight, model.weight.detach().clone()
    assert model.share_memory() is model
    assert model.weight is weight and model.weight.is_shared() and model.bias.is_shared()
    np.testing.assert_array_equal(model.weight.detach().numpy(), before.numpy())
    out = model(dl.ones(1, 3))
    out.sum().backward()
    assert model.weight.grad.shape == (2, 3)
