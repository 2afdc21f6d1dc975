"""Module.register_full_backward_hook / register_full_backward_pre_hook, with torch's semantics.

Expected gradients are worked by hand: for y = x @ W.T + b summed, dL/dy = 1 and
dL/dx = 1 @ W; a pre-hook doubling grad_output doubles every gradient below it (the
parameters' too); a hook's returned grad_input replaces the input gradient only.
"""
import pytest

import dynamo_lite as dl
from dynamo_lite import nn


def _layer():
    dl.manual_seed(0)
    return nn.Linear(3, 2)


def test_hook_sees_grad_input_and_grad_output_and_can_replace_grad_input():
    lin = _layer()
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((module, grad_input, grad_output))
        return (grad_input[0] * 10,)

    lin.register_full_backward_hook(hook)
    x = dl.ones(1, 3, requires_grad=True)
    lin(x).sum().backward()
    (module, grad_input, grad_output), = seen
    assert module is lin
    assert [g.tolist() for g in grad_output] == [[[1.0, 1.0]]]
    expected = lin.weight.detach().sum(0)
    assert grad_input[0].tolist()[0] == pytest.approx(expected.tolist())
    assert x.grad.tolist()[0] == pytest.approx((expected * 10).tolist())
    assert lin.bias.grad.tolist() == [1.0, 1.0]  # the replacement touches grad_input only


def test_pre_hook_replaces_grad_output():
    lin = _layer()
    order = []
    lin.register_full_backward_pre_hook(lambda m, go: order.append("pre") or (go[0] * 2,))
    lin.register_full_backward_hook(lambda m, gi, go: order.append(("hook", go[0].tolist())))
    x = dl.ones(1, 3, requires_grad=True)
    lin(x).sum().backward()
    assert order == ["pre", ("hook", [[2.0, 2.0]])]
    assert lin.bias.grad.tolist() == [2.0, 2.0]
    assert x.grad.tolist()[0] == pytest.approx((lin.weight.detach().sum(0) * 2).tolist())


def test_inputs_without_grad_give_none_and_handles_remove():
    lin = _layer()
    seen = []
    handle = lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, len(go))))
    lin(dl.ones(1, 3)).sum().backward()  # only the parameters need gradients
    assert seen == [((None,), 1)]
    handle.remove()
    lin(dl.ones(1, 3, requires_grad=True)).sum().backward()
    assert len(seen) == 1


def test_hook_errors_match_torch():
    lin = _layer()
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        lin(dl.ones(1, 3, requires_grad=True)).sum().backward()
    lin = _layer()
    lin.register_full_backward_hook(lambda m, gi, go: (dl.ones(1, 3),))
    with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
        lin(dl.ones(1, 3)).sum().backward()


def test_no_hook_runs_without_grad_mode():
    lin = _layer()
    seen = []
    lin.register_full_backward_hook(lambda *a: seen.append(a))
    with dl.no_grad():
        out = lin(dl.ones(1, 3, requires_grad=True))
    assert out.grad_fn is None and seen == []


def test_compiled_call_with_backward_hooks_breaks_once_with_the_reason():
    lin = _layer()
    seen = []
    lin.register_full_backward_hook(lambda module, grad_input, grad_output: seen.append(grad_output[0].shape)
                                    or (grad_input[0] * 10,))

    def f(x):
        return (lin(x * 2) + 1).sum()

    x = dl.ones(1, 3, requires_grad=True)
    f(x).backward()
    expected, x.grad = x.grad.clone(), None
    dl.compile(f, backend="numpy")(x).backward()
    assert x.grad.tolist()[0] == pytest.approx(expected.tolist()[0]) and len(seen) == 2
    report = dl.explain(f)(x)
    assert report.graph_break_count == 1 and report.graph_count == 2, str(report)
    assert "register_full_backward_hook" in report.break_reasons[0].reason
    assert not dl.stats().fallbacks
