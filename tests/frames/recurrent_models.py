"""Recurrent models written as Python loops over time steps (LSTM, GRU), shared by the scan tests."""
from __future__ import annotations

import dynamo_lite as dl
import dynamo_lite.nn as nn


class LoopLSTM(nn.Module):
    """An LSTM layer as a loop over ``range(x.size(0))`` (time-major), the cell inline."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x, h, c):
        outputs = []
        for t in range(x.size(0)):
            gates = self.ih(x[t]) + self.hh(h)
            i, f, g, o = gates.chunk(4, 1)
            c = dl.sigmoid(f) * c + dl.sigmoid(i) * dl.tanh(g)
            h = dl.sigmoid(o) * dl.tanh(c)
            outputs.append(h)
        return dl.stack(outputs), (h, c)


class LoopGRU(nn.Module):
    """A GRU as a loop over ``range(x.size(1))`` (batch-first, ``x[:, t]``), outputs concatenated."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.xz = nn.Linear(input_size, hidden_size)
        self.xr = nn.Linear(input_size, hidden_size)
        self.xh = nn.Linear(input_size, hidden_size)
        self.hz = nn.Linear(hidden_size, hidden_size, bias=False)
        self.hr = nn.Linear(hidden_size, hidden_size, bias=False)
        self.hh = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, x, h):
        hiddens = []
        for t in range(x.size(1)):
            xt = x[:, t, :]
            z = dl.sigmoid(self.xz(xt) + self.hz(h))
            r = dl.sigmoid(self.xr(xt) + self.hr(h))
            hbar = dl.tanh(self.xh(xt) + self.hh(r * h))
            h = (1 - z) * h + z * hbar
            hiddens.append(h.unsqueeze(1))
        return dl.cat(hiddens, 1)
