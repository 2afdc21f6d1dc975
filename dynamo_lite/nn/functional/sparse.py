"""nn.functional lookups: embedding, embedding_bag and one_hot."""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.dtype import int64

__all__ = ["embedding", "one_hot", "embedding_bag"]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx=None):
    """Sum/mean/max of bags of embedding rows: each row of a 2-D ``input`` is a bag, or ``offsets``
    split a 1-D ``input``.

    Example:
        >>> F.embedding_bag(dl.tensor([[0, 1], [2, 2]]), dl.eye(3), mode="sum").tolist()
        [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    if max_norm is not None:
        raise NotImplementedError("embedding_bag(max_norm=...) is not supported")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        offsets = ops.arange(0, bags * length, length, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    return ops.embedding_bag(weight, input, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of ``weight`` selected by the integer tensor ``input``: shape ``input.shape + (dim,)``.

    Example:
        >>> F.embedding(dl.tensor([0, 2]), dl.randn(3, 4)).shape
        dl.Size([2, 4])
    """
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) is not supported")
    if padding_idx is None:
        padding_idx = -1
    else:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % rows
    return ops.embedding(weight, input, padding_idx)


def one_hot(tensor, num_classes: int = -1):
    """``int64`` one-hot encoding along a new last dim of size ``num_classes``.

    ``num_classes=-1`` infers ``tensor.max() + 1``, which reads data (a graph break
    when compiled); pass it explicitly in hot code.

    Example:
        >>> F.one_hot(dl.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    if tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    classes = ops.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(int64)
