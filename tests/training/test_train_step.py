"""dl.compile(train_step): forward, loss, backward(), optimizer.step(), zero_grad() equal eager, call after call."""
from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled
from tests.training.train_step_harness import (assert_same_state, cross_entropy, make_train_step, mse,
                                               regression_batches, run_against_eager, small_mlp, training_state)

BACKWARD_REASON = "backward() runs the autograd engine"


def classification_batches(n=3):
    dl.manual_seed(1)
    return [(dl.randn(8, 6), dl.randint(0, 4, (8,))) for _ in range(n)]


OPTIMIZERS = {
    "sgd": lambda params: dl.optim.SGD(params, lr=0.1),
    "sgd_momentum": lambda params: dl.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3),
    "sgd_nesterov": lambda params: dl.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True),
    "adam": lambda params: dl.optim.Adam(params, lr=1e-2),
    "adam_amsgrad_l2": lambda params: dl.optim.Adam(params, lr=1e-2, weight_decay=1e-2, amsgrad=True),
    "adamw": lambda params: dl.optim.AdamW(params, lr=1e-2, weight_decay=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_train_step_equals_eager_after_20_calls(name):
    before, after = run_against_eager(small_mlp, OPTIMIZERS[name], cross_entropy, classification_batches(),
                                      expect_breaks=1)
    assert after.graph_count - before.graph_count >= 2  # the forward graph and the optimizer's graph


def test_train_step_on_every_backend(backend):
    run_against_eager(small_mlp, OPTIMIZERS["adamw"], mse, regression_batches(), backend=backend, expect_breaks=1)


def test_explain_names_the_one_break_and_traces_the_optimizer():
    model = small_mlp()
    opt = dl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = make_train_step(model, opt, cross_entropy)
    (x, y), = classification_batches(1)
    step(x, y)  # the momentum buffers exist: the steady-state translation
    out = dl.explain(step)(x, y)
    assert [r.reason.split(" (")[0] for r in out.break_reasons] == [
        "backward() runs the autograd engine"]
    assert out.break_reasons[0].lineno is not None and "loss.backward()" in str(out.break_reasons[0])
    # The forward's graph (with a compiled backward, its backward graph too), then the optimizer's.
    assert out.graph_count >= 2 and len(out.frames) == 2
    ops = [str(op) for op in out.ops_per_graph[-1]]
    assert sum("add_" in op for op in ops) >= 4 and sum("mul_" in op for op in ops) == 4, ops


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.9, 0.95), (0.5, 0.75)])
def test_adam_bias_corrections_as_tensors_equal_the_python_numbers(monkeypatch, betas):
    """The compiled Adam computes its step size from the step counter as float64 tensors
    (NOTE: [Adam's step counter when compiled]): the doubles eager computes, up to the last
    bits of NumPy's vectorized pow (far below float32 resolution, where they are used)."""
    from dynamo_lite.optim import adam

    lr = 3e-4
    steps = [dl.tensor(float(s)) for s in range(1, 3001)]
    eager = [adam.bias_corrections(s, lr, *betas) for s in steps]
    monkeypatch.setattr(adam, "is_tracing", lambda: True)
    traced = [adam.bias_corrections(s, lr, *betas) for s in steps]
    assert all(type(a) is float for pair in eager for a in pair)
    assert all(t.dtype == dl.float64 and t.ndim == 0 for pair in traced for t in pair)
    mismatches = [(i + 1, e, t.item()) for i, (ep, tp) in enumerate(zip(eager, traced)) for e, t in zip(ep, tp)
                  if abs(e - t.item()) > 1e-12 * abs(e)]
    assert not mismatches, mismatches[:5]


