"""Custom LSTMs written as TorchScript code is written (ScriptModule, @script_method, annotate).

Same shape as PyTorch's ``benchmarks/fastrnns/custom_lstms.py`` (the cells, the layer
kinds, the stacks and their five self-tests against the library LSTM), written for
dynamo_lite: only ``dl`` in place of ``torch``. The self-tests live in test_custom_lstms.py.
"""
from __future__ import annotations

import numbers
import warnings
from collections import namedtuple
from typing import List, Tuple

import dynamo_lite as dl
import dynamo_lite.jit as jit
import dynamo_lite.nn as nn
from dynamo_lite import Tensor
from dynamo_lite.nn import Parameter

LSTMState = namedtuple("LSTMState", ["hx", "cx"])


def script_lstm(input_size, hidden_size, num_layers, bias=True, batch_first=False, dropout=False,
                bidirectional=False):
    """Returns a scripted module that mimics nn.LSTM (no bias-less or batch-first variants)."""
    assert bias and not batch_first
    if bidirectional:
        stack_type, layer_type, dirs = StackedLSTM2, BidirLSTMLayer, 2
    elif dropout:
        stack_type, layer_type, dirs = StackedLSTMWithDropout, LSTMLayer, 1
    else:
        stack_type, layer_type, dirs = StackedLSTM, LSTMLayer, 1
    return stack_type(num_layers, layer_type, first_layer_args=[LSTMCell, input_size, hidden_size],
                      other_layer_args=[LSTMCell, hidden_size * dirs, hidden_size])


def script_lnlstm(input_size, hidden_size, num_layers, bias=True, batch_first=False, dropout=False,
                  bidirectional=False, decompose_layernorm=False):
    """Returns a scripted module that mimics nn.LSTM with layer-normalized cells."""
    assert bias and not batch_first and not dropout
    if bidirectional:
        stack_type, layer_type, dirs = StackedLSTM2, BidirLSTMLayer, 2
    else:
        stack_type, layer_type, dirs = StackedLSTM, LSTMLayer, 1
    return stack_type(num_layers, layer_type,
                      first_layer_args=[LayerNormLSTMCell, input_size, hidden_size, decompose_layernorm],
                      other_layer_args=[LayerNormLSTMCell, hidden_size * dirs, hidden_size, decompose_layernorm])


def reverse(lst: List[Tensor]) -> List[Tensor]:
    return lst[::-1]


class LSTMCell(jit.ScriptModule):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.weight_ih = Parameter(dl.randn(4 * hidden_size, input_size))
        self.weight_hh = Parameter(dl.randn(4 * hidden_size, hidden_size))
        self.bias_ih = Parameter(dl.randn(4 * hidden_size))
        self.bias_hh = Parameter(dl.randn(4 * hidden_size))

    @jit.script_method
    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        hx, cx = state
        gates = (dl.mm(input, self.weight_ih.t()) + self.bias_ih + dl.mm(hx, self.weight_hh.t()) + self.bias_hh)
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)

        ingate = dl.sigmoid(ingate)
        forgetgate = dl.sigmoid(forgetgate)
        cellgate = dl.tanh(cellgate)
        outgate = dl.sigmoid(outgate)

        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * dl.tanh(cy)

        return hy, (hy, cy)


class LayerNorm(jit.ScriptModule):
    def __init__(self, normalized_shape):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        normalized_shape = dl.Size(normalized_shape)

        # one normalized dim: the cells normalize their gate vectors only
        assert len(normalized_shape) == 1

        self.weight = Parameter(dl.ones(normalized_shape))
        self.bias = Parameter(dl.zeros(normalized_shape))
        self.normalized_shape = normalized_shape

    @jit.script_method
    def compute_layernorm_stats(self, input):
        mu = input.mean(-1, keepdim=True)
        sigma = input.std(-1, keepdim=True, unbiased=False)
        return mu, sigma

    @jit.script_method
    def forward(self, input):
        mu, sigma = self.compute_layernorm_stats(input)
        return (input - mu) / sigma * self.weight + self.bias


