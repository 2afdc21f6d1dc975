"""GradScaler sequences written once against the torch API (``t`` is torch or dynamo_lite): the
recorded scale, growth tracker, parameters and state_dict after each iteration must agree."""
from __future__ import annotations

import numpy as np

#: iterations whose gradients get an inf (0-based); growth_interval=2 lets the scale grow in between.
INF_STEPS = (2, 5, 6)
STEPS = 9


def training_sequence(t):
    """A linear model trained with SGD under a GradScaler("cpu"); returns one record per iteration."""
    weight = t.nn.Parameter(t.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3).astype(np.float32).tolist()))
    bias = t.nn.Parameter(t.tensor([0.1, -0.2]))
    optimizer = t.optim.SGD([weight, bias], lr=0.1, momentum=0.9)
    scaler = t.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_factor=4.0, backoff_factor=0.25, growth_interval=2)
    x = t.tensor(np.linspace(0.0, 1.0, 12).reshape(4, 3).astype(np.float32).tolist())
    records = []
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = ((x @ weight.T + bias) ** 2).mean()
        scaler.scale(loss).backward()
        if step in INF_STEPS:
            with t.no_grad():
                weight.grad[0, 1] = float("inf") if step != 5 else float("nan")
        if step == 4:
            scaler.unscale_(optimizer)  # explicit unscale (as before clipping), then step
            t.nn.utils.clip_grad_norm_([weight, bias], 0.5)
        scaler.step(optimizer)
        scaler.update()
        records.append({"scale": scaler.get_scale(), "tracker": scaler._get_growth_tracker(),
                        "weight": weight.detach().numpy().copy(), "bias": bias.detach().numpy().copy()})
    return records, scaler.state_dict()


def error_calls(t):
    """name -> a call that raises."""
    def fresh():
        p = t.nn.Parameter(t.ones(2))
        opt = t.optim.SGD([p], lr=0.1)
        scaler = t.amp.GradScaler("cpu")
        scaler.scale((p * 2).sum()).backward()
        return scaler, opt

    def unscale_twice():
        scaler, opt = fresh()
        scaler.unscale_(opt)
        scaler.unscale_(opt)

    def unscale_after_step():
        scaler, opt = fresh()
        scaler.step(opt)
        scaler.unscale_(opt)

    def step_twice():
        scaler, opt = fresh()
        scaler.step(opt)
        scaler.step(opt)

    def update_before_scale():
        t.amp.GradScaler("cpu").update()

    def load_empty():
        t.amp.GradScaler("cpu").load_state_dict({})

    def closure():
        scaler, opt = fresh()
        scaler.step(opt, closure=lambda: None)

    def growth_factor_too_small():
        t.amp.GradScaler("cpu", growth_factor=1.0)

    return {"unscale_twice": unscale_twice, "unscale_after_step": unscale_after_step, "step_twice": step_twice,
            "update_before_scale": update_before_scale, "load_empty": load_empty, "closure": closure,
            "growth_factor_too_small": growth_factor_too_small}
