"""nn.functional attention: scaled_dot_product_attention and multi_head_attention_forward.

NOTE: [attention as a composition] Attention is matmul -> scale -> mask -> softmax ->
dropout -> matmul on registry ops, not a fused op: the tracer records the pieces into
the surrounding graph (one graph for a whole transformer), the backends fuse the
pointwise parts, and the derivative comes from the pieces. Masks are built from
factory ops inside the graph, so a compiled causal model needs no host-side mask.
"""
from __future__ import annotations

import math

from ..ops import api as ops
from ..tensor.dtype import bool_

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


def _mask_bias(mask, dtype):
    """An additive bias from an attention mask: bool masks say where attending is *allowed*."""
    if mask.dtype is bool_:
        return ops.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask.logical_not(), float("-inf"))
    return mask


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale=None, enable_gqa: bool = False):
    """``softmax(q @ k^T * scale + mask) @ v`` over the last two dims.

    Args:
        query, key, value: ``(..., L, E)``, ``(..., S, E)``, ``(..., S, Ev)``.
        attn_mask: a bool mask (True = may attend) or an additive float bias,
            broadcastable to ``(..., L, S)``.
        dropout_p: dropout probability applied to the attention weights.
        is_causal: attend only to positions ``<=`` the query's (lower-triangular mask).
        scale: defaults to ``1 / sqrt(E)``.
        enable_gqa: let key/value have fewer heads (dim -3) than query, repeated to match.

    Example:
        >>> q = dl.randn(2, 4, 8, 16)
        >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        dl.Size([2, 4, 8, 16])
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least 2 dimensions")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"Expected query and key to have the same embedding size, but got query.size(-1)="
                           f"{query.shape[-1]} and key.size(-1)={key.shape[-1]}")
    if enable_gqa and key.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        repeats = query.shape[-3] // key.shape[-3]
        key = _repeat_heads(key, repeats)
        value = _repeat_heads(value, repeats)
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.matmul(query, key.transpose(-2, -1)) * factor
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        allowed = ops.ones(length, source, dtype=bool_, device=query.device).tril()
        scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
    elif attn_mask is not None:
        scores = scores + _mask_bias(attn_mask, scores.dtype)
    weights = ops.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, dropout_p, True)
    return ops.matmul(weights, value)


def _repeat_heads(tensor, repeats: int):
    """``(..., H, S, E)`` -> ``(..., H * repeats, S, E)``, each head repeated in place."""
    shape = tuple(tensor.shape)
    expanded = tensor.unsqueeze(-3).expand(shape[:-2] + (repeats,) + shape[-2:])
    return expanded.reshape(shape[:-3] + (shape[-3] * repeats,) + shape[-2:])


def multi_head_attention_forward(query, key, value, num_heads: int, in_proj_weight, in_proj_bias,
                                 out_proj_weight, out_proj_bias, key_padding_mask=None, need_weights: bool = True,
                                 attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False,
                                 dropout_p: float = 0.0, training: bool = True, separate_proj_weights=None):
    """Multi-head attention on batch-first ``(N, L, E)`` inputs (what ``nn.MultiheadAttention`` runs).

    Args:
        in_proj_weight, in_proj_bias: the packed ``(3E, E)`` q/k/v projection (or None
            when ``separate_proj_weights`` = (q_weight, k_weight, v_weight) is given).
        key_padding_mask: ``(N, S)``, True (or -inf) where a key is padding.
        attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``, True (or -inf) where attending
            is *not* allowed, as torch's module API has it.

    Returns:
        ``(output (N, L, E), weights)``: weights ``(N, L, S)`` averaged over heads (or
        ``(N, heads, L, S)``), None unless ``need_weights``.
    """
    batch, length, embed = query.shape
    source = key.shape[1]
    head_dim = embed // num_heads
    if head_dim * num_heads != embed:
        raise AssertionError(f"embed_dim {embed} not divisible by num_heads {num_heads}")
    if separate_proj_weights is None:
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = separate_proj_weights
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    q, k, v = ops.linear(query, w_q, b_q), ops.linear(key, w_k, b_k), ops.linear(value, w_v, b_v)

    def heads(x, size):
        return x.reshape(batch, size, num_heads, head_dim).transpose(1, 2)

    q, k, v = heads(q, length), heads(k, source), heads(v, source)
    # ``is_causal`` is only a hint that ``attn_mask`` is causal: the mask itself is applied.
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint.")
    bias = _combined_bias(attn_mask, key_padding_mask, q.dtype, batch, num_heads, length, source)
    scores = ops.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
    if bias is not None:
        scores = scores + bias
    weights = ops.softmax(scores, -1)
    if dropout_p > 0.0 and training:
        weights = ops.dropout(weights, dropout_p, True)
    output = ops.matmul(weights, v).transpose(1, 2).reshape(batch, length, embed)
    output = ops.linear(output, out_proj_weight, out_proj_bias)
    if not need_weights:
        return output, None
    return output, (weights.mean(1) if average_attn_weights else weights)


def _combined_bias(attn_mask, key_padding_mask, dtype, batch, heads, length, source):
    """One additive ``(N, heads, L, S)``-broadcastable bias from the module-style masks (True = masked)."""
    bias = None
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (length, source):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(length, source)}.")
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (batch * heads, length, source):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(batch * heads, length, source)}.")
            attn_mask = attn_mask.reshape(batch, heads, length, source)
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        bias = _blocked_bias(attn_mask, dtype)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, source):
            raise AssertionError(f"expecting key_padding_mask shape of {(batch, source)}, but got "
                                 f"{key_padding_mask.shape}")
        padding = _blocked_bias(key_padding_mask, dtype).reshape(batch, 1, 1, source)
        bias = padding if bias is None else bias + padding
    return bias


def _blocked_bias(mask, dtype):
    """Additive bias from a module-style mask, where True means *blocked*."""
    if mask.dtype is bool_:
        return ops.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    return mask