class LayerNormLSTMCell(jit.ScriptModule):
    def __init__(self, input_size, hidden_size, decompose_layernorm=False):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.weight_ih = Parameter(dl.randn(4 * hidden_size, input_size))
        self.weight_hh = Parameter(dl.randn(4 * hidden_size, hidden_size))
        # the gate biases come from the layer norms

        if decompose_layernorm:
            ln = LayerNorm
        else:
            ln = nn.LayerNorm

        self.layernorm_i = ln(4 * hidden_size)
        self.layernorm_h = ln(4 * hidden_size)
        self.layernorm_c = ln(hidden_size)

    @jit.script_method
    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        hx, cx = state
        igates = self.layernorm_i(dl.mm(input, self.weight_ih.t()))
        hgates = self.layernorm_h(dl.mm(hx, self.weight_hh.t()))
        gates = igates + hgates
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)

        ingate = dl.sigmoid(ingate)
        forgetgate = dl.sigmoid(forgetgate)
        cellgate = dl.tanh(cellgate)
        outgate = dl.sigmoid(outgate)

        cy = self.layernorm_c((forgetgate * cx) + (ingate * cellgate))
        hy = outgate * dl.tanh(cy)

        return hy, (hy, cy)


class LSTMLayer(jit.ScriptModule):
    def __init__(self, cell, *cell_args):
        super().__init__()
        self.cell = cell(*cell_args)

    @jit.script_method
    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        inputs = input.unbind(0)
        outputs = jit.annotate(List[Tensor], [])
        for i in range(len(inputs)):
            out, state = self.cell(inputs[i], state)
            outputs += [out]
        return dl.stack(outputs), state


class ReverseLSTMLayer(jit.ScriptModule):
    def __init__(self, cell, *cell_args):
        super().__init__()
        self.cell = cell(*cell_args)

    @jit.script_method
    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        inputs = reverse(input.unbind(0))
        outputs = jit.annotate(List[Tensor], [])
        for i in range(len(inputs)):
            out, state = self.cell(inputs[i], state)
            outputs += [out]
        return dl.stack(reverse(outputs)), state


class BidirLSTMLayer(jit.ScriptModule):
    __constants__ = ["directions"]

    def __init__(self, cell, *cell_args):
        super().__init__()
        self.directions = nn.ModuleList([LSTMLayer(cell, *cell_args), ReverseLSTMLayer(cell, *cell_args)])

    @jit.script_method
    def forward(self, input: Tensor, states: List[Tuple[Tensor, Tensor]]) -> Tuple[Tensor, List[Tuple[Tensor, Tensor]]]:
        # one state per direction: forward, then reversed
        outputs = jit.annotate(List[Tensor], [])
        output_states = jit.annotate(List[Tuple[Tensor, Tensor]], [])
        # an explicit counter, as TorchScript code writes it instead of enumerate
        i = 0
        for direction in self.directions:
            state = states[i]
            out, out_state = direction(input, state)
            outputs += [out]
            output_states += [out_state]
            i += 1
        return dl.cat(outputs, -1), output_states


def init_stacked_lstm(num_layers, layer, first_layer_args, other_layer_args):
    layers = [layer(*first_layer_args)] + [layer(*other_layer_args) for _ in range(num_layers - 1)]
    return nn.ModuleList(layers)


class StackedLSTM(jit.ScriptModule):
    __constants__ = ["layers"]  # TorchScript iterates a ModuleList only when it is a constant

    def __init__(self, num_layers, layer, first_layer_args, other_layer_args):
        super().__init__()
        self.layers = init_stacked_lstm(num_layers, layer, first_layer_args, other_layer_args)

    @jit.script_method
    def forward(self, input: Tensor, states: List[Tuple[Tensor, Tensor]]) -> Tuple[Tensor, List[Tuple[Tensor, Tensor]]]:
        # one state per layer
        output_states = jit.annotate(List[Tuple[Tensor, Tensor]], [])
        output = input
        # an explicit counter, as TorchScript code writes it instead of enumerate
        i = 0
        for rnn_layer in self.layers:
            state = states[i]
            output, out_state = rnn_layer(output, state)
            output_states += [out_state]
            i += 1
        return output, output_states


