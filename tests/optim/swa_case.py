"""The SWA scenario shared by fixtures/record_swa.py (torch) and test_swa_utils.py (dynamo_lite).

``run(lib, arrays)`` takes the library module (torch or dynamo_lite), builds the same small
model from ``arrays`` (NumPy data drawn by the recorder and stored in the fixture), and
returns every value the test compares, as nested lists.
"""
from __future__ import annotations

import numpy as np

SNAPSHOTS = 4
AVERAGERS = {
    # name -> (AveragedModel keyword arguments as source text over `swa`, use_buffers)
    "swa": ("{}", False),
    "swa_buffers": ("{'use_buffers': True}", True),
    "ema_multi": ("{'multi_avg_fn': swa.get_ema_multi_avg_fn(0.9), 'use_buffers': True}", True),
    "swa_multi": ("{'multi_avg_fn': swa.get_swa_multi_avg_fn()}", False),
    "ema_avg_fn": ("{'avg_fn': swa.get_ema_avg_fn(0.8)}", False),
}
SCHEDULES = {"cos_5": (5, "cos"), "linear_3": (3, "linear"), "cos_0": (0, "cos")}


def draw(rng) -> dict:
    arrays = {"x_bn": rng.standard_normal((6, 8, 4)).astype(np.float32)}
    for k in range(SNAPSHOTS):
        arrays[f"w1_{k}"] = rng.standard_normal((3, 4)).astype(np.float32)
        arrays[f"b1_{k}"] = rng.standard_normal(3).astype(np.float32)
        arrays[f"w2_{k}"] = rng.standard_normal((2, 3)).astype(np.float32)
        arrays[f"g_{k}"] = rng.uniform(0.5, 1.5, 3).astype(np.float32)
        arrays[f"x_{k}"] = (rng.standard_normal((8, 4)) * (k + 1)).astype(np.float32)
    return arrays


def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2, bias=False))


def _load(lib, model, arrays, k) -> None:
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(arrays[f"w1_{k}"]))
        model[0].bias.copy_(lib.tensor(arrays[f"b1_{k}"]))
        model[1].weight.copy_(lib.tensor(arrays[f"g_{k}"]))
        model[3].weight.copy_(lib.tensor(arrays[f"w2_{k}"]))
    model.train()
    model(lib.tensor(arrays[f"x_{k}"]))  # moves the BatchNorm running statistics


def _state(module) -> dict:
    return {key: value.detach().tolist() for key, value in module.state_dict().items()}


def run(lib, arrays) -> dict:
    swa = lib.optim.swa_utils
    model = _model(lib)
    _load(lib, model, arrays, 0)
    averagers = {name: swa.AveragedModel(model, **eval(kwargs, {"swa": swa})) for name, (kwargs, _) in AVERAGERS.items()}
    out = {}
    for k in range(SNAPSHOTS):
        if k:
            _load(lib, model, arrays, k)
        for name, averager in averagers.items():
            averager.update_parameters(model)
            out[f"{name}_{k}"] = _state(averager)
    loader = [(lib.tensor(x), 0) for x in arrays["x_bn"]]
    swa.update_bn(loader, averagers["swa"])
    out["swa_after_update_bn"] = _state(averagers["swa"])
    averagers["swa"].eval()
    out["swa_eval_output"] = averagers["swa"](lib.tensor(arrays["x_0"])).detach().tolist()
    for name, (anneal_epochs, strategy) in SCHEDULES.items():
        params = [lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)]
        optimizer = lib.optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.05}], lr=0.1)
        scheduler = swa.SWALR(optimizer, swa_lr=[0.01, 0.02], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
        lrs = [scheduler.get_last_lr()]
        for _ in range(10):
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
        out[f"swalr_{name}"] = lrs
    return out