def test_zero_grad_first_then_backward_then_step():
    """The other common order: the first graph's zero_grad side effects land before backward runs."""
    def make(params):
        return dl.optim.SGD(params, lr=0.1, momentum=0.5)

    eager_model = small_mlp()
    compiled_model = small_mlp()
    eager_opt, compiled_opt = make(eager_model.parameters()), make(compiled_model.parameters())

    def step_of(model, opt):
        def train_step(x, y):
            opt.zero_grad()
            loss = cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return train_step

    eager, compiled = step_of(eager_model, eager_opt), dl.compile(step_of(compiled_model, compiled_opt))
    before = dl.stats()
    for x, y in classification_batches(5) * 4:
        assert eager(x, y).item() == pytest.approx(compiled(x, y).item(), rel=1e-6)
    for pe, pc in zip(eager_model.parameters(), compiled_model.parameters()):
        assert np.allclose(pe.detach().numpy(), pc.detach().numpy(), rtol=1e-5, atol=1e-6)
        assert np.allclose(pe.grad.numpy(), pc.grad.numpy(), rtol=1e-5, atol=1e-6)
    after = dl.stats()
    # Two translations of the frame, each with its one break at backward(): the first call
    # sees grads None, the later ones see the previous call's grads (a guard on p.grad); the
    # optimizer's graph recompiles once, when the momentum buffers exist.
    assert_compiled(before, after, expect_breaks=2)
    assert sorted(f.reason.split(":")[0] for f in after.guard_failures[len(before.guard_failures):]) == [
        "opt.param_groups[0]['params'][0].grad", "opt.state[opt.param_groups[0]['params'][0]]"]


def test_zero_grad_keeping_tensors_and_a_frozen_parameter():
    """zero_grad(set_to_none=False) zeroes the grads in place (inputs of the graph); a frozen
    parameter keeps grad None (guarded as None)."""

    def make_model():
        model = small_mlp()
        model[0].bias.requires_grad_(False)
        return model

    run_against_eager(make_model, OPTIMIZERS["adam"], mse, regression_batches(), expect_breaks=1, set_to_none=False)


def test_zero_grad_replaced_by_a_partial_on_the_instance():
    """``opt.zero_grad = functools.partial(...)``: an instance attribute is never bound, also
    on 3.13 where functools.partial has ``__get__``; the call is inlined (one break: backward)."""

    def make_opt(params):
        opt = dl.optim.Adam(params, lr=1e-2)
        opt.zero_grad = functools.partial(dl.optim.Optimizer.zero_grad, opt, set_to_none=True)
        return opt

    run_against_eager(small_mlp, make_opt, mse, regression_batches(), expect_breaks=1, set_to_none=False)


def test_lr_scheduler_inside_the_step():
    """scheduler.step() in the frame runs eagerly (a second break, after the optimizer's
    graph); the first new lr recompiles the optimizer's graph, which then reads the lr as a
    graph input (NOTE: [lifted floats]): the second new lr does not recompile."""
    before, after = run_against_eager(small_mlp, OPTIMIZERS["sgd_momentum"], cross_entropy, classification_batches(),
                                      make_scheduler=lambda opt: dl.optim.lr_scheduler.StepLR(opt, 8, gamma=0.5),
                                      expect_breaks=4)
    # backward() once, and scheduler.step() in each of the 3 translations of the code after
    # backward(): the first call, the one with momentum buffers, and the first new lr.
    failures = [f.reason.split(":")[0] for f in after.guard_failures[len(before.guard_failures):]]
    assert failures == ["optimizer.state[optimizer.param_groups[0]['params'][0]]",
                        "optimizer.param_groups[0]['lr']"], failures


TENSOR_LR_OPTIMIZERS = {
    "sgd_momentum": lambda params: dl.optim.SGD(params, lr=dl.tensor(0.05), momentum=0.9, weight_decay=1e-3),
    "adam": lambda params: dl.optim.Adam(params, lr=dl.tensor(1e-2)),
    "adamw": lambda params: dl.optim.AdamW(params, lr=dl.tensor(1e-2), weight_decay=0.1),
    "rmsprop_momentum": lambda params: dl.optim.RMSprop(params, lr=dl.tensor(1e-2), momentum=0.5),
    "adagrad": lambda params: dl.optim.Adagrad(params, lr=dl.tensor(0.1), lr_decay=1e-2),
}


@pytest.mark.parametrize("name", list(TENSOR_LR_OPTIMIZERS))
def test_a_tensor_lr_scheduled_inside_the_step_never_recompiles(name):
    """NOTE: [tensor learning rate]: the schedule writes into the lr tensor, which the
    compiled optimizer graph reads at run time, so the translations of the first calls
    serve every later lr (a float lr recompiles once, then is lifted: the test above)."""
    before, after = run_against_eager(small_mlp, TENSOR_LR_OPTIMIZERS[name], mse, regression_batches(), calls=12,
                                      make_scheduler=lambda opt: dl.optim.lr_scheduler.ExponentialLR(opt, 0.9))
    # the forward frame, the code after backward() on the first call and once the state exists,
    # the code after scheduler.step()'s break: never one per lr
    assert after.frames_compiled - before.frames_compiled <= 5
    assert all("'lr'" not in f.reason for f in after.guard_failures[len(before.guard_failures):])


