"""nn.functional attention: scaled_dot_product_attention and multi_head_attention_forward.

NOTE: [attention as a composition] Attention is matmul -> scale -> mask -> softmax ->
dropout -> matmul on registry ops, not a fused op: the tracer records the pieces into
the surrounding graph (one graph for a whole transformer), the backends fuse the
pointwise parts, and the derivative comes from the pieces. Masks are built from
factory ops inside the graph, so a compiled causal model needs no host-side mask.
"""
from __future__ import annotations

import math

from ...ops.core import api as ops
from ...tensor.dtype import bool_

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


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight, out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None, use_separate_proj_weight: bool = False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention with torch's functional signature: inputs ``(L, N, E)`` or unbatched ``(L, E)``.

    Masks say where attending is *not* allowed (True or ``-inf``): ``key_padding_mask``
    ``(N, S)``, ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)``. ``is_causal`` is
    only a hint that ``attn_mask`` is causal (the mask is what is applied).

    Returns:
        ``(output, weights)``: weights ``(N, L, S)`` averaged over heads (or
        ``(N, heads, L, S)``), None unless ``need_weights``.

    Example:
        >>> x, w = dl.randn(5, 2, 8), dl.randn(24, 8)
        >>> F.multi_head_attention_forward(x, x, x, 8, 2, w, None, None, None, False, 0.0,
        ...                                dl.randn(8, 8), None)[0].shape
        dl.Size([5, 2, 8])
    """
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: bias_k/bias_v, add_zero_attn and static_k/static_v "
                                  "are not supported")
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                             f"{query.shape[-1]}")
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    output, weights = batch_first_attention(
        query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), num_heads, in_proj_weight, in_proj_bias,
        out_proj_weight, out_proj_bias, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal,
        dropout_p if training else 0.0, separate)
    output = output.transpose(0, 1)
    if unbatched:
        return output.squeeze(1), None if weights is None else weights.squeeze(0)
    return output, weights


def batch_first_attention(query, key, value, num_heads: int, in_proj_weight, in_proj_bias, out_proj_weight,
                          out_proj_bias, key_padding_mask, need_weights: bool, attn_mask, average_attn_weights: bool,
                          is_causal: bool, dropout_p: float, separate_proj_weights=None):
    """Multi-head attention on batch-first ``(N, L, E)`` inputs (what ``nn.MultiheadAttention`` runs);
    arguments as in ``multi_head_attention_forward``, ``dropout_p`` already 0 when not training."""
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
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint.")
    bias = _combined_bias(attn_mask, key_padding_mask, q.dtype, batch, num_heads, length, source)
    scores = ops.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
    if bias is not None:
        scores = scores + bias
    weights = ops.softmax(scores, -1)
    if dropout_p > 0.0:
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