# StackedLSTM for bidirectional layers: a list of per-direction states per layer (a separate
# class: script methods are not overridden in TorchScript-style code).
class StackedLSTM2(jit.ScriptModule):
    __constants__ = ["layers"]  # TorchScript iterates a ModuleList only when it is a constant

    def __init__(self, num_layers, layer, first_layer_args, other_layer_args):
        super().__init__()
        self.layers = init_stacked_lstm(num_layers, layer, first_layer_args, other_layer_args)

    @jit.script_method
    def forward(self, input: Tensor, states: List[List[Tuple[Tensor, Tensor]]]
                ) -> Tuple[Tensor, List[List[Tuple[Tensor, Tensor]]]]:
        # per layer, a list of per-direction states
        output_states = jit.annotate(List[List[Tuple[Tensor, Tensor]]], [])
        output = input
        # an explicit counter, as TorchScript code writes it instead of enumerate
        i = 0
        for rnn_layer in self.layers:
            state = states[i]
            output, out_state = rnn_layer(output, state)
            output_states += [out_state]
            i += 1
        return output, output_states


class StackedLSTMWithDropout(jit.ScriptModule):
    # constants: the layer list is iterated and the layer count decides where dropout goes
    __constants__ = ["layers", "num_layers"]

    def __init__(self, num_layers, layer, first_layer_args, other_layer_args):
        super().__init__()
        self.layers = init_stacked_lstm(num_layers, layer, first_layer_args, other_layer_args)
        # dropout (p=0.4) between layers, not after the last one
        self.num_layers = num_layers

        if num_layers == 1:
            warnings.warn("dropout lstm adds dropout layers after all but last recurrent layer, it expects "
                          "num_layers greater than 1, but got num_layers = 1")

        self.dropout_layer = nn.Dropout(0.4)

    @jit.script_method
    def forward(self, input: Tensor, states: List[Tuple[Tensor, Tensor]]) -> Tuple[Tensor, List[Tuple[Tensor, Tensor]]]:
        # one state per layer
        output_states = jit.annotate(List[Tuple[Tensor, Tensor]], [])
        output = input
        # an explicit counter, as TorchScript code writes it instead of enumerate
        i = 0
        for rnn_layer in self.layers:
            state = states[i]
            output, out_state = rnn_layer(output, state)
            # between layers only
            if i < self.num_layers - 1:
                output = self.dropout_layer(output)
            output_states += [out_state]
            i += 1
        return output, output_states


def flatten_states(states):
    states = list(zip(*states))
    assert len(states) == 2
    return [dl.stack(state) for state in states]


def double_flatten_states(states):
    states = flatten_states([flatten_states(inner) for inner in states])
    return [hidden.view([-1] + list(hidden.shape[2:])) for hidden in states]


def test_script_rnn_layer(seq_len, batch, input_size, hidden_size):
    inp = dl.randn(seq_len, batch, input_size)
    state = LSTMState(dl.randn(batch, hidden_size), dl.randn(batch, hidden_size))
    rnn = LSTMLayer(LSTMCell, input_size, hidden_size)
    out, out_state = rnn(inp, state)

    # Control: the library's LSTM
    lstm = nn.LSTM(input_size, hidden_size, 1)
    lstm_state = LSTMState(state.hx.unsqueeze(0), state.cx.unsqueeze(0))
    for lstm_param, custom_param in zip(lstm.all_weights[0], rnn.parameters()):
        assert lstm_param.shape == custom_param.shape
        with dl.no_grad():
            lstm_param.copy_(custom_param)
    lstm_out, lstm_out_state = lstm(inp, lstm_state)

    assert (out - lstm_out).abs().max() < 1e-5
    assert (out_state[0] - lstm_out_state[0]).abs().max() < 1e-5
    assert (out_state[1] - lstm_out_state[1]).abs().max() < 1e-5


