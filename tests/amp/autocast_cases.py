"""Calls whose output dtype under CPU autocast is recorded from torch (``fixtures/record_autocast.py``).

Each case takes the library (``torch`` or ``dynamo_lite``) and float32 inputs made by ``inputs``;
the tests check which dtype each output has inside ``autocast("cpu")`` (bfloat16 and float16),
with those inputs and with ``lowered`` ones (what an op meets after a matmul under autocast),
and that the values agree with the same computation done by hand with explicit casts.
"""
from __future__ import annotations

import numpy as np


def inputs(t):
    rng = np.random.default_rng(5)

    def make(*shape):
        return t.tensor(rng.normal(size=shape).astype(np.float32).tolist())

    return {"a": make(4, 5), "b": make(5, 3), "c": make(4, 3), "batch": make(2, 4, 5), "batch2": make(2, 5, 3),
            "img": make(2, 3, 6, 6), "kernel": make(4, 3, 3, 3), "w": make(3, 5), "bias": make(3), "x": make(4, 3),
            "target": t.tensor([0, 2, 1, 2]), "prob": t.tensor(rng.uniform(0.1, 0.9, size=(4, 3)).astype(np.float32).tolist())}


def lowered(t, v):
    """The inputs with ``x`` and ``c`` replaced by matmul results, which autocast makes low precision."""
    return dict(v, x=t.mm(v["a"], v["b"]), c=t.mm(v["a"], v["b"]) * 0.5)


CASES = {
    "mm": lambda t, v: t.mm(v["a"], v["b"]),
    "matmul": lambda t, v: t.matmul(v["a"], v["b"]),
    "matmul_operator": lambda t, v: v["a"] @ v["b"],
    "bmm": lambda t, v: t.bmm(v["batch"], v["batch2"]),
    "baddbmm": lambda t, v: t.baddbmm(t.zeros(2, 4, 3), v["batch"], v["batch2"]),
    "addmm": lambda t, v: t.addmm(v["c"], v["a"], v["b"]),
    "linear": lambda t, v: t.nn.functional.linear(v["a"], v["w"], v["bias"]),
    "linear_module": lambda t, v: _linear_module(t, v),
    "conv2d": lambda t, v: t.nn.functional.conv2d(v["img"], v["kernel"]),
    "conv_transpose2d": lambda t, v: t.nn.functional.conv_transpose2d(v["img"], v["kernel"].transpose(0, 1)),
    "softmax": lambda t, v: t.softmax(v["x"], -1),
    "log_softmax": lambda t, v: t.log_softmax(v["x"], -1),
    "layer_norm": lambda t, v: t.nn.functional.layer_norm(v["x"], (3,)),
    "relu": lambda t, v: t.relu(v["x"]),
    "exp": lambda t, v: t.exp(v["x"]),
    "sum": lambda t, v: v["x"].sum(),
    "add_mixed": lambda t, v: t.mm(v["a"], v["b"]) + v["c"],
    "cat_mixed": lambda t, v: t.cat([t.mm(v["a"], v["b"]), v["c"]]),
    "stack_mixed": lambda t, v: t.stack([t.mm(v["a"], v["b"]), v["c"]]),
    "mse_loss": lambda t, v: t.nn.functional.mse_loss(v["x"], v["c"]),
    "l1_loss": lambda t, v: t.nn.functional.l1_loss(v["x"], v["c"]),
    "smooth_l1_loss": lambda t, v: t.nn.functional.smooth_l1_loss(v["x"], v["c"]),
    "huber_loss": lambda t, v: t.nn.functional.huber_loss(v["x"], v["c"]),
    "cross_entropy": lambda t, v: t.nn.functional.cross_entropy(v["x"], v["target"]),
    "nll_loss": lambda t, v: t.nn.functional.nll_loss(t.log_softmax(v["x"], -1), v["target"]),
    "bce": lambda t, v: t.nn.functional.binary_cross_entropy(v["prob"], v["prob"].flip(0)),
    "bce_with_logits": lambda t, v: t.nn.functional.binary_cross_entropy_with_logits(v["x"], v["prob"]),
    "kl_div": lambda t, v: t.nn.functional.kl_div(t.log_softmax(v["x"], -1), v["prob"], reduction="batchmean"),
    "prod": lambda t, v: v["x"].prod(),
    "cdist": lambda t, v: t.cdist(v["x"], v["c"]),
    "linalg_inv": lambda t, v: t.linalg.inv(t.mm(v["a"], v["a"].T) + t.eye(4)),
    "mm_of_lowered": lambda t, v: t.mm(t.mm(v["a"], v["b"]), v["w"]),
    "mm_float64": lambda t, v: t.mm(v["a"].double(), v["b"].double()),
    "mm_int": lambda t, v: t.mm(t.ones(2, 2, dtype=t.long), t.ones(2, 2, dtype=t.long)),
}


def _linear_module(t, v):
    layer = t.nn.Linear(5, 3)
    with t.no_grad():
        layer.weight.copy_(v["w"])
        layer.bias.copy_(v["bias"])
    return layer(v["a"])
