"""nn.utils: gradient clipping (re-exported), padding sequences (``rnn``), and the int-or-pair helper layers share."""
from __future__ import annotations

import numbers

from ..clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401  (dl.nn.utils.*)


def pair(value) -> tuple:
    """``3 -> (3, 3)``; a 2-sequence stays (as a tuple of ints)."""
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(value)
    if len(value) == 1:
        return (int(value[0]), int(value[0]))
    if len(value) != 2:
        raise ValueError(f"expected an int or a pair of ints, got {value!r}")
    return tuple(int(v) for v in value)
from . import rnn  # noqa: E402,F401  (dl.nn.utils.rnn.pad_sequence)
from .weight_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm  # noqa: E402,F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: E402,F401
