"""``dynamo-lite demo --train --logdir DIR``: loss curves of both runs and both models' graphs for TensorBoard."""
import re

import numpy as np

from dynamo_lite import cli
from dynamo_lite.demo_train import CURVE_RTOL

from .conftest import accumulate, require_tensorboard

require_tensorboard()


def test_demo_train_logs_curves_and_graphs(tmp_path, capsys):
    logdir = tmp_path / "runs" / "demo"
    assert cli.main(["demo", "--train", "--steps", "4", "--backend", "eager", "--logdir", str(logdir)]) == 0
    out = capsys.readouterr().out
    assert f"tensorboard --logdir {tmp_path / 'runs'}" in out
    eager, compiled = accumulate(logdir / "eager"), accumulate(logdir / "compiled")
    for task in ("gpt", "small_cnn"):
        losses = {}
        for name, run in (("eager", eager), ("compiled", compiled)):
            events = run.Scalars(f"{task}/loss")
            assert [e.step for e in events] == [0, 1, 2, 3]
            assert len(run.Scalars(f"{task}/step_ms")) == 4
            losses[name] = [e.value for e in events]
        assert np.allclose(losses["compiled"], losses["eager"], rtol=CURVE_RTOL)
        # The logged curve is the one the demo prints: "loss      eager    2.312 -> 2.471  ...".
        section = out[out.index(f"{task}: "):]
        for name in ("eager", "compiled"):
            printed = re.search(rf"loss +{name} +([\d.]+) -> ([\d.]+)", section).groups()
            assert printed == (f"{losses[name][0]:.3f}", f"{losses[name][-1]:.3f}")
    gpt = {n.name: n.op for n in accumulate(logdir / "graph_gpt").Graph().node}
    assert {"input/idx", "input/targets"} <= set(gpt), sorted(gpt)[:20]
    assert {"embedding", "layer_norm", "linear", "softmax", "log_softmax"} <= set(gpt.values()), set(gpt.values())
    attention = "GPT/ModuleDict[transformer]/ModuleList[h]/GPTBlock[1]/CausalSelfAttention[attn]/"
    assert gpt[attention + "Linear[c_attn]/weight"] == "Parameter"
    assert any(name.startswith(attention) and op == "softmax" for name, op in gpt.items())
    cnn = {n.name: n.op for n in accumulate(logdir / "graph_small_cnn").Graph().node}
    convs = [name for name, op in cnn.items() if op == "conv2d"]
    assert len(convs) == 2 and all(name.startswith("SmallCNN/") for name in convs), sorted(cnn)
