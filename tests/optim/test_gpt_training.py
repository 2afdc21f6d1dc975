"""A nanoGPT-shaped model trained 50 steps with AdamW (decay / no-decay groups) and clip_grad_norm_,
fed by a DataLoader with two worker processes: its loss curve equals PyTorch's.

The fixture fixtures/gpt_training.json was made by fixtures/record_gpt_training.py (PyTorch
2.13): dynamo_lite made the initial weights and the batches (num_workers=0), torch trained a
functional copy of the model on them and stored its losses and gradient norms.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

import dynamo_lite as dl

from . import gpt_case

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "gpt_training.json").read_text())


def test_gpt_trained_from_a_two_worker_dataloader_follows_torch_loss_curve():
    model = gpt_case.make_model()
    named = list(model.named_parameters())
    initial = {name: float(np.abs(p.detach().numpy()).sum()) for name, p in named}
    np.testing.assert_allclose([initial[n] for n in sorted(initial)],
                               [FIXTURE["initial_abs_sums"][n] for n in sorted(initial)], rtol=1e-6,
                               err_msg="the model's initial weights changed since the fixture was recorded")
    params = dict(named)
    decay, no_decay = gpt_case.group_names(named)
    optimizer = dl.optim.AdamW([{"params": [params[n] for n in decay], "weight_decay": gpt_case.WEIGHT_DECAY},
                                {"params": [params[n] for n in no_decay], "weight_decay": 0.0}],
                               lr=gpt_case.LR, betas=gpt_case.BETAS)
    loader = gpt_case.make_loader(num_workers=2)
    losses, norms = [], []
    for x, y in gpt_case.batches(loader):
        optimizer.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        norms.append(float(dl.nn.utils.clip_grad_norm_(model.parameters(), gpt_case.CLIP)))
        optimizer.step()
        losses.append(loss.item())
    assert len(losses) == gpt_case.STEPS and losses[-1] < losses[0] - 0.2  # it learns
    np.testing.assert_allclose(losses, FIXTURE["losses"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(norms, FIXTURE["grad_norms"], rtol=1e-4)
