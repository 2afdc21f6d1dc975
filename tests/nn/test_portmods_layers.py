"""The random activations and dropouts of the second porting round (checked by their properties: torch's
random streams differ), the new layers' reprs and state, and a compiled training step using them."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from dynamo_lite import nn
from tests.helpers import assert_compiled, assert_equal_values

#: ``repr(module)`` and ``sorted(state_dict())`` as printed by PyTorch 2.13 for the same constructor calls.
TORCH_REPRS = [
    (lambda: nn.Threshold(0.1, 20.0), "Threshold(threshold=0.1, value=20.0)", []),
    (lambda: nn.Threshold(0.1, 20, inplace=True), "Threshold(threshold=0.1, value=20, inplace=True)", []),
    (lambda: nn.CELU(), "CELU(alpha=1.0)", []),
    (lambda: nn.CELU(2.0, inplace=True), "CELU(alpha=2.0, inplace=True)", []),
    (lambda: nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)", []),
    (lambda: nn.RReLU(0.1, 0.3, True), "RReLU(lower=0.1, upper=0.3, inplace=True)", []),
    (lambda: nn.Softmin(1), "Softmin(dim=1)", []),
    (lambda: nn.Softshrink(), "Softshrink(0.5)", []),
    (lambda: nn.Hardshrink(1.0), "Hardshrink(1.0)", []),
    (lambda: nn.Softmax2d(), "Softmax2d()", []),
    (lambda: nn.AlphaDropout(0.2), "AlphaDropout(p=0.2, inplace=False)", []),
    (lambda: nn.FeatureAlphaDropout(), "FeatureAlphaDropout(p=0.5, inplace=False)", []),
    (lambda: nn.Dropout1d(0.1), "Dropout1d(p=0.1, inplace=False)", []),
    (lambda: nn.Dropout3d(inplace=True), "Dropout3d(p=0.5, inplace=True)", []),
    (lambda: nn.MarginRankingLoss(0.5), "MarginRankingLoss()", []),
    (lambda: nn.TripletMarginLoss(), "TripletMarginLoss()", []),
    (lambda: nn.MultiMarginLoss(weight=dl.ones(3)), "MultiMarginLoss()", ["weight"]),
    (lambda: nn.MultiLabelSoftMarginLoss(weight=dl.ones(3)), "MultiLabelSoftMarginLoss()", ["weight"]),
    (lambda: nn.GaussianNLLLoss(), "GaussianNLLLoss()", []),
    (lambda: nn.PoissonNLLLoss(), "PoissonNLLLoss()", []),
    (lambda: nn.MaxPool1d(3, 2, 1, ceil_mode=True),
     "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)", []),
    (lambda: nn.AvgPool1d(3, 2, 1), "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))", []),
    (lambda: nn.AdaptiveAvgPool1d(4), "AdaptiveAvgPool1d(output_size=4)", []),
    (lambda: nn.AdaptiveMaxPool1d(4), "AdaptiveMaxPool1d(output_size=4)", []),
    (lambda: nn.ReflectionPad1d(2), "ReflectionPad1d((2, 2))", []),
    (lambda: nn.ReflectionPad2d((1, 2, 3, 4)), "ReflectionPad2d((1, 2, 3, 4))", []),
    (lambda: nn.ReplicationPad2d(1), "ReplicationPad2d((1, 1, 1, 1))", []),
    (lambda: nn.ConstantPad1d(2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)", []),
    (lambda: nn.ConstantPad2d((1, 0, 2, 0), 1), "ConstantPad2d(padding=(1, 0, 2, 0), value=1)", []),
    (lambda: nn.CircularPad2d(2), "CircularPad2d((2, 2, 2, 2))", []),
    (lambda: nn.Fold((4, 5), 2), "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)", []),
    (lambda: nn.Unfold(2, stride=2), "Unfold(kernel_size=2, dilation=1, padding=0, stride=2)", []),
    (lambda: nn.ChannelShuffle(2), "ChannelShuffle(groups=2)", []),
    (lambda: nn.LPPool1d(2, 3), "LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)", []),
    (lambda: nn.LPPool2d(1.5, 2, 1), "LPPool2d(norm_type=1.5, kernel_size=2, stride=1, ceil_mode=False)", []),
    (lambda: nn.MaxUnpool1d(2), "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))", []),
    (lambda: nn.MaxUnpool2d(2, 1, 1), "MaxUnpool2d(kernel_size=(2, 2), stride=(1, 1), padding=(1, 1))", []),
    (lambda: nn.LocalResponseNorm(3), "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)", []),
    (lambda: nn.Bilinear(2, 3, 4), "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)",
     ["bias", "weight"]),
    (lambda: nn.Bilinear(2, 3, 4, bias=False), "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=False)",
     ["weight"]),
    (lambda: nn.UpsamplingNearest2d(scale_factor=2), "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')", []),
    (lambda: nn.UpsamplingBilinear2d(size=(3, 4)), "UpsamplingBilinear2d(size=(3, 4), mode='bilinear')", []),
    (lambda: nn.ConvTranspose1d(2, 3, 3, stride=2), "ConvTranspose1d(2, 3, kernel_size=(3,), stride=(2,))",
     ["bias", "weight"]),
]


@pytest.mark.parametrize("make,text,keys", TORCH_REPRS, ids=[t for _, t, _ in TORCH_REPRS])
def test_repr_and_state_dict_match_torch(make, text, keys):
    module = make()
    assert repr(module) == text
    assert sorted(module.state_dict()) == keys


def test_rrelu_training_draws_slopes_in_range_and_backpropagates_them():
    x = dl.randn(64, 32, requires_grad=True)
    dl.manual_seed(3)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    out.sum().backward()
    values, inputs = out.detach().numpy(), x.detach().numpy()
    negative = inputs <= 0
    np.testing.assert_array_equal(values[~negative], inputs[~negative])
    slopes = values[negative] / inputs[negative]
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6 and slopes.std() > 0.03
    np.testing.assert_allclose(x.grad.numpy()[negative], slopes, rtol=1e-5)
    dl.manual_seed(3)
    assert_equal_values(F.rrelu(x.detach(), 0.1, 0.3, training=True), out.detach())


def test_rrelu_layer_uses_the_mean_slope_in_eval_and_random_slopes_in_training():
    layer = nn.RReLU(0.1, 0.3)
    x = -dl.ones(1000)
    assert_equal_values(layer.eval()(x), F.leaky_relu(x, 0.2))
    slopes = -layer.train()(x).numpy()
    assert len(np.unique(slopes)) > 100 and abs(slopes.mean() - 0.2) < 0.01


def test_gumbel_softmax_samples_the_categorical_distribution():
    probabilities = np.array([0.2, 0.3, 0.5])
    logits = dl.tensor(np.log(np.tile(probabilities, (20000, 1))).astype(np.float32))
    dl.manual_seed(0)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).numpy(), 1.0, rtol=1e-5)
    dl.manual_seed(0)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    assert set(np.unique(hard.numpy()).tolist()) == {0.0, 1.0}
    np.testing.assert_array_equal(hard.numpy().argmax(-1), soft.numpy().argmax(-1))  # same seed, same sample
    assert np.abs(hard.numpy().mean(0) - probabilities).max() < 0.015


def test_gumbel_softmax_hard_passes_the_soft_gradient_straight_through():
    logits = dl.randn(4, 5, requires_grad=True)
    weights = dl.randn(4, 5)
    dl.manual_seed(1)
    (F.gumbel_softmax(logits, hard=True, dim=1) * weights).sum().backward()
    hard_grad = logits.grad.numpy().copy()
    logits.grad = None
    dl.manual_seed(1)
    (F.gumbel_softmax(logits, dim=1) * weights).sum().backward()
    np.testing.assert_allclose(hard_grad, logits.grad.numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(logits, eps=1e-3)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_zero_mean_and_unit_variance(feature):
    dl.manual_seed(0)
    x = dl.randn(200, 64, 16)
    function = F.feature_alpha_dropout if feature else F.alpha_dropout
    out = function(x, 0.3, training=True).numpy()
    assert abs(out.mean()) < 0.03 and abs(out.std() - 1.0) < 0.03
    a = 1.0 / math.sqrt((1.7580993408473766 ** 2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(out, a * 1.7580993408473766 * (0.3 - 1), rtol=1e-6)
    assert 0.25 < dropped.mean() < 0.35
    if feature:  # whole channels
        assert set(dropped.mean(-1).ravel().tolist()) <= {0.0, 1.0}
    assert function(x, 0.3) is x and function(x, 0.0, training=True) is x


def test_channel_dropouts_drop_whole_channels_and_the_layers_follow_training():
    dl.manual_seed(0)
    out = F.dropout3d(dl.ones(4, 8, 2, 3, 3), 0.5).numpy().reshape(32, -1)
    assert set(np.unique(out).tolist()) == {0.0, 2.0} and all(len(set(row)) == 1 for row in out)
    for layer, x in ((nn.Dropout1d(0.5), dl.ones(2, 3, 4)), (nn.Dropout3d(0.5), dl.ones(2, 3, 1, 2, 2)),
                     (nn.AlphaDropout(0.5), dl.ones(2, 3)), (nn.FeatureAlphaDropout(0.5), dl.ones(2, 3, 4))):
        assert layer.eval()(x) is x
        assert not np.array_equal(layer.train()(x).numpy(), x.numpy())


class EmbeddingNet(nn.Module):
    """A small embedding model using several of the new layers, trained with two of the new losses."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.CELU(0.5), nn.AlphaDropout(0.1), nn.Linear(16, 16),
                                  nn.RReLU(), nn.Softshrink(0.05), nn.Linear(16, 4), nn.Hardshrink(0.01))
        self.triplet = nn.TripletMarginLoss(margin=0.5, swap=True)
        self.margin = nn.MultiMarginLoss(p=2)

    def forward(self, anchor, positive, negative, classes):
        a, p, n = self.body(anchor), self.body(positive), self.body(negative)
        return self.triplet(a, p, n) + self.margin(a, classes) + F.softmin(a, 1).mean() * 0.1


