"""Loss functions and modules: argument errors, legacy arguments, and compiling them.

Their values and gradients are compared with PyTorch's in tests/autograd/test_against_torch.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from dynamo_lite import nn


def logits():
    dl.manual_seed(0)
    return dl.randn(4, 3)


TARGET = dl.tensor([0, 2, 1, 2])


def test_bad_arguments_raise_torchs_errors():
    with pytest.raises(ValueError, match="^mean_ is not a valid value for reduction$"):
        F.cross_entropy(logits(), TARGET, reduction="mean_")
    with pytest.raises(ValueError, match=r"^Expected input batch_size \(4\) to match target batch_size \(3\)\.$"):
        F.cross_entropy(logits(), dl.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(logits(), TARGET, label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.nll_loss(logits(), TARGET.float())
    with pytest.raises(ValueError, match="Target size .* must be the same as input size"):
        F.binary_cross_entropy_with_logits(logits(), dl.ones(4))
    with pytest.raises(ValueError, match="Using a target size .* that is different to the input size"):
        F.binary_cross_entropy(logits().sigmoid(), dl.ones(4, 1))


def test_broadcasting_targets_warn_like_torch():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(dl.ones(3, 1), dl.ones(3))


def test_legacy_size_average_and_reduce():
    x, t = logits(), TARGET
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        summed = F.cross_entropy(x, t, size_average=False)
    assert np.isclose(summed.item(), F.cross_entropy(x, t, reduction="sum").item())
    with pytest.warns(UserWarning):
        loss = nn.MSELoss(reduce=False)
    assert loss.reduction == "none"


def test_loss_modules_hold_weights_as_buffers():
    weight = dl.tensor([1.0, 2.0, 0.5])
    loss = nn.CrossEntropyLoss(weight=weight, ignore_index=1, label_smoothing=0.1)
    assert dict(loss.named_buffers())["weight"] is weight
    assert np.isclose(loss(logits(), TARGET).item(),
                      F.cross_entropy(logits(), TARGET, weight, ignore_index=1, label_smoothing=0.1).item())
    assert "pos_weight" in dict(nn.BCEWithLogitsLoss(pos_weight=dl.ones(3)).named_buffers())


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_losses_compile_into_one_graph(backend):
    def losses(x, t, p):
        return (F.cross_entropy(x, t, label_smoothing=0.1), F.nll_loss(x.log_softmax(1), t, ignore_index=2),
                F.binary_cross_entropy_with_logits(x, p), F.mse_loss(x, p), F.l1_loss(x, p))

    dl.reset()
    x, p = logits(), dl.rand(4, 3)
    compiled = dl.compile(losses, backend=backend, fullgraph=True)
    with dl.no_grad():
        for got, expected in zip(compiled(x, TARGET, p), losses(x, TARGET, p)):
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
    assert dl.stats().graph_count == 1
    dl.reset()