def test_a_tensor_lr_scheduled_between_compiled_steps_never_recompiles():
    runs = []
    for _ in range(2):
        model = small_mlp()
        opt = TENSOR_LR_OPTIMIZERS["adamw"](model.parameters())
        runs.append((model, opt, dl.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10),
                     make_train_step(model, opt, mse)))
    (eager_model, eager_opt, eager_sched, eager_step), (model, opt, sched, step) = runs
    compiled = dl.compile(step)
    before = dl.stats()
    for call, (x, y) in enumerate(regression_batches(3) * 4):
        np.testing.assert_allclose(compiled(x, y).item(), eager_step(x, y).item(), rtol=1e-5, err_msg=f"call {call}")
        eager_sched.step()
        sched.step()
        assert_same_state(training_state(model, opt), training_state(eager_model, eager_opt), where=f"call {call}")
    after = dl.stats()
    assert_compiled(before, after, expect_breaks=1)
    assert after.frames_compiled - before.frames_compiled == 3  # forward, first optimizer call, with state
    assert float(opt.param_groups[0]["lr"]) != 1e-2


def test_fullgraph_names_the_backward_call():
    model = small_mlp()
    opt = dl.optim.SGD(model.parameters(), lr=0.1)
    step = dl.compile(make_train_step(model, opt, cross_entropy), fullgraph=True)
    (x, y), = classification_batches(1)
    with pytest.raises(dl.Unsupported) as info:
        step(x, y)
    message = str(info.value)
    source, first = inspect.getsourcelines(make_train_step)
    line = first + next(i for i, text in enumerate(source) if "loss.backward()" in text)
    assert message.startswith(BACKWARD_REASON) and message.endswith(f"{inspect.getsourcefile(make_train_step)}:{line}")


def test_autograd_flags_of_frame_tensors_are_guarded_constants():
    """x.requires_grad of an argument is traced (a guarded constant); after an in-place op
    with grad on (which gives x history) reading it breaks, and eager answers."""

    def flags(x, w):
        before = x.requires_grad, x.is_leaf, x.grad_fn is None
        y = x * 2
        x.add_(w)
        return before, y, x.requires_grad

    w = dl.ones(3, requires_grad=True)
    eager = flags(dl.zeros(3), w)
    before = dl.stats()
    compiled = dl.compile(flags)(dl.zeros(3), w)
    after = dl.stats()
    assert compiled[0] == eager[0] == (False, True, True) and compiled[2] is eager[2] is True
    assert np.array_equal(compiled[1].numpy(), eager[1].numpy())
    assert after.graph_count > before.graph_count and after.graph_breaks - before.graph_breaks == 1
    # The code after the break reads the history x now has: it runs eagerly.
    assert ["grad_fn" in f.reason for f in after.fallbacks[len(before.fallbacks):]] == [True]


def test_gradients_replaced_by_tensors_and_read_back():
    """p.grad = tensor is replayed after the graph; reading p.grad later in the frame sees it."""

    def make_step(model, opt):
        def train_step(x, y):
            loss = cross_entropy(model(x), y)
            loss.backward()
            for p in model.parameters():
                p.grad = p.grad * 0.5
            total = sum(p.grad.sum() for p in model.parameters())
            opt.step()
            opt.zero_grad()
            return loss, total
        return train_step

    eager_model, compiled_model = small_mlp(), small_mlp()
    eager = make_step(eager_model, dl.optim.SGD(eager_model.parameters(), lr=0.1))
    compiled = dl.compile(make_step(compiled_model, dl.optim.SGD(compiled_model.parameters(), lr=0.1)))
    before = dl.stats()
    for x, y in classification_batches(4):
        (le, te), (lc, tc) = eager(x, y), compiled(x, y)
        np.testing.assert_allclose(lc.detach().numpy(), le.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(tc.numpy(), te.numpy(), rtol=1e-5, atol=1e-6)
    for pe, pc in zip(eager_model.parameters(), compiled_model.parameters()):
        np.testing.assert_allclose(pc.detach().numpy(), pe.detach().numpy(), rtol=1e-5, atol=1e-6)
        assert pc.grad is None and pe.grad is None
    assert_compiled(before, dl.stats(), expect_breaks=1)
