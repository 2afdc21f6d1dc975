"""MultiheadAttention: torch's module (packed in_proj, out_proj, batch_first, masks, need_weights)."""
from __future__ import annotations

import math

from ...ops.core import api as ops
from ..functional.attention import batch_first_attention
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import Linear


def xavier_uniform(tensor):
    """U(-b, b) with b = sqrt(6 / (fan_in + fan_out)) (Glorot), as torch initializes attention weights."""
    fan_in, fan_out = init.calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return init.uniform_(tensor, -bound, bound)


class MultiheadAttention(Module):
    """Attention from ``query`` to ``key``/``value`` with ``num_heads`` heads of ``embed_dim // num_heads``.

    Parameters as torch names them: ``in_proj_weight`` ``(3E, E)`` and ``in_proj_bias``
    (or ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when ``kdim``/``vdim`` differ
    from ``embed_dim``), and ``out_proj`` (a Linear).

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None)``. Inputs are
    ``(L, N, E)``, ``(N, L, E)`` with ``batch_first``, or unbatched ``(L, E)``. Masks say
    where attending is *not* allowed (True or ``-inf``).

    Example:
        >>> mha = dl.nn.MultiheadAttention(16, 4, batch_first=True)
        >>> x = dl.randn(2, 5, 16)
        >>> out, weights = mha(x, x, x)
        >>> out.shape, weights.shape
        (dl.Size([2, 5, 16]), dl.Size([2, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention(add_bias_kv=..., add_zero_attn=...) is not supported")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        factory = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ops.empty((3 * embed_dim, embed_dim), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(ops.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(ops.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(ops.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ops.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **factory)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight"):
            weight = getattr(self, name)
            if weight is not None:
                xavier_uniform(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        unbatched = query.dim() == 2
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                                 "query tensor")
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got "
                                 f"{query.shape[-1]}")
        separate = None if self._qkv_same_embed_dim else (self.q_proj_weight, self.k_proj_weight,
                                                          self.v_proj_weight)
        output, weights = batch_first_attention(
            query, key, value, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
            self.out_proj.bias, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal,
            self.dropout if self.training else 0.0, separate)
        if unbatched:
            output = output.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        elif not self.batch_first:
            output = output.transpose(0, 1)
        return output, weights
