"""nn.functional padding: F.pad (constant mode on constant_pad_nd; reflect, replicate and circular as a
gather of each padded dim).

NOTE: [padding as index_select] Every non-constant mode maps an output position ``i`` in
``[-left, size + right)`` to a source position in ``[0, size)``: reflect folds at the
edges, replicate clamps, circular wraps. Selecting those positions with ``index_select``
(dim by dim) gives the padded tensor and, through ``index_select``'s derivative, the
gradient (a position read twice accumulates). Negative pads crop, as torch's do (circular
padding wraps around the cropped dim).
"""
from __future__ import annotations

from ...ops.core import api as ops


__all__ = ["pad"]

#: mode -> the source position of each output position ``i`` (a tensor) in a dim of ``size`` elements.
SOURCE_POSITIONS = {
    "reflect": lambda i, size: (size - 1) - ops.abs((size - 1) - ops.abs(i)),
    "replicate": lambda i, size: ops.clamp(i, 0, size - 1),
    "circular": lambda i, size: ops.remainder(i, size),
}

#: padding length -> the input ranks a non-constant mode accepts.
_SUPPORTED_RANKS = {2: (2, 3), 4: (3, 4), 6: (4, 5)}


def _check(input, pad, mode: str) -> None:
    if mode not in SOURCE_POSITIONS:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if input.dim() not in _SUPPORTED_RANKS.get(len(pad), ()):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        left, right, size = pad[2 * k], pad[2 * k + 1], input.shape[dim]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")


def pad_by_index(input, pad, mode: str):
    """``input`` padded in ``mode`` (reflect, replicate or circular; see NOTE: [padding as index_select]).

    Args:
        pad: ``(left_last, right_last, left_2nd_last, ...)``, 2, 4 or 6 numbers.

    Example:
        >>> pad_by_index(dl.tensor([[1.0, 2.0, 3.0]]), (2, 1), "reflect").tolist()
        [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    pad = tuple(pad)
    _check(input, pad, mode)
    rule = SOURCE_POSITIONS[mode]
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        left, right, size = pad[2 * k], pad[2 * k + 1], input.shape[dim]
        if mode == "circular":  # a circular pad wraps around what is left after the crops
            input = input.narrow(dim, max(-left, 0), size - max(-left, 0) - max(-right, 0))
            left, right, size = max(left, 0), max(right, 0), input.shape[dim]
        positions = ops.arange(-left, size + right, device=input.device)
        input = input.index_select(dim, rule(positions, size))
    return input


def pad(input, pad, mode: str = "constant", value=None):
    """Pad trailing dims: ``pad = (left_last, right_last, left_2nd_last, ...)``; ``mode`` is
    ``"constant"`` (with ``value``), ``"reflect"``, ``"replicate"`` or ``"circular"``.

    Example:
        >>> F.pad(dl.ones(1, 2), (1, 1)).tolist()
        [[0.0, 1.0, 1.0, 0.0]]
    """
    if mode != "constant":
        return pad_by_index(input, pad, mode)
    return ops.constant_pad_nd(input, pad, 0 if value is None else value)
