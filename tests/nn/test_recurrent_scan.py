"""nn.RNN / nn.LSTM / nn.GRU compile once for every sequence length (their time loop is one scan).

Eager is the oracle here (its answers against PyTorch's are checked in test_torch_layers and
test_packed_sequence): compiled results, final states and gradients must equal it over a sweep
of lengths, with at most two frames compiled (the first, static length, then one symbolic).
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.graph.scan import is_scan
from tests.helpers import assert_compiled, assert_equal_values

SWEEP = [5, 9, 17, 33, 12, 7, 64, 3, 21, 40, 11, 6, 50]

CONFIGS = {
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "lstm_batch_first": ("LSTM", {"batch_first": True}),
    "gru_bidirectional_2layers": ("GRU", {"num_layers": 2, "bidirectional": True}),
    "lstm_bidirectional_2layers_batch_first": ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    "rnn_no_bias": ("RNN", {"bias": False}),
}


def _layer(name):
    cls, kwargs = CONFIGS[name]
    dl.manual_seed(0)
    return getattr(dl.nn, cls)(4, 5, **kwargs), cls, kwargs


def _inputs(cls, kwargs, T, with_state, batch=3):
    x = dl.randn(batch, T, 4) if kwargs.get("batch_first") else dl.randn(T, batch, 4)
    if not with_state:
        return (x,)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h = dl.randn(layers, batch, 5)
    return (x, (h, dl.randn(layers, batch, 5))) if cls == "LSTM" else (x, h)


def _flat(value):
    if isinstance(value, dl.Tensor):
        return [value]
    return [t for v in value for t in _flat(v)]


def test_ported_char_gru_sweep_of_13_lengths_compiles_two_frames():
    from tests.models.porting import port

    module = port("char_gru")
    dl.manual_seed(0)
    model = module.build()
    compiled = dl.compile(model, backend="eager")
    before = dl.stats()
    with dl.no_grad():
        for T in SWEEP:
            chars = dl.randint(0, 30, (2, T))
            assert_equal_values(compiled(chars, model.init_hidden(2)), model(chars, model.init_hidden(2)),
                                rtol=1e-4, atol=1e-5)
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
    assert after.graph_count - before.graph_count <= 2


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "given_state"])
@pytest.mark.parametrize("name", CONFIGS)
def test_layer_over_lengths_equals_eager_with_gradients(name, with_state):
    layer, cls, kwargs = _layer(name)
    compiled = dl.compile(layer, backend="eager")
    before = dl.stats()
    for T in (5, 9, 3, 12):
        args = _inputs(cls, kwargs, T, with_state)
        leaves = [t.requires_grad_() for t in _flat(args)]
        expected = _flat(layer(*args))
        sum(e.square().sum() for e in expected).backward()
        wanted = [t.grad.clone() for t in leaves] + [p.grad.clone() for p in layer.parameters()]
        for t in leaves:
            t.grad = None
        layer.zero_grad()
        actual = _flat(compiled(*args))
        assert_equal_values(tuple(actual), tuple(expected), rtol=1e-5, atol=1e-6)
        sum(a.square().sum() for a in actual).backward()
        got = [t.grad for t in leaves] + [p.grad for p in layer.parameters()]
        for g, w in zip(got, wanted):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
        layer.zero_grad()
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_one_scan_per_layer_and_direction_serves_every_length(cls):
    layer = getattr(dl.nn, cls)(4, 5, num_layers=2, bidirectional=True)
    counts = []
    with dl.no_grad():
        for T in (4, 11):
            out = dl.explain(layer, dynamic=True)(dl.randn(T, 2, 4))
            assert out.graph_count == 1 and out.graph_break_count == 0
            assert sum(is_scan(n) for n in out.graphs[0].graph.nodes) == 4
            counts.append(out.ops_per_graph)
    assert counts[0] == counts[1]


def test_unbatched_input_sweep_on_numpy_equals_eager():
    dl.manual_seed(2)
    layer = dl.nn.GRU(4, 5, num_layers=2)
    compiled = dl.compile(layer, backend="numpy")
    before = dl.stats()
    with dl.no_grad():
        for T in (6, 2, 13):
            x = dl.randn(T, 4)
            assert_equal_values(compiled(x), layer(x), rtol=1e-5, atol=1e-6)
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
