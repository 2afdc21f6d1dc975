"""embedding_bag: sums, means or maxima of bags of embedding rows, bags given by offsets."""
from __future__ import annotations

import numpy as np

from ...tensor.dtype import int32, int64
from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["embedding_bag"]

MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag_meta(weight, indices, offsets, mode, per_sample_weights=None, include_last_offset=False,
                       padding_idx=-1):
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t._dtype not in (int32, int64):
            raise RuntimeError(
                f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: Long, Int; "
                f"but got {mr.TYPE_NAMES[t._dtype]} tensor instead (while checking arguments for embedding_bag)"
            )
    if len(indices._sizes) != 1 or len(offsets._sizes) != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {len(indices._sizes)}")
    if len(weight._sizes) != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {len(weight._sizes)}")
    if per_sample_weights is not None:
        if mode != MODES["sum"]:
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                "mode='sum' (got mode='%s'). Please open a feature request on GitHub." % next(
                    k for k, v in MODES.items() if v == mode)
            )
        if per_sample_weights._sizes != indices._sizes:
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights._sizes)}) is not None, then it "
                f"must have the same shape as the input ({list(indices._sizes)})"
            )
    bags = offsets._sizes[0] - (1 if include_last_offset else 0)
    devices = [t for t in (weight, indices, offsets, per_sample_weights) if t is not None]
    return mr.make_meta((max(bags, 0), weight._sizes[1]), weight._dtype, None, mr.common_device(devices))


def embedding_bag_kernel(xp, weight, indices, offsets, mode, per_sample_weights=None, include_last_offset=False,
                         padding_idx=-1, *, out):
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= weight.shape[0]):
        raise IndexError("index out of range in self")
    bounds = [int(v) for v in offsets.tolist()]
    if not include_last_offset:
        bounds.append(indices.shape[0])
    if bounds and bounds[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {bounds[0]}")
    if any(later < earlier for earlier, later in zip(bounds, bounds[1:])):
        raise RuntimeError("offsets must be monotonically non-decreasing")
    compute = np.float32 if weight.dtype == np.float16 else weight.dtype
    rows = weight[indices].astype(compute, copy=False)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.astype(compute, copy=False)[:, None]
    keep = indices != padding_idx if padding_idx >= 0 else xp.ones(indices.shape, dtype=bool)
    for bag, (start, end) in enumerate(zip(bounds, bounds[1:])):
        chosen = rows[start:end][keep[start:end]]
        if chosen.shape[0] == 0:
            out[bag] = 0
        elif mode == MODES["max"]:
            out[bag] = chosen.max(axis=0)
        elif mode == MODES["mean"]:
            out[bag] = chosen.sum(axis=0) / chosen.shape[0]
        else:
            out[bag] = chosen.sum(axis=0)
    return out


OPS = {"embedding_bag": register_op("embedding_bag", meta=embedding_bag_meta, kernel=embedding_bag_kernel)}


def embedding_bag(weight, indices, offsets, mode="mean", per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Reduce bags of rows of ``weight``: bag ``i`` is ``indices[offsets[i]:offsets[i+1]]``.

    Args:
        mode: ``"sum"``, ``"mean"`` or ``"max"``; an empty bag gives zeros.
        per_sample_weights: scales each looked-up row (``"sum"`` only).
        include_last_offset: ``offsets`` has one more entry, the end of the last bag.
        padding_idx: rows with this index are left out (and not counted by the mean).

    Example:
        >>> dl.embedding_bag(dl.eye(3), dl.tensor([0, 1, 2]), dl.tensor([0, 2]), "sum").tolist()
        [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    if mode not in MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    pad = -1 if padding_idx is None else padding_idx % weight.shape[0]
    return OPS["embedding_bag"](weight, indices, offsets, MODES[mode], per_sample_weights, include_last_offset, pad)


METHODS: dict = {}