def _train_step(model, optimizer, seed, batch):
    dl.manual_seed(seed)
    optimizer.zero_grad()
    loss = model(*batch)
    loss.backward()
    optimizer.step()
    return loss.detach()


def test_compiled_training_step_with_the_new_layers_equals_eager():
    dl.manual_seed(0)
    eager = EmbeddingNet()
    compiled_model = copy.deepcopy(eager)
    batch = (dl.randn(8, 6), dl.randn(8, 6), dl.randn(8, 6), dl.randint(0, 4, (8,)))
    eager_opt = dl.optim.SGD(eager.parameters(), lr=0.1)
    compiled_opt = dl.optim.SGD(compiled_model.parameters(), lr=0.1)
    compiled = dl.compile(compiled_model, backend="numpy", fullgraph=True)
    before = dl.stats()
    for seed in (5, 6, 7):
        expected = _train_step(eager, eager_opt, seed, batch)
        assert_equal_values(_train_step(compiled, compiled_opt, seed, batch), expected)
    assert_compiled(before, dl.stats())
    for (name, p_eager), p_compiled in zip(eager.named_parameters(), compiled_model.parameters()):
        np.testing.assert_allclose(p_compiled.detach().numpy(), p_eager.detach().numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)


def test_bilinear_layer_initialises_in_torchs_bound_and_computes_with_its_parameters():
    layer = nn.Bilinear(4, 3, 5)
    assert tuple(layer.weight.shape) == (5, 4, 3) and tuple(layer.bias.shape) == (5,)
    assert float(layer.weight.abs().max()) <= 0.5 and float(layer.bias.abs().max()) <= 0.5  # 1/sqrt(in1_features)
    x1, x2 = dl.randn(2, 4), dl.randn(2, 3)
    expected = np.einsum("bi,oij,bj->bo", x1.numpy(), layer.weight.detach().numpy(), x2.numpy()) + layer.bias.detach().numpy()
    np.testing.assert_allclose(layer(x1, x2).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_conv_transpose1d_output_size_picks_the_output_padding():
    layer = nn.ConvTranspose1d(2, 3, 3, stride=3)
    x = dl.randn(1, 2, 4)
    assert tuple(layer(x).shape) == (1, 3, 12)
    assert tuple(layer(x, output_size=[14]).shape) == (1, 3, 14)
    with pytest.raises(ValueError, match="valid sizes range from"):
        layer(x, output_size=[15])


class SequenceNet(nn.Module):
    """A small sequence model over the new padding, pooling and channel layers."""

    def __init__(self):
        super().__init__()
        self.pad = nn.ReflectionPad1d(2)
        self.conv = nn.Conv1d(4, 8, 3)
        self.norm = nn.LocalResponseNorm(3)
        self.shuffle = nn.ChannelShuffle(2)
        self.pool = nn.MaxPool1d(2)
        self.up = nn.ConvTranspose1d(8, 4, 2, stride=2)
        self.replicate = nn.ReplicationPad1d((1, 0))
        self.average = nn.AvgPool1d(3, stride=1, padding=1)
        self.squeeze = nn.AdaptiveAvgPool1d(3)
        self.mix = nn.Bilinear(12, 12, 2)

    def forward(self, x):
        h = self.shuffle(self.norm(self.conv(self.pad(x)).relu()))
        h = self.average(self.replicate(self.up(self.pool(h)))[..., 1:])
        features = self.squeeze(h).flatten(1)
        return F.cross_entropy(self.mix(features, features), dl.tensor([0, 1, 1]))


def test_compiled_training_step_with_the_new_sequence_layers_equals_eager():
    dl.manual_seed(0)
    eager = SequenceNet()
    compiled_model = copy.deepcopy(eager)
    x = dl.randn(3, 4, 10)
    eager_opt = dl.optim.Adam(eager.parameters(), lr=0.01)
    compiled_opt = dl.optim.Adam(compiled_model.parameters(), lr=0.01)
    compiled = dl.compile(compiled_model, backend="numpy", fullgraph=True)
    before = dl.stats()
    for seed in (1, 2):
        expected = _train_step(eager, eager_opt, seed, (x,))
        assert_equal_values(_train_step(compiled, compiled_opt, seed, (x,)), expected)
    assert_compiled(before, dl.stats())
    for (name, p_eager), p_compiled in zip(eager.named_parameters(), compiled_model.parameters()):
        np.testing.assert_allclose(p_compiled.detach().numpy(), p_eager.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
