"""Hand-written NumPy versions of the model-zoo workloads (test oracle and speed baseline).

Each workload ``name`` has ``REFERENCES[name](params, *inputs)``: ``params`` maps the
model's ``state_dict()`` keys to NumPy arrays (``{}`` for plain functions), ``inputs``
are the workload's inputs as NumPy arrays; it returns what the model returns, as arrays.
The building blocks (conv2d, max_pool2d, layer_norm, gelu ...) are general enough to
serve as oracles for the layers' tests too. Nothing here imports dynamo_lite.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def as_arrays(model, inputs) -> tuple:
    """``(params, input_arrays)`` for ``REFERENCES[name](params, *input_arrays)``.

    ``model`` is a workload's module (its ``state_dict()`` gives the parameters) or plain
    function (no parameters); arrays share memory with the tensors (no copy).
    """
    params = {k: v.numpy() for k, v in model.state_dict().items()} if hasattr(model, "state_dict") else {}
    return params, [x.numpy() for x in inputs]


# -- building blocks -----------------------------------------------------------------
def linear(x, weight, bias=None):
    y = x @ weight.T
    return y if bias is None else y + bias


def relu(x):
    return np.maximum(x, 0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def erf(x):
    """erf to ~1e-7 absolute (Abramowitz & Stegun 7.1.26); NumPy has none built in."""
    x = np.asarray(x)
    sign = np.sign(x)
    a = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(x.dtype)


def gelu(x, approximate: str = "none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def softmax(x, axis: int = -1):
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def log_softmax(x, axis: int = -1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def layer_norm(x, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(x.dtype)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _windows(x, kernel, stride, dilation):
    """(N, C, OH, OW, kh, kw) strided windows of an NCHW array (no copy)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = sliding_window_view(x, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """NCHW cross-correlation (any stride/padding/dilation/groups), via im2col + tensordot."""
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    ph, pw = padding
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out_c, in_per_group, kh, kw = weight.shape
    win = _windows(x, (kh, kw), stride, dilation)  # N, C, OH, OW, kh, kw
    if groups == 1:  # im2col with output rows contiguous: one batched GEMM per image
        n, c, oh, ow = win.shape[:4]
        cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
        y = (weight.reshape(out_c, -1) @ cols).reshape(n, out_c, oh, ow)
        if bias is not None:
            y += bias[None, :, None, None]
        return y.astype(x.dtype, copy=False)
    outs = []
    per_out = out_c // groups
    for g in range(groups):
        wg = weight[g * per_out:(g + 1) * per_out]
        xg = win[:, g * in_per_group:(g + 1) * in_per_group]
        outs.append(np.einsum("nchwij,ocij->nohw", xg, wg, optimize=True))
    y = np.concatenate(outs, axis=1)
    if bias is not None:
        y = y + bias[None, :, None, None]
    return y.astype(x.dtype)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    """Max over each window as a running maximum of kh*kw strided slices (no window copy)."""
    (kh, kw) = kernel = _pair(kernel_size)
    sh, sw = kernel if stride is None else _pair(stride)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf) if ph or pw else x
    oh = (x.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[3] - (kw - 1) * dw - 1) // sw + 1
    out = None
    for i in range(kh):
        for j in range(kw):
            part = x[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw]
            out = part.copy() if out is None else np.maximum(out, part, out=out)
    return out


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    ph, pw = _pair(padding)
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    return _windows(x, kernel, stride, (1, 1)).mean(axis=(4, 5)).astype(x.dtype)


# -- workloads -----------------------------------------------------------------------
def mlp(params, x):
    h = gelu(linear(x, params["0.weight"], params["0.bias"]), "tanh")
    h = gelu(linear(h, params["2.weight"], params["2.bias"]), "tanh")
    return linear(h, params["4.weight"], params["4.bias"])


def lstm_cell(params, x, h, c):
    gates = x @ params["weight_ih"].T + h @ params["weight_hh"].T + params["bias"]
    i, f, g, o = np.split(gates, 4, axis=1)
    c_next = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h_next = sigmoid(o) * np.tanh(c_next)
    return h_next, c_next


def pointwise_chain(params, x, y):
    return relu(sigmoid(x * y + 1) * np.tanh(x) - y)


def attention_block(params, x, heads: int = 4):
    p = params
    batch, seq, d_model = x.shape
    head_dim = d_model // heads
    h = layer_norm(x, (d_model,), p["ln1.weight"], p["ln1.bias"])
    qkv = linear(h, p["qkv.weight"], p["qkv.bias"]).reshape(batch, seq, 3, heads, head_dim)
    q, k, v = qkv.transpose(2, 0, 3, 1, 4)
    scores = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(head_dim))
    attn = softmax(scores, axis=-1) @ v
    attn = attn.transpose(0, 2, 1, 3).reshape(batch, seq, d_model)
    x = x + linear(attn, p["proj.weight"], p["proj.bias"])
    h = layer_norm(x, (d_model,), p["ln2.weight"], p["ln2.bias"])
    h = linear(gelu(linear(h, p["fc1.weight"], p["fc1.bias"])), p["fc2.weight"], p["fc2.bias"])
    return x + h


def small_cnn(params, x):
    p = params
    h = max_pool2d(relu(conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=1)), 2)
    h = max_pool2d(relu(conv2d(h, p["conv2.weight"], p["conv2.bias"], padding=1)), 2)
    return linear(h.reshape(h.shape[0], -1), p["fc.weight"], p["fc.bias"])


def gpt(params, idx, n_head: int = 4):
    """The GPT workload's logits (every position) and ``None`` for the loss."""
    p = params
    batch, seq = idx.shape
    x = p["transformer.wte.weight"][idx] + p["transformer.wpe.weight"][np.arange(seq)]
    n_embd = x.shape[-1]
    head_dim = n_embd // n_head
    causal = np.tril(np.ones((seq, seq), dtype=bool))
    layer = 0
    while f"transformer.h.{layer}.ln_1.weight" in p:
        block = {name[len(f"transformer.h.{layer}."):]: value for name, value in p.items()
                 if name.startswith(f"transformer.h.{layer}.")}
        h = layer_norm(x, (n_embd,), block["ln_1.weight"], block["ln_1.bias"])
        qkv = linear(h, block["attn.c_attn.weight"], block["attn.c_attn.bias"])
        q, k, v = (a.reshape(batch, seq, n_head, head_dim).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=-1))
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(head_dim))
        scores = np.where(causal, scores, np.float32(-np.inf))
        y = (softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, n_embd)
        x = x + linear(y, block["attn.c_proj.weight"], block["attn.c_proj.bias"])
        h = layer_norm(x, (n_embd,), block["ln_2.weight"], block["ln_2.bias"])
        x = x + linear(gelu(linear(h, block["mlp.c_fc.weight"], block["mlp.c_fc.bias"])),
                       block["mlp.c_proj.weight"], block["mlp.c_proj.bias"])
        layer += 1
    x = layer_norm(x, (n_embd,), p["transformer.ln_f.weight"], p["transformer.ln_f.bias"])
    return linear(x, p["lm_head.weight"]), None


def tiny_fn(params, x):
    return x + 1


REFERENCES = {
    "mlp": mlp,
    "lstm_cell": lstm_cell,
    "pointwise_chain": pointwise_chain,
    "attention_block": attention_block,
    "small_cnn": small_cnn,
    "small_cnn_channels_last": small_cnn,
    "gpt": gpt,
    "tiny_fn": tiny_fn,
}
