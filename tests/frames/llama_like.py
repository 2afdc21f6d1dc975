"""A small llama2-shaped model (rotary embedding sliced to the sequence, causal mask of
(seqlen, seqlen), ``view(bsz, seqlen, heads, head_dim)``) and a makemore-style GRU LM."""
from __future__ import annotations

import math

import dynamo_lite as dl
import dynamo_lite.nn as nn
import dynamo_lite.nn.functional as F


def precompute_freqs(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (dl.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = dl.arange(end).float()
    freqs = dl.outer(t, freqs)
    return dl.cos(freqs), dl.sin(freqs)


def apply_rotary(x, cos, sin):
    # x: (bsz, seqlen, heads, head_dim) as pairs (real, imag) on the last dim
    xr = x.float().reshape(*x.shape[:-1], -1, 2)
    a, b = xr[..., 0], xr[..., 1]
    cos = cos.view(1, cos.shape[0], 1, cos.shape[1])
    sin = sin.view(1, sin.shape[0], 1, sin.shape[1])
    out = dl.stack([a * cos - b * sin, a * sin + b * cos], -1)
    return out.flatten(3).type_as(x)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(dl.ones(dim))

    def forward(self, x):
        return x * dl.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, dim: int, n_heads: int):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary(xq, cos, sin), apply_rotary(xk, cos, sin)
        xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = dl.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = dl.matmul(scores, xv)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class Block(nn.Module):
    def __init__(self, dim: int, n_heads: int):
        super().__init__()
        self.attention = Attention(dim, n_heads)
        self.w1 = nn.Linear(dim, 4 * dim, bias=False)
        self.w2 = nn.Linear(4 * dim, dim, bias=False)
        self.w3 = nn.Linear(dim, 4 * dim, bias=False)
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)

    def forward(self, x, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), cos, sin, mask)
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


class Llama(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 16, n_heads: int = 2, n_layers: int = 2, max_len: int = 128):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([Block(dim, n_heads) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        cos, sin = precompute_freqs(dim // n_heads, max_len)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        cos, sin = self.freqs_cos[:seqlen], self.freqs_sin[:seqlen]
        mask = dl.full((seqlen, seqlen), float("-inf"), device=tokens.device)
        mask = dl.triu(mask, diagonal=1).type_as(h)
        for layer in self.layers:
            h = layer(h, cos, sin, mask)
        return self.output(self.norm(h)).float()


class MakemoreGRU(nn.Module):
    """makemore's RNN language model shape: embedding, a GRU cell looped over ``range(t)``, a head."""

    def __init__(self, vocab: int = 27, n_embd: int = 16, n_hidden: int = 24):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.start = nn.Parameter(dl.zeros(1, n_hidden))
        self.xh_to_z = nn.Linear(n_embd + n_hidden, n_hidden)
        self.xh_to_r = nn.Linear(n_embd + n_hidden, n_hidden)
        self.xh_to_hbar = nn.Linear(n_embd + n_hidden, n_hidden)
        self.lm_head = nn.Linear(n_hidden, vocab)

    def forward(self, idx):
        b, t = idx.size()
        emb = self.wte(idx)
        hprev = self.start.expand((b, -1))
        hiddens = []
        for i in range(t):
            xt = emb[:, i, :]
            xh = dl.cat([xt, hprev], dim=1)
            r = F.sigmoid(self.xh_to_r(xh))
            hprev_reset = r * hprev
            xhr = dl.cat([xt, hprev_reset], dim=1)
            hbar = F.tanh(self.xh_to_hbar(xhr))
            z = F.sigmoid(self.xh_to_z(xh))
            hprev = (1 - z) * hprev + z * hbar
            hiddens.append(hprev)
        hidden = dl.stack(hiddens, 1)
        return self.lm_head(hidden)
