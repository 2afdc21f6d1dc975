"""Module hooks that are objects with ``__call__`` (weight_norm's and spectral_norm's
pre-hooks) and parametrizations are inlined: a model using them compiles into one graph,
never recompiles across calls, and its outputs and gradients equal eager's."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn as nn
from dynamo_lite.nn.utils import parametrizations


class Chomp(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def forward(self, x):
        return x[:, :, :-self.size]


class TemporalBlock(nn.Module):
    """A TCN residual block, as TCN implementations write it (weight-normed dilated convs)."""

    def __init__(self, cin: int, cout: int, dilation: int, norm):
        super().__init__()
        pad = 2 * dilation
        self.conv1 = norm(nn.Conv1d(cin, cout, 3, padding=pad, dilation=dilation))
        self.chomp1 = Chomp(pad)
        self.conv2 = norm(nn.Conv1d(cout, cout, 3, padding=pad, dilation=dilation))
        self.chomp2 = Chomp(pad)
        self.net = nn.Sequential(self.conv1, self.chomp1, nn.ReLU(), self.conv2, self.chomp2, nn.ReLU())
        self.downsample = nn.Conv1d(cin, cout, 1) if cin != cout else None

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return dl.relu(out + res)


class TCN(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.blocks = nn.Sequential(TemporalBlock(3, 6, 1, norm), TemporalBlock(6, 6, 2, norm))
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.blocks(x)[:, :, -1])


def _old_weight_norm(module):
    with pytest.warns(FutureWarning):
        return nn.utils.weight_norm(module)


NORMS = {
    "weight_norm": _old_weight_norm,
    "spectral_norm": nn.utils.spectral_norm,
    "parametrizations.weight_norm": parametrizations.weight_norm,
}


def _grads(model) -> dict:
    return {name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("norm", list(NORMS))
def test_normed_tcn_is_one_graph_without_recompiles(backend, norm):
    dl.manual_seed(0)
    model = TCN(NORMS[norm])
    dl.manual_seed(0)  # the same weights (these modules cannot be deep-copied, as in torch)
    reference = TCN(NORMS[norm])
    compiled = dl.compile(model, backend=backend)
    before = dl.stats()
    for step in range(20):
        x = dl.randn(2, 3, 12)
        out, expected = compiled(x), reference(x)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
        out.pow(2).sum().backward()
        expected.pow(2).sum().backward()
    got, want = _grads(model), _grads(reference)
    assert got.keys() == want.keys() and got
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)
    after = dl.stats()
    assert not after.fallbacks[len(before.fallbacks):], after.fallbacks
    assert after.graph_breaks == before.graph_breaks, "the hooks broke the graph"
    assert after.recompiles == before.recompiles, "calls after the first recompiled"
    assert after.cache_misses - before.cache_misses == 1
    report = dl.explain(model, backend=backend)(dl.randn(2, 3, 12))
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)


class Doubler:
    """A plain functor: calling the object runs its Python ``__call__``."""

    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def test_user_functor_is_inlined(backend):
    from tests.helpers import assert_same

    def f(x, g):
        return g(x) + 1

    assert_same(f, dl.ones(3), Doubler(3), backend=backend)


def test_setattr_builtin_is_traced(backend):
    from tests.frames.differential import assert_transparent

    class Box:
        pass

    def f(x, box):
        setattr(box, "y", x * 2)
        return box.y + 1

    assert_transparent(f, lambda c: (dl.arange(3.0) + c, Box()), backend, graphs=1, breaks=0)
