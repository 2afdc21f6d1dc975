"""Logged values to NumPy: dl tensors (any device, with or without grad), NumPy arrays, Python and NumPy numbers."""
from __future__ import annotations

import numbers

import numpy as np

from ...tensor.tensor import Tensor


def to_numpy(value) -> np.ndarray:
    """A NumPy array holding ``value`` (a number becomes a one-element array, as in torch).

    Raises:
        NotImplementedError: ``value`` is none of the accepted kinds (torch raises the same).
    """
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, Tensor):
        if value.dtype.name == "bfloat16":
            value = value.float()
        return np.array(value.detach().numpy(force=True), copy=True)
    if isinstance(value, (numbers.Number, np.generic)):
        return np.array([value])
    raise NotImplementedError(f"Got {type(value)}, but numpy array or dl tensor are expected.")


def to_scalar(value) -> float:
    """The float of a one-element value.

    Raises:
        AssertionError: ``value`` has more than one element ("scalar should be 0D", as torch).
    """
    array = to_numpy(value)
    if array.squeeze().ndim != 0:
        raise AssertionError("scalar should be 0D")
    return float(array.reshape(()))
