"""Tensor.register_post_accumulate_grad_hook: called with the leaf once its .grad holds the new gradient."""
from __future__ import annotations

import pytest

import dynamo_lite as dl


def test_hook_sees_the_accumulated_grad_once_per_backward():
    w = dl.ones(2, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda p: seen.append((p is w, p.grad.tolist())))
    (w * 3 + w * 2).sum().backward()  # two uses, one accumulation
    (w * 3).sum().backward()
    assert seen == [(True, [5.0, 5.0]), (True, [8.0, 8.0])]
    handle.remove()
    (w * 3).sum().backward()
    assert len(seen) == 2


def test_hook_order_follows_the_backward_and_skips_leaves_without_gradient():
    a, b, unused = (dl.ones(2, requires_grad=True) for _ in range(3))
    order = []
    for name, t in (("a", a), ("b", b), ("unused", unused)):
        t.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name))
    ((a * 2).exp() * b).sum().backward()
    assert sorted(order) == ["a", "b"]


def test_hook_runs_after_a_compiled_backward():
    model = dl.nn.Linear(3, 2)
    order = []
    for name, p in model.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: order.append((name, p.grad is not None)))
    compiled = dl.compile(model)
    compiled(dl.randn(4, 3)).sum().backward()
    assert dl.stats().graph_count == 1
    assert sorted(order) == [("bias", True), ("weight", True)]


def test_errors():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        dl.ones(2).register_post_accumulate_grad_hook(print)
    y = dl.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        y.register_post_accumulate_grad_hook(print)
