"""Multi-layer recurrent layers: RNN, LSTM and GRU (batch_first, bidirectional, dropout between layers).

Parameters carry torch's names (``weight_ih_l0``, ``bias_hh_l1_reverse`` ...) and shapes
(gates stacked i, f, g, o for LSTM and r, z, n for GRU), so a torch ``state_dict`` loads.
A dense input's time loop is one scan for every length (NOTE: [loops traced once]); a packed
sequence's loop, whose steps shrink, is unrolled (NOTE: [recurrent layers unrolled by the tracer]).
"""
from __future__ import annotations

from ...ops.core import api as ops
from .. import functional as F
from ..module import Module
from ..parameter import Parameter
from ..utils.packed import PackedSequence
from .rnn_cells import GATES, STEPS, reset_uniform


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: parameters per layer and direction, the layer loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        if proj_size:
            raise NotImplementedError("LSTM(proj_size=...) is not supported")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = GATES[mode] * hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                for name, shape in shapes.items():
                    setattr(self, name + suffix, Parameter(ops.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_uniform(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """A no-op kept for torch code (weights are never packed into one buffer here)."""

    @property
    def all_weights(self) -> list:
        """Per layer and direction, the list of its parameters (weights then biases)."""
        per = 4 if self.bias else 2
        weights = [getattr(self, name) for name in self._flat_weights_names]
        return [weights[i:i + per] for i in range(0, len(weights), per)]

    def _layer_parameters(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        return (getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix),
                getattr(self, "bias_ih" + suffix) if self.bias else None,
                getattr(self, "bias_hh" + suffix) if self.bias else None)

    def _check_input(self, input) -> bool:
        """Validate the input; True when it is unbatched (2-D)."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")
        return input.dim() == 2

    def _check_hidden(self, hidden, expected: tuple, unbatched: bool, what: str = "hidden") -> None:
        if unbatched and hidden.dim() != 2:
            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hidden.dim()}-D tensor")
        if not unbatched and hidden.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hidden.dim()}-D tensor")
        shape = tuple(hidden.shape) if not unbatched else (hidden.shape[0], 1, hidden.shape[1])
        if shape != expected:
            shown = list(hidden.shape)
            wanted = expected if not unbatched else (expected[0], expected[2])
            raise RuntimeError(f"Expected {what} size {wanted}, got {shown}")

    def _initial_state(self, input, hx, unbatched: bool):
        """Per layer*direction states, batched: hidden tensors (or (h, c) pairs for LSTM)."""
        directions = 2 if self.bidirectional else 1
        batch = input.shape[1]
        expected = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            zeros = ops.zeros(expected, dtype=input.dtype, device=input.device)
            return (zeros, zeros) if self.mode == "LSTM" else zeros
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM expects hx to be a tuple (h_0, c_0)")
            self._check_hidden(hx[0], expected, unbatched, "hidden[0]")
            self._check_hidden(hx[1], expected, unbatched, "hidden[1]")
            return tuple(h.unsqueeze(1) for h in hx) if unbatched else tuple(hx)
        self._check_hidden(hx, expected, unbatched)
        return hx.unsqueeze(1) if unbatched else hx

    def _run_direction(self, data, batch_sizes: list, state, layer: int, direction: int):
        """Run one layer in one direction over time-major rows ``data`` (``batch_sizes[t]`` rows at step
        ``t``, never growing: the packed layout); returns (output rows, final state). A row that ends
        early keeps its state from then on, so the final state is each sequence's own last step (and
        in reverse, each sequence starts from the initial state at its own last step)."""
        weight_ih, weight_hh, bias_ih, bias_hh = self._layer_parameters(layer, direction)
        projected = ops.linear(data, weight_ih, bias_ih)  # all time steps at once
        step = STEPS[self.mode]
        starts = [0]
        for rows in batch_sizes:
            starts.append(starts[-1] + rows)
        steps = range(len(batch_sizes) - 1, -1, -1) if direction else range(len(batch_sizes))
        outputs = [None] * len(batch_sizes)
        for t in steps:
            rows = batch_sizes[t]
            new = step(projected[starts[t]:starts[t + 1]], _state_rows(state, rows), weight_hh, bias_hh)
            outputs[t] = new[0] if self.mode == "LSTM" else new
            state = _merge_rows(new, state, rows)
        return ops.cat(outputs, 0), state

    def _run_sequence(self, data, batch_sizes, state, layer: int, direction: int):
        """Run one layer in one direction over a dense time-major ``(T, N, H_in)`` input (every
        sequence full length); returns (``(T, N, H_out)`` outputs, final state). The loop walks
        ``unbind(0)`` of the projected input and stacks the per-step outputs after it, so the
        tracer makes it one scan for every length (NOTE: [loops traced once])."""
        weight_ih, weight_hh, bias_ih, bias_hh = self._layer_parameters(layer, direction)
        projected = ops.linear(data, weight_ih, bias_ih)  # all time steps at once
        step, lstm = STEPS[self.mode], self.mode == "LSTM"
        steps = projected.unbind(0)
        if direction:
            steps = steps[::-1]
        outputs = []
        for projected_t in steps:
            state = step(projected_t, state, weight_hh, bias_hh)
            outputs.append(state[0] if lstm else state)
        if direction:
            outputs = outputs[::-1]
        return ops.stack(outputs, 0), state

    def _run_layers(self, data, batch_sizes, initial):
        """All layers and directions over time-major rows (``batch_sizes`` a list: packed rows) or a
        dense ``(T, N, H_in)`` input (``batch_sizes`` None); returns (outputs, stacked final states)."""
        directions = 2 if self.bidirectional else 1
        run = self._run_direction if batch_sizes is not None else self._run_sequence
        finals = []
        for layer in range(self.num_layers):
            results = []
            for direction in range(directions):
                index = layer * directions + direction
                state = (initial[0][index], initial[1][index]) if self.mode == "LSTM" else initial[index]
                outputs, final = run(data, batch_sizes, state, layer, direction)
                results.append(outputs)
                finals.append(final)
            data = results[0] if directions == 1 else ops.cat(results, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, True)
        if self.mode == "LSTM":
            return data, (ops.stack([f[0] for f in finals], 0), ops.stack([f[1] for f in finals], 0))
        return data, ops.stack(finals, 0)

    def _forward_packed(self, input: PackedSequence, hx):
        """The layers over a PackedSequence: states in the caller's batch order, rows in the packed order."""
        batch_sizes = input.batch_sizes.tolist()
        if input.data.dim() != 2 or input.data.shape[-1] != self.input_size:
            self._check_input(input.data.unsqueeze(0))
        sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
        reorder = _reorder_state if sorted_indices is not None else (lambda state, _: state)
        template = ops.empty((1, batch_sizes[0], 0), dtype=input.data.dtype, device=input.data.device)
        initial = reorder(self._initial_state(template, hx, False), sorted_indices)
        data, hidden = self._run_layers(input.data, batch_sizes, initial)
        return PackedSequence(data, input.batch_sizes, sorted_indices, unsorted_indices), reorder(
            hidden, unsorted_indices)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        unbatched = self._check_input(input)
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        initial = self._initial_state(input, hx, unbatched)
        output, hidden = self._run_layers(input, None, initial)
        if unbatched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if self.mode == "LSTM" else hidden.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, hidden

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


def _state_rows(state, rows: int):
    """The first ``rows`` batch rows of a state (a tensor, or LSTM's (h, c))."""
    if isinstance(state, tuple):
        return tuple(_state_rows(part, rows) for part in state)
    return state if rows == state.shape[0] else state[:rows]


def _merge_rows(new, state, rows: int):
    """``new`` for the first ``rows`` batch rows, ``state`` kept for the rows whose sequence has ended."""
    if isinstance(state, tuple):
        return tuple(_merge_rows(n, s, rows) for n, s in zip(new, state))
    return new if rows == state.shape[0] else ops.cat([new, state[rows:]], 0)


def _reorder_state(state, order):
    """Initial or final states (``(layers*directions, batch, H)``, or LSTM's pair) with the batch permuted."""
    if isinstance(state, tuple):
        return tuple(part.index_select(1, order) for part in state)
    return state.index_select(1, order)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (or relu), stacked ``num_layers`` deep.

    ``forward(input, h_0=None) -> (output, h_n)``: input ``(L, N, H_in)`` (``(N, L, H_in)``
    with ``batch_first``, or unbatched ``(L, H_in)``), ``h_0`` ``(D * num_layers, N, H)``.

    Example:
        >>> rnn = dl.nn.RNN(10, 20, 2)
        >>> output, h_n = rnn(dl.randn(5, 3, 10))
        >>> output.shape, h_n.shape
        (dl.Size([5, 3, 20]), dl.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory, stacked ``num_layers`` deep.

    ``forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))``; shapes as for RNN.

    Example:
        >>> lstm = dl.nn.LSTM(10, 20, num_layers=2, batch_first=True)
        >>> output, (h_n, c_n) = lstm(dl.randn(3, 5, 10))
        >>> output.shape, c_n.shape
        (dl.Size([3, 5, 20]), dl.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit, stacked ``num_layers`` deep; shapes as for RNN.

    Example:
        >>> gru = dl.nn.GRU(10, 20, bidirectional=True)
        >>> output, h_n = gru(dl.randn(5, 3, 10))
        >>> output.shape, h_n.shape
        (dl.Size([5, 3, 40]), dl.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)
