"""PyTorch versions of the zoo workloads (the optional peer of ``benchmarks.run``).

``TORCH_WORKLOADS[name](params, *inputs)`` computes what the zoo model does, with the
model's ``state_dict()`` as torch tensors in ``params``; ``to_torch`` converts the
parameters and inputs (channels_last inputs stay channels_last). Importing this module
needs ``torch``; ``benchmarks.run`` skips the peer when it is not installed.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def mlp(p, x):
    h = F.gelu(F.linear(x, p["0.weight"], p["0.bias"]), approximate="tanh")
    h = F.gelu(F.linear(h, p["2.weight"], p["2.bias"]), approximate="tanh")
    return F.linear(h, p["4.weight"], p["4.bias"])


def lstm_cell(p, x, h, c):
    gates = x.mm(p["weight_ih"].t()) + h.mm(p["weight_hh"].t()) + p["bias"]
    i, f, g, o = gates.chunk(4, 1)
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_next.tanh(), c_next


def pointwise_chain(p, x, y):
    return ((x * y + 1).sigmoid() * x.tanh() - y).relu()


def attention_block(p, x, heads: int = 4):
    batch, seq, d_model = x.shape
    head_dim = d_model // heads
    h = F.layer_norm(x, (d_model,), p["ln1.weight"], p["ln1.bias"])
    qkv = F.linear(h, p["qkv.weight"], p["qkv.bias"]).view(batch, seq, 3, heads, head_dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
    attn = F.softmax(scores, dim=-1) @ v
    x = x + F.linear(attn.transpose(1, 2).reshape(batch, seq, d_model), p["proj.weight"], p["proj.bias"])
    h = F.layer_norm(x, (d_model,), p["ln2.weight"], p["ln2.bias"])
    return x + F.linear(F.gelu(F.linear(h, p["fc1.weight"], p["fc1.bias"])), p["fc2.weight"], p["fc2.bias"])


def small_cnn(p, x):
    x = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=1)), 2)
    x = F.max_pool2d(F.relu(F.conv2d(x, p["conv2.weight"], p["conv2.bias"], padding=1)), 2)
    return F.linear(x.flatten(1), p["fc.weight"], p["fc.bias"])


def gpt(p, idx, n_head: int = 4):
    batch, seq = idx.shape
    x = F.embedding(idx, p["transformer.wte.weight"]) + p["transformer.wpe.weight"][:seq]
    n_embd = x.shape[-1]
    layer = 0
    while f"transformer.h.{layer}.ln_1.weight" in p:
        prefix = f"transformer.h.{layer}."
        b = {name[len(prefix):]: value for name, value in p.items() if name.startswith(prefix)}
        h = F.layer_norm(x, (n_embd,), b["ln_1.weight"], b["ln_1.bias"])
        q, k, v = (t.view(batch, seq, n_head, -1).transpose(1, 2)
                   for t in F.linear(h, b["attn.c_attn.weight"], b["attn.c_attn.bias"]).split(n_embd, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(batch, seq, n_embd)
        x = x + F.linear(y, b["attn.c_proj.weight"], b["attn.c_proj.bias"])
        h = F.layer_norm(x, (n_embd,), b["ln_2.weight"], b["ln_2.bias"])
        x = x + F.linear(F.gelu(F.linear(h, b["mlp.c_fc.weight"], b["mlp.c_fc.bias"])),
                         b["mlp.c_proj.weight"], b["mlp.c_proj.bias"])
        layer += 1
    x = F.layer_norm(x, (n_embd,), p["transformer.ln_f.weight"], p["transformer.ln_f.bias"])
    return F.linear(x, p["lm_head.weight"]), None


def tiny_fn(p, x):
    return x + 1


TORCH_WORKLOADS = {
    "mlp": mlp,
    "lstm_cell": lstm_cell,
    "pointwise_chain": pointwise_chain,
    "attention_block": attention_block,
    "small_cnn": small_cnn,
    "small_cnn_channels_last": small_cnn,
    "gpt": gpt,
    "tiny_fn": tiny_fn,
}


def _tensor(array):
    """A torch tensor with the array's values and strides (so channels_last stays channels_last)."""
    strides = tuple(s // array.itemsize for s in array.strides)
    out = torch.empty_strided(array.shape, strides, dtype=getattr(torch, array.dtype.name))
    out.copy_(torch.from_numpy(array.copy()))
    return out


def to_torch(params: dict, inputs: list):
    """``(params, inputs)`` as torch tensors with the same values and layouts."""
    return {k: _tensor(v) for k, v in params.items()}, [_tensor(x) for x in inputs]


def versions() -> dict:
    return {"torch": torch.__version__, "torch_threads": torch.get_num_threads()}
