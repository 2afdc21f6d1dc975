"""dl.return_types: the named-tuple result types of ops such as max, sort, topk and linalg.svd.

Each type is the one its op returns (``type(dl.max(x, 0)) is dl.return_types.max``); its
fields are reachable by name or position. The types are registered under this module, so
results pickle and unpickle by reference, as torch.return_types' do.

Example:
    >>> result = dl.sort(dl.tensor([3, 1, 2]))
    >>> isinstance(result, dl.return_types.sort), result.indices.tolist()
    (True, [1, 2, 0])
"""
from __future__ import annotations

from .linalg_decompositions import (
    EighResult, LegacySVDResult, LstsqResult, QRResult, SlogdetResult, SVDResult,
)
from .ops.pointwise.float_functions import FrexpResult
from .ops.reductions.order_stats import KthvalueResult, MedianResult, NanmedianResult
from .ops.reductions.reductions import max_result, min_result
from .ops.reductions.scans_and_stats import AminmaxResult, CummaxResult, CumminResult
from .ops.reductions.sorting import SortResult, TopkResult

_TYPES = {
    "max": max_result, "min": min_result, "sort": SortResult, "topk": TopkResult,
    "kthvalue": KthvalueResult, "median": MedianResult, "nanmedian": NanmedianResult,
    "aminmax": AminmaxResult, "cummax": CummaxResult, "cummin": CumminResult, "frexp": FrexpResult,
    "svd": LegacySVDResult, "linalg_svd": SVDResult, "linalg_eigh": EighResult, "linalg_qr": QRResult,
    "linalg_slogdet": SlogdetResult, "linalg_lstsq": LstsqResult,
}

for _name, _cls in _TYPES.items():
    _cls.__module__ = __name__
    _cls.__name__ = _cls.__qualname__ = _name
    globals()[_name] = _cls

__all__ = sorted(_TYPES)
