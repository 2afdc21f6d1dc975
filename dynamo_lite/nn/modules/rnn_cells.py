"""One time step of the recurrent layers (RNN, LSTM, GRU) and the RNNCell/LSTMCell/GRUCell modules.

NOTE: [recurrent layers unrolled by the tracer] A recurrent layer is a Python loop over
time steps, each step a few matmuls and pointwise ops; gradients come from the registered
ops without a bespoke recurrent op and its derivative. The input-to-hidden products of all
steps are computed up front as one matmul; only the hidden-to-hidden product stays inside
the loop. Over a dense input the loop walks ``unbind(0)`` of those products with a
fixed-shape state and stacks the outputs after it, so the tracer makes it one scan node
for every sequence length (NOTE: [loops traced once]); over a PackedSequence the steps
shrink as sequences end, so that loop is unrolled (a fixed length, a new graph per length).
"""
from __future__ import annotations

import math

from ...ops.core import api as ops
from .. import init
from ..module import Module
from ..parameter import Parameter

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def rnn_tanh_step(projected_input, state, weight_hh, bias_hh):
    """``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (the input part precomputed)."""
    return ops.tanh(projected_input + ops.linear(state, weight_hh, bias_hh))


def rnn_relu_step(projected_input, state, weight_hh, bias_hh):
    """``h' = relu(W_ih x + b_ih + W_hh h + b_hh)``."""
    return ops.relu(projected_input + ops.linear(state, weight_hh, bias_hh))


def lstm_step(projected_input, state, weight_hh, bias_hh):
    """One LSTM step on ``state = (h, c)``: gates i, f, g, o in torch's order; returns ``(h', c')``."""
    hidden, cell = state
    gates = projected_input + ops.linear(hidden, weight_hh, bias_hh)
    in_gate, forget_gate, cell_gate, out_gate = gates.chunk(4, -1)
    cell = ops.sigmoid(forget_gate) * cell + ops.sigmoid(in_gate) * ops.tanh(cell_gate)
    return ops.sigmoid(out_gate) * ops.tanh(cell), cell


def gru_step(projected_input, state, weight_hh, bias_hh):
    """One GRU step: reset r, update z, new n gates in torch's order; returns ``h'``."""
    input_r, input_z, input_n = projected_input.chunk(3, -1)
    hidden_r, hidden_z, hidden_n = ops.linear(state, weight_hh, bias_hh).chunk(3, -1)
    reset = ops.sigmoid(input_r + hidden_r)
    update = ops.sigmoid(input_z + hidden_z)
    new = ops.tanh(input_n + reset * hidden_n)
    return (1 - update) * new + update * state


STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step, "GRU": gru_step}


def reset_uniform(module, hidden_size: int) -> None:
    """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch initializes them."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


class _CellBase(Module):
    """A single recurrent cell: ``weight_ih``, ``weight_hh`` (and biases) for one step."""

    mode = ""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = GATES[self.mode] * hidden_size
        self.weight_ih = Parameter(ops.empty((gate_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(ops.empty((gate_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ops.empty(gate_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(ops.empty(gate_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_uniform(self, self.hidden_size)

    def _prepare(self, input, hx):
        """(batched input, batched state or zeros, whether the input was unbatched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        return input, unbatched

    def _check_state(self, input, state: tuple) -> None:
        """Each state tensor (h, or h and c) must be (batch, hidden_size), as torch checks them."""
        for i, hidden in enumerate(state):
            if hidden.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{hidden.shape[0]}")
            if hidden.shape[-1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {hidden.shape[-1]}, expected "
                                   f"{self.hidden_size}")

    def _zeros(self, input):
        return ops.zeros((input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device)

    def _step(self, input, state):
        projected = ops.linear(input, self.weight_ih, self.bias_ih)
        return STEPS[self.mode](projected, state, self.weight_hh, self.bias_hh)

    def forward(self, input, hx=None):
        """One step with a single state tensor (RNNCell, GRUCell; LSTMCell overrides)."""
        input, unbatched = self._prepare(input, hx)
        state = self._zeros(input) if hx is None else (hx.unsqueeze(0) if unbatched else hx)
        self._check_state(input, (state,))
        output = self._step(input, state)
        return output.squeeze(0) if unbatched else output

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        return text if self.bias else text + ", bias=False"


class RNNCell(_CellBase):
    """An Elman cell: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu).

    Example:
        >>> cell = dl.nn.RNNCell(4, 8)
        >>> cell(dl.randn(3, 4)).shape
        dl.Size([3, 8])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype)


class LSTMCell(_CellBase):
    """One LSTM step: ``(h', c') = cell(x, (h, c))``; zero state when ``hx`` is None.

    Example:
        >>> cell = dl.nn.LSTMCell(4, 8)
        >>> h, c = cell(dl.randn(3, 4))
        >>> h.shape, c.shape
        (dl.Size([3, 8]), dl.Size([3, 8]))
    """

    mode = "LSTM"

    def forward(self, input, hx=None):
        input, unbatched = self._prepare(input, hx)
        if hx is None:
            state = (self._zeros(input), self._zeros(input))
        else:
            state = tuple(h.unsqueeze(0) for h in hx) if unbatched else tuple(hx)
            self._check_state(input, state)
        hidden, cell = self._step(input, state)
        return (hidden.squeeze(0), cell.squeeze(0)) if unbatched else (hidden, cell)


class GRUCell(_CellBase):
    """One GRU step: ``h' = cell(x, h)``; zero state when ``hx`` is None.

    Example:
        >>> dl.nn.GRUCell(4, 8)(dl.randn(3, 4)).shape
        dl.Size([3, 8])
    """

    mode = "GRU"
