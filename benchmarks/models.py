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
GPT_VOCAB, GPT_BLOCK, GPT_EMBD, GPT_HEADS, GPT_LAYERS, GPT_BATCH = 65, 32, 64, 4, 2, 4
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


# -- GPT (the nanoGPT shape) ------------------------------------------------------
class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where position ``t`` sees positions ``<= t`` (a ``tril`` mask buffer)."""

    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0):
        super().__init__()
        self.n_head = n_head
        self.n_embd = n_embd
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("mask", dl.tril(dl.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        batch, seq, channels = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        head_dim = channels // self.n_head
        q = q.view(batch, seq, self.n_head, head_dim).transpose(1, 2)
        k = k.view(batch, seq, self.n_head, head_dim).transpose(1, 2)
        v = v.view(batch, seq, self.n_head, head_dim).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
        att = att.masked_fill(self.mask[:, :, :seq, :seq] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(batch, seq, channels)
        return self.resid_dropout(self.c_proj(y))


class GPTMLP(nn.Module):
    """The GPT feed-forward: Linear to 4x width, GELU, Linear back."""

    def __init__(self, n_embd: int, dropout: float = 0.0):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class GPTBlock(nn.Module):
    """Pre-LayerNorm transformer block: ``x + attn(ln_1(x))`` then ``x + mlp(ln_2(x))``."""

    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = GPTMLP(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A nanoGPT-shaped language model: ``forward(idx, targets=None) -> (logits, loss)``.

    Token + position embeddings, ``n_layer`` causal blocks, a final LayerNorm and an LM
    head whose weight is tied to the token embedding. ``logits`` covers every position
    (``(batch, seq, vocab)``); ``loss`` is ``F.cross_entropy`` over them when ``targets``
    (``(batch, seq)`` token ids) is given, else None.

    Example:
        >>> model = GPT(vocab_size=65, block_size=32, n_embd=64, n_head=4, n_layer=2)
        >>> logits, loss = model(dl.randint(0, 65, (2, 8)))
        >>> logits.shape, loss
        (dl.Size([2, 8, 65]), None)
    """

    def __init__(self, vocab_size: int, block_size: int, n_embd: int, n_head: int, n_layer: int,
                 dropout: float = 0.0):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([GPTBlock(n_embd, n_head, block_size, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying, as in GPT-2

    def forward(self, idx, targets=None):
        batch, seq = idx.size()
        if seq > self.block_size:
            raise ValueError(f"cannot forward a sequence of length {seq}, block size is only {self.block_size}")
        pos = dl.arange(0, seq, dtype=dl.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def make_gpt() -> nn.Module:
    dl.manual_seed(MODEL_SEED)
    return GPT(GPT_VOCAB, GPT_BLOCK, GPT_EMBD, GPT_HEADS, GPT_LAYERS)


def gpt_inputs():
    dl.manual_seed(INPUT_SEED)
    return (dl.randint(0, GPT_VOCAB, (GPT_BATCH, GPT_BLOCK)),)


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
        Workload("gpt", make_gpt, gpt_inputs,
                 "nanoGPT-shaped LM: vocab 65, block 32, n_embd 64, 4 heads, 2 layers, batch 4",
                 rtol=1e-4, atol=1e-4),
        Workload("tiny_fn", make_tiny_fn, tiny_fn_inputs, "x + 1 on 10 elements (call overhead)"),
    )
}
