"""Optimizer base behaviour: param groups, zero_grad, state_dict layout, validation, no_grad."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from dynamo_lite import nn, optim


def params(*shapes):
    return [nn.Parameter(dl.ones(shape)) for shape in shapes]


def test_state_dict_layout_numbers_parameters_across_groups():
    a, b, c = params(2, 3, 4)
    opt = optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    for p in (a, b, c):
        p.grad = dl.ones(p.shape)
    opt.step()
    saved = opt.state_dict()
    assert [g["params"] for g in saved["param_groups"]] == [[0, 1], [2]]
    assert saved["param_groups"][1]["lr"] == 0.5 and saved["param_groups"][0]["lr"] == 0.1
    assert set(saved["param_groups"][0]) == {"params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
                                             "maximize", "foreach", "differentiable", "fused"}
    assert sorted(saved["state"]) == [0, 1, 2]
    assert saved["state"][2]["momentum_buffer"] is opt.state[c]["momentum_buffer"]


def test_parameters_without_gradient_get_no_state_and_do_not_move():
    a, b = params(2, 2)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = dl.ones(2)
    opt.step()
    assert list(opt.state_dict()["state"]) == [0]
    assert b.tolist() == [1.0, 1.0] and a.tolist() != [1.0, 1.0]
    assert opt.state[a]["step"].item() == 1.0


def test_zero_grad_sets_none_or_zeroes():
    (a,) = params(3)
    opt = optim.SGD([a], lr=0.1)
    a.grad = dl.ones(3)
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_step_records_no_history_and_closure_runs_with_grad():
    (a,) = params(3)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with dl.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 3.0 and a.grad_fn is None and a.is_leaf
    assert a.tolist() == pytest.approx([0.8, 0.8, 0.8])


def test_add_param_group_and_errors_match_torch():
    a, b = params(2, 2)
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["betas"] == (0.9, 0.999) and opt.param_groups[1]["lr"] == 0.01
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got dynamo_lite"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.AdamW([a], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.1"):
        optim.RMSprop([a], weight_decay=-0.1)
    with pytest.raises(ValueError, match="Invalid lr_decay value: -1"):
        optim.Adagrad([a], lr_decay=-1)


def test_load_state_dict_checks_group_sizes_and_casts_state():
    a, b = params(2, 2)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = dl.ones(2), dl.ones(2)
    opt.step()
    saved = opt.state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.Adam([a], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [a]}, {"params": [b]}]).load_state_dict(saved)
    c, d = [nn.Parameter(dl.ones(2, dtype=dl.float64)) for _ in range(2)]
    fresh = optim.Adam([c, d], lr=0.5)
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == 0.1
    assert fresh.param_groups[0]["params"][0] is c
    assert fresh.state[c]["exp_avg"].dtype == dl.float64 and fresh.state[c]["step"].dtype == dl.float32
    assert fresh.state[c]["exp_avg"] is not opt.state[a]["exp_avg"]


def test_clip_grad_value_and_nonfinite_norm():
    a, b = params(3, 2)
    a.grad = dl.tensor([-2.0, 0.1, 3.0])
    b.grad = dl.tensor([float("inf"), 0.0])
    nn.utils.clip_grad_value_([a], 0.5)
    assert a.grad.tolist() == pytest.approx([-0.5, 0.1, 0.5])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        nn.utils.clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
