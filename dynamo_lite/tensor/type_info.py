"""Numeric limits of dtypes: ``dl.finfo`` (floating) and ``dl.iinfo`` (integer), as torch reports them."""
from __future__ import annotations

import numpy as np

from .dtype import REAL_OF, as_dtype, bfloat16, get_default_dtype


class finfo:
    """Limits of a floating dtype (the default dtype when none is given).

    Attributes: ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``),
    ``resolution``, ``dtype`` (its name).

    Example:
        >>> dl.finfo(dl.float16).max
        65504.0
    """

    def __init__(self, type=None):
        dt = get_default_dtype() if type is None else as_dtype(type)
        if not (dt.is_floating_point or dt.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        self.bits = dt.itemsize * 8
        if dt is bfloat16:  # float32's exponent range with 8 significant bits
            self.eps, self.max, self.tiny, self.resolution = 2.0**-7, (2 - 2.0**-7) * 2.0**127, 2.0**-126, 0.01
            self.min = -self.max
        else:
            info = np.finfo(REAL_OF.get(dt, dt).numpy)  # a complex type has the limits of its parts
            self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
            self.tiny, self.resolution = float(info.smallest_normal), 10.0 ** -info.precision
        self.smallest_normal = self.tiny
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``bits``, ``min``, ``max``, ``dtype``.

    Example:
        >>> dl.iinfo(dl.int8).min
        -128
    """

    def __init__(self, type):
        dt = as_dtype(type)
        if dt.is_floating_point or dt.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if dt.numpy.kind == "b":
            raise TypeError(f"{dt!r} is not supported by torch.iinfo")
        info = np.iinfo(dt.numpy)
        self.bits = info.bits
        self.min = int(info.min)
        self.max = int(info.max)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
