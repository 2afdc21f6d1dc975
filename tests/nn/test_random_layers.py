"""Layers that draw random numbers while training: Dropout2d zeroes whole channels, recurrent
layers apply dropout between layers only, and compiled training steps draw the same masks."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from tests.helpers import assert_equal_values


def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    dl.manual_seed(0)
    out = F.dropout2d(dl.ones(8, 16, 3, 3), p=0.25).numpy()
    planes = out.reshape(8 * 16, 9)
    assert set(np.unique(planes).tolist()) <= {0.0, float(np.float32(1.0 / 0.75))}
    assert all(len(set(plane)) == 1 for plane in planes)  # a channel is kept or dropped whole
    assert 0 < (planes[:, 0] == 0).sum() < len(planes)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout2d(dl.ones(1, 2, 2, 2), 1.5)


def test_lstm_dropout_acts_between_layers_only_in_training():
    dl.manual_seed(0)
    lstm = dl.nn.LSTM(4, 5, num_layers=2, dropout=0.5)
    x = dl.randn(6, 2, 4)
    lstm.eval()
    assert_equal_values(lstm(x), lstm(x))  # deterministic in eval mode
    lstm.train()
    dl.manual_seed(1)
    first = lstm(x)[0]
    dl.manual_seed(2)
    second = lstm(x)[0]
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    single = dl.nn.LSTM(4, 5, num_layers=1, dropout=0.0).train()
    assert_equal_values(single(x), single(x))  # no dropout after the last layer


def test_compiled_training_dropout_draws_the_same_masks(backend):
    dl.manual_seed(0)
    model = dl.nn.Sequential(dl.nn.Conv2d(3, 4, 3), dl.nn.Dropout2d(0.3), dl.nn.ReLU()).train()
    x = dl.randn(2, 3, 6, 6)
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    for seed in (5, 6):
        dl.manual_seed(seed)
        expected = model(x)
        dl.manual_seed(seed)
        assert_equal_values(compiled(x), expected)
    assert dl.stats().graph_count == 1 and dl.stats().cache_hits == 1