def test_script_stacked_rnn(seq_len, batch, input_size, hidden_size, num_layers):
    inp = dl.randn(seq_len, batch, input_size)
    states = [LSTMState(dl.randn(batch, hidden_size), dl.randn(batch, hidden_size)) for _ in range(num_layers)]
    rnn = script_lstm(input_size, hidden_size, num_layers)
    out, out_state = rnn(inp, states)
    custom_state = flatten_states(out_state)

    # Control: the library's LSTM
    lstm = nn.LSTM(input_size, hidden_size, num_layers)
    lstm_state = flatten_states(states)
    for layer in range(num_layers):
        custom_params = list(rnn.parameters())[4 * layer: 4 * (layer + 1)]
        for lstm_param, custom_param in zip(lstm.all_weights[layer], custom_params):
            assert lstm_param.shape == custom_param.shape
            with dl.no_grad():
                lstm_param.copy_(custom_param)
    lstm_out, lstm_out_state = lstm(inp, lstm_state)

    assert (out - lstm_out).abs().max() < 1e-5
    assert (custom_state[0] - lstm_out_state[0]).abs().max() < 1e-5
    assert (custom_state[1] - lstm_out_state[1]).abs().max() < 1e-5


def test_script_stacked_bidir_rnn(seq_len, batch, input_size, hidden_size, num_layers):
    inp = dl.randn(seq_len, batch, input_size)
    states = [[LSTMState(dl.randn(batch, hidden_size), dl.randn(batch, hidden_size)) for _ in range(2)]
              for _ in range(num_layers)]
    rnn = script_lstm(input_size, hidden_size, num_layers, bidirectional=True)
    out, out_state = rnn(inp, states)
    custom_state = double_flatten_states(out_state)

    # Control: the library's LSTM
    lstm = nn.LSTM(input_size, hidden_size, num_layers, bidirectional=True)
    lstm_state = double_flatten_states(states)
    for layer in range(num_layers):
        for direct in range(2):
            index = 2 * layer + direct
            custom_params = list(rnn.parameters())[4 * index: 4 * index + 4]
            for lstm_param, custom_param in zip(lstm.all_weights[index], custom_params):
                assert lstm_param.shape == custom_param.shape
                with dl.no_grad():
                    lstm_param.copy_(custom_param)
    lstm_out, lstm_out_state = lstm(inp, lstm_state)

    assert (out - lstm_out).abs().max() < 1e-5
    assert (custom_state[0] - lstm_out_state[0]).abs().max() < 1e-5
    assert (custom_state[1] - lstm_out_state[1]).abs().max() < 1e-5


def test_script_stacked_lstm_dropout(seq_len, batch, input_size, hidden_size, num_layers):
    inp = dl.randn(seq_len, batch, input_size)
    states = [LSTMState(dl.randn(batch, hidden_size), dl.randn(batch, hidden_size)) for _ in range(num_layers)]
    rnn = script_lstm(input_size, hidden_size, num_layers, dropout=True)

    # runs and keeps the shapes (no control to compare against)
    out, out_state = rnn(inp, states)


def test_script_stacked_lnlstm(seq_len, batch, input_size, hidden_size, num_layers):
    inp = dl.randn(seq_len, batch, input_size)
    states = [LSTMState(dl.randn(batch, hidden_size), dl.randn(batch, hidden_size)) for _ in range(num_layers)]
    rnn = script_lnlstm(input_size, hidden_size, num_layers)

    # runs and keeps the shapes (no control to compare against)
    out, out_state = rnn(inp, states)


def run_self_tests():
    """The five self-tests, as the upstream file's ``__main__`` runs them."""
    test_script_rnn_layer(5, 2, 3, 7)
    test_script_stacked_rnn(5, 2, 3, 7, 4)
    test_script_stacked_bidir_rnn(5, 2, 3, 7, 4)
    test_script_stacked_lstm_dropout(5, 2, 3, 7, 4)
    test_script_stacked_lnlstm(5, 2, 3, 7, 4)


if __name__ == "__main__":
    run_self_tests()
