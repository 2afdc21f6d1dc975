"""The custom LSTMs of custom_lstms.py (TorchScript-style code) compile and match dl.nn.LSTM."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled

from . import custom_lstms as c

SELF_TESTS = [
    (c.test_script_rnn_layer, (5, 2, 3, 7)),
    (c.test_script_stacked_rnn, (5, 2, 3, 7, 4)),
    (c.test_script_stacked_bidir_rnn, (5, 2, 3, 7, 4)),
    (c.test_script_stacked_lstm_dropout, (5, 2, 3, 7, 4)),
    (c.test_script_stacked_lnlstm, (5, 2, 3, 7, 4)),
]


@pytest.mark.parametrize("self_test,args", SELF_TESTS, ids=[t.__name__ for t, _ in SELF_TESTS])
def test_self_test_passes_compiled(self_test, args):
    dl.manual_seed(0)
    before = dl.stats()
    self_test(*args)
    assert_compiled(before, dl.stats())


def test_decomposed_layernorm_cell_matches_library_layernorm():
    dl.manual_seed(1)
    x = dl.randn(3, 8)
    ln = c.LayerNorm(8)
    expected = dl.nn.functional.layer_norm(x, (8,), ln.weight, ln.bias, eps=0.0)
    before = dl.stats()
    out = ln(x)
    assert_compiled(before, dl.stats())
    assert (out - expected).abs().max() < 1e-5


def test_layer_graph_for_prints_the_graph_that_ran():
    dl.manual_seed(2)
    rnn = c.LSTMLayer(c.LSTMCell, 3, 7)
    x, state = dl.randn(4, 2, 3), (dl.randn(2, 7), dl.randn(2, 7))
    graph = rnn.graph_for(x, state)
    assert len(graph.graphs) == 1 and graph.op_count > 0
    text = str(graph)
    assert "sigmoid" in text and "tanh" in text
    assert graph.op_count == sum(1 for n in graph.graphs[0].graph.nodes if n.op.startswith("call_"))


def test_cell_graph_for():
    dl.manual_seed(3)
    cell = c.LSTMCell(3, 5)
    x, state = dl.randn(2, 3), (dl.randn(2, 5), dl.randn(2, 5))
    graph = cell.graph_for(x, state)
    assert graph.graphs and "mm" in str(graph)



@pytest.mark.parametrize("layer", [c.LSTMLayer, c.ReverseLSTMLayer], ids=["forward", "reverse"])
def test_layer_over_unbound_inputs_compiles_once_for_every_length(layer):
    dl.manual_seed(4)
    rnn = layer(c.LSTMCell, 3, 7)
    lstm = dl.nn.LSTM(3, 7, 1)
    for lstm_param, custom_param in zip(lstm.all_weights[0], rnn.parameters()):
        with dl.no_grad():
            lstm_param.copy_(custom_param)
    before = dl.stats()
    with dl.no_grad():
        for T in (5, 9, 17, 33, 12, 7):
            inp = dl.randn(T, 2, 3)
            state = (dl.randn(2, 7), dl.randn(2, 7))
            out, out_state = rnn(inp, state)
            if layer is c.ReverseLSTMLayer:
                ref, (h, cell) = lstm(inp.flip(0), (state[0].unsqueeze(0), state[1].unsqueeze(0)))
                ref = ref.flip(0)
            else:
                ref, (h, cell) = lstm(inp, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
            assert (out - ref).abs().max() < 1e-5
            assert (out_state[0] - h[0]).abs().max() < 1e-5 and (out_state[1] - cell[0]).abs().max() < 1e-5
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
