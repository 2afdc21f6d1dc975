"""Each node and tensor gets its own hook tables, retained gradients and metadata when first used."""
import dynamo_lite as dl


def test_hooks_on_one_node_leave_the_others_alone():
    x = dl.ones(2, requires_grad=True)
    a, b = x * 2, x * 3
    seen = []
    a.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append("a"))
    a.grad_fn.register_prehook(lambda grad: grad * 10)
    assert b.grad_fn._hooks == () and not b.grad_fn._pre_hooks
    (a.sum() + b.sum()).backward()
    assert seen == ["a"]
    assert x.grad.tolist() == [23.0, 23.0]  # 2 * 10 + 3


def test_metadata_is_per_node_and_assignable():
    x = dl.ones(2, requires_grad=True)
    a, b = x * 2, x * 3
    a.grad_fn.metadata["tag"] = 1
    assert b.grad_fn.metadata == {} and a.grad_fn.metadata == {"tag": 1}
    b.grad_fn.metadata = {"other": 2}
    assert b.grad_fn.metadata == {"other": 2}


def test_retain_grad_and_tensor_hooks_stay_per_tensor():
    x = dl.ones(2, requires_grad=True)
    y = dl.ones(2, requires_grad=True)
    a, b = x * 2, x * 3
    a.retain_grad()
    x.register_hook(lambda g: g * 2)
    calls = []
    x.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.tolist()))
    assert not y._meta().hooks and not y._meta().post_accumulate_hooks
    (a.sum() + b.sum() + y.sum()).backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad is None
    assert x.grad.tolist() == [10.0, 10.0] and y.grad.tolist() == [1.0, 1.0]
    assert calls == [[10.0, 10.0]]
