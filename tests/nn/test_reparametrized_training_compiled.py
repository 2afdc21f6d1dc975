"""weight_norm, spectral_norm and parametrizations in compiled training: with an optimizer step between
calls, the compiled model is one graph, never recompiles across 20 calls, and matches eager step by step."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.nn.utils import parametrize, parametrizations, weight_hooks


class TemporalBlock(nn.Module):
    """A TCN block: two dilated causal convolutions with weight norm and a residual."""

    def __init__(self, wrap):
        super().__init__()
        self.conv1 = wrap(nn.Conv1d(3, 3, 3, padding=2, dilation=1))
        self.conv2 = wrap(nn.Conv1d(3, 3, 3, padding=4, dilation=2))

    def forward(self, x):
        h = self.conv1(x)[:, :, :-2].relu()
        h = self.conv2(h)[:, :, :-4].relu()
        return (h + x).relu()


class Discriminator(nn.Module):
    """A GAN discriminator with spectral-normalised layers."""

    def __init__(self, wrap):
        super().__init__()
        self.body = nn.Sequential(wrap(nn.Linear(6, 8)), nn.LeakyReLU(0.2), wrap(nn.Linear(8, 1)))

    def forward(self, x):
        return self.body(x)


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(-1, -2)


class SymmetricLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(5, 5)
        parametrize.register_parametrization(self.linear, "weight", Symmetric())

    def forward(self, x):
        return self.linear(x).tanh()


MODELS = {
    "tcn_weight_norm_hook": (lambda: TemporalBlock(weight_hooks.weight_norm), (2, 3, 10)),
    "tcn_weight_norm_parametrization": (lambda: TemporalBlock(parametrizations.weight_norm), (2, 3, 10)),
    "gan_spectral_norm_hook": (lambda: Discriminator(weight_hooks.spectral_norm), (4, 6)),
    "gan_spectral_norm_parametrization": (lambda: Discriminator(parametrizations.spectral_norm), (4, 6)),
    "register_parametrization": (SymmetricLinear, (3, 5)),
}


@pytest.mark.filterwarnings("ignore:.*weight_norm. is deprecated:FutureWarning")
@pytest.mark.parametrize("name", list(MODELS))
def test_one_graph_no_recompile_over_20_training_steps(name):
    build, shape = MODELS[name]
    dl.manual_seed(0)
    eager = build()
    dl.manual_seed(0)  # the same model again (reparametrized modules refuse deepcopy, as torch's do)
    compiled_model = build()
    compiled = dl.compile(compiled_model, backend="numpy")
    opt_e = dl.optim.SGD(eager.parameters(), lr=0.05)
    opt_c = dl.optim.SGD(compiled_model.parameters(), lr=0.05)
    before = None
    for step in range(20):
        dl.manual_seed(step)
        x = dl.randn(*shape)
        losses = []
        for model, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4, atol=1e-6, err_msg=f"step {step}")
        if step == 0:
            before = dl.stats()
    for (key, p_e), p_c in zip(eager.state_dict().items(), compiled_model.state_dict().values()):
        np.testing.assert_allclose(p_c.numpy(), p_e.numpy(), rtol=1e-4, atol=1e-6, err_msg=key)
    stats = dl.stats()
    assert not stats.fallbacks, stats.fallbacks
    assert stats.recompiles == before.recompiles == 0, stats.guard_failures
    assert stats.cache_misses == before.cache_misses, stats  # steps 1..19 all hit the cache
    assert stats.graph_count == 1 and stats.graph_breaks == 0, stats
