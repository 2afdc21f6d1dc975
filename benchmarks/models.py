"""The model zoo: benchmark workloads written only with the public dynamo_lite API.

``WORKLOADS[name]`` is a :class:`Workload`: ``make()`` builds the model (a
``dl.nn.Module``) or function, ``make_inputs()`` builds its inputs (a tuple of
tensors); both are seeded, so two calls give identical weights and inputs. Each
workload has a hand-written NumPy twin in ``benchmarks/numpy_reference.py``.

Example:
    >>> w = WORKLOADS["mlp"]
    >>> model, inputs = w.make(), w.make_inputs()
    >>> model(*inputs).shape
    dl.Size([64, 10])
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.nn import functional as F

# -- sizes ---------------------------------------------------------------------------
MLP_BATCH, MLP_IN, MLP_HIDDEN, MLP_OUT = 64, 512, 1024, 10
LSTM_BATCH, LSTM_INPUT, LSTM_HIDDEN = 64, 512, 512
POINTWISE_SHAPE = (2048, 2048)  # 4M float32 elements
ATTN_BATCH, ATTN_SEQ, ATTN_D_MODEL, ATTN_HEADS, ATTN_MLP_RATIO = 8, 128, 256, 4, 4
CNN_BATCH, CNN_CHANNELS, CNN_SIZE, CNN_CLASSES = 32, 3, 32, 10
TINY_N = 10

MODEL_SEED = 0
INPUT_SEED = 1


@dataclass(frozen=True)
class Workload:
    """One benchmark workload.

    Attributes:
        name: registry key.
        make: builds the model or function (seeded: same weights on every call).
        make_inputs: builds the tuple of input tensors (seeded).
        description: one line for reports.
        rtol, atol: float32 tolerance against the NumPy reference.
    """

    name: str
    make: Callable
    make_inputs: Callable
    description: str = ""
    rtol: float = 1e-4
    atol: float = 1e-5


# -- models --------------------------------------------------------------------------
def make_mlp() -> nn.Module:
    dl.manual_seed(MODEL_SEED)
    return nn.Sequential(
        nn.Linear(MLP_IN, MLP_HIDDEN),
        nn.GELU(approximate="tanh"),
        nn.Linear(MLP_HIDDEN, MLP_HIDDEN),
        nn.GELU(approximate="tanh"),
        nn.Linear(MLP_HIDDEN, MLP_OUT),
    )


def mlp_inputs():
    dl.manual_seed(INPUT_SEED)
    return (dl.randn(MLP_BATCH, MLP_IN),)


class LSTMCell(nn.Module):
    """One LSTM step written with explicit matmuls: ``forward(x, h, c) -> (h, c)``."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.weight_ih = nn.Parameter(dl.empty(4 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(dl.empty(4 * hidden_size, hidden_size))
        self.bias = nn.Parameter(dl.empty(4 * hidden_size))
        bound = 1.0 / math.sqrt(hidden_size)
        for weight in (self.weight_ih, self.weight_hh, self.bias):
            nn.init.uniform_(weight, -bound, bound)

    def forward(self, x, h, c):
        gates = x.mm(self.weight_ih.t()) + h.mm(self.weight_hh.t()) + self.bias
        i, f, g, o = gates.chunk(4, 1)
        c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h_next = o.sigmoid() * c_next.tanh()
        return h_next, c_next

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


def make_lstm_cell() -> nn.Module:
    dl.manual_seed(MODEL_SEED)
    return LSTMCell(LSTM_INPUT, LSTM_HIDDEN)


def lstm_cell_inputs():
    dl.manual_seed(INPUT_SEED)
    shape_x, shape_h = (LSTM_BATCH, LSTM_INPUT), (LSTM_BATCH, LSTM_HIDDEN)
    return dl.randn(*shape_x), dl.randn(*shape_h), dl.randn(*shape_h)


def pointwise_chain(x, y):
    return ((x * y + 1).sigmoid() * x.tanh() - y).relu()


def make_pointwise_chain():
    return pointwise_chain


def pointwise_chain_inputs():
    dl.manual_seed(INPUT_SEED)
    return dl.randn(*POINTWISE_SHAPE), dl.randn(*POINTWISE_SHAPE)


class AttentionBlock(nn.Module):
    """Pre-LayerNorm transformer block: ``x + attn(ln1(x))`` then ``h + mlp(ln2(h))``."""

    def __init__(self, d_model: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def attention(self, x):
        batch, seq, d_model = x.shape
        qkv = self.qkv(x).view(batch, seq, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        out = F.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, seq, d_model))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


def make_attention_block() -> nn.Module:
    dl.manual_seed(MODEL_SEED)
    return AttentionBlock(ATTN_D_MODEL, ATTN_HEADS, ATTN_MLP_RATIO)


def attention_block_inputs():
    dl.manual_seed(INPUT_SEED)
    return (dl.randn(ATTN_BATCH, ATTN_SEQ, ATTN_D_MODEL),)


class SmallCNN(nn.Module):
    """Two (Conv2d 3x3 + ReLU + MaxPool2d 2) stages, then a Linear classifier."""

    def __init__(self, channels: int = CNN_CHANNELS, size: int = CNN_SIZE, classes: int = CNN_CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(32 * (size // 4) ** 2, classes)

    def forward(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


def make_small_cnn() -> nn.Module:
    dl.manual_seed(MODEL_SEED)
    return SmallCNN()


def small_cnn_inputs():
    dl.manual_seed(INPUT_SEED)
    return (dl.randn(CNN_BATCH, CNN_CHANNELS, CNN_SIZE, CNN_SIZE),)


def make_small_cnn_channels_last() -> nn.Module:
    return make_small_cnn().to(memory_format=dl.channels_last)


def small_cnn_channels_last_inputs():
    (x,) = small_cnn_inputs()
    return (x.contiguous(memory_format=dl.channels_last),)


def tiny_fn(x):
    return x + 1


def make_tiny_fn():
    return tiny_fn


def tiny_fn_inputs():
    dl.manual_seed(INPUT_SEED)
    return (dl.randn(TINY_N),)


WORKLOADS = {
    w.name: w
    for w in (
        Workload("mlp", make_mlp, mlp_inputs, "3-layer MLP 512-1024-1024-10, GELU(tanh), batch 64",
                 rtol=1e-4, atol=1e-4),
        Workload("lstm_cell", make_lstm_cell, lstm_cell_inputs, "LSTM cell, input/hidden 512, batch 64",
                 rtol=1e-4, atol=1e-5),
        Workload("pointwise_chain", make_pointwise_chain, pointwise_chain_inputs,
                 "relu(sigmoid(x*y+1)*tanh(x)-y) on 2048x2048 float32"),
        Workload("attention_block", make_attention_block, attention_block_inputs,
                 "pre-LN transformer block, d_model 256, 4 heads, seq 128, batch 8", rtol=1e-4, atol=1e-4),
        Workload("small_cnn", make_small_cnn, small_cnn_inputs, "2x(Conv2d+ReLU+MaxPool2d)+Linear, 32x3x32x32",
                 rtol=1e-4, atol=1e-4),
        Workload("small_cnn_channels_last", make_small_cnn_channels_last, small_cnn_channels_last_inputs,
                 "small_cnn with channels_last weights and input", rtol=1e-4, atol=1e-4),
        Workload("tiny_fn", make_tiny_fn, tiny_fn_inputs, "x + 1 on 10 elements (call overhead)"),
    )
}
